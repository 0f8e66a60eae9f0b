import { describe, expect, it } from 'vitest';
import { hostPatterns, hostShape } from '../src/dnr/host-labels.js';

describe('hostShape: what a rule regex says about the hosts it matches', () => {
  it('counts the labels and reads the literal suffix of a delimited host', () => {
    expect(hostShape('^http://(?:[\\w-]+\\.)?ace\\.example\\.com/')).toEqual({
      min: 3,
      max: 4,
      suffix: 'ace.example.com',
      delimited: true,
      https: false,
    });
    expect(hostShape('^http://(\\w+)\\.example\\.com/+')).toEqual({
      min: 3,
      max: 3,
      suffix: '.example.com',
      delimited: true,
      https: false,
    });
    expect(hostShape('^https?://(www\\.)?example\\.com:8080/')).toEqual({
      min: 2,
      max: 3,
      suffix: 'example.com',
      delimited: true,
      https: true,
    });
    // A lookahead consumes nothing; what it rules out only narrows the real range.
    expect(hostShape('^http://(?!auth\\.)(\\w+)\\.example\\.com/')).toMatchObject({
      min: 3,
      max: 3,
    });
    expect(hostShape('^http://([^/:@]+)?\\.example\\.de/')).toEqual({
      min: 3,
      max: Infinity,
      suffix: '.example.de',
      delimited: true,
      https: false,
    });
  });

  it('keeps only the upper bound when a piece could match past the host', () => {
    // `.` and `\S` may match "/": the real host is a prefix of what they match.
    expect(hostShape('^http://s3.amazonaws.com/x')).toEqual({
      min: 0,
      max: 3,
      suffix: '',
      delimited: false,
      https: false,
    });
    expect(hostShape('^http://\\S+\\.example\\.com/')).toEqual({
      min: 0,
      max: Infinity,
      suffix: '',
      delimited: false,
      https: false,
    });
  });

  it('knows nothing of unanchored regexes, other schemes or hosts without an end', () => {
    expect(hostShape('http://open\\.example\\.com/special/')).toBeNull();
    expect(hostShape('^https://secure\\.example\\.com/')).toBeNull();
    expect(hostShape('^http://example\\.com')).toBeNull();
    expect(hostShape('^http://(\\w+)\\1\\.example\\.com/')).toBeNull();
  });
});

describe('hostPatterns: the hosts a rule regex can match, label by label', () => {
  it('spells out the finite part and leaves class-made labels open', () => {
    expect(hostPatterns('^http://(?:www\\.)?google\\.((?:com?\\.)?[a-z]{2,3})/')?.sort()).toEqual([
      'google.*',
      'google.co.*',
      'google.com.*',
      'www.google.*',
      'www.google.co.*',
      'www.google.com.*',
    ]);
    // A label partly made of a class is open as a whole.
    expect(hostPatterns('^http://(m|lh\\d)\\.example\\.com/x')?.sort()).toEqual([
      '*.example.com',
      'm.example.com',
    ]);
    expect(hostPatterns('^http://(www\\.)?a+\\.com/')?.sort()).toEqual(['*.com', 'www.*.com']);
  });

  it('gives up on any number of labels and on pieces that could leave the host', () => {
    expect(hostPatterns('^http://(\\w+\\.)*example\\.com/')).toBeNull();
    expect(hostPatterns('^http://files\\.([^.]+)\\.example\\.com/')).toBeNull();
    expect(hostPatterns('^http://example\\.com')).toBeNull();
  });
});
