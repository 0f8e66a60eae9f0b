import { describe, expect, it } from 'vitest';
import { LoopGuard } from '../src/background/loop-guard.js';

describe('redirect-loop guard', () => {
  it('gives up on a host after three HTTPS→HTTP downgrades in one request chain', () => {
    const guard = new LoopGuard();
    const hop = () => {
      // The upgrade itself (http → https) never counts.
      expect(guard.noteRedirect('7', 'http://loop.test/', 'https://loop.test/')).toBeNull();
      return guard.noteRedirect('7', 'https://loop.test/', 'http://loop.test/');
    };
    expect(hop()).toBeNull();
    expect(hop()).toBeNull();
    expect(guard.isUrlBlocked('http://loop.test/a')).toBe(false);
    expect(hop()).toBe('loop.test');
    expect(guard.isUrlBlocked('http://loop.test/a')).toBe(true);
    expect(guard.isHostBlocked('.loop.test')).toBe(true);
    // Reported once; the allow rule is already in place.
    expect(hop()).toBeNull();
    expect(guard.blockedHosts()).toEqual(['loop.test']);
  });

  it('counts per request and per host, and forgets finished chains', () => {
    const guard = new LoopGuard(2);
    expect(guard.noteRedirect('1', 'https://a.test/', 'http://a.test/')).toBeNull();
    expect(guard.noteRedirect('2', 'https://a.test/', 'http://a.test/')).toBeNull();
    expect(guard.noteRedirect('1', 'https://b.test/', 'http://b.test/')).toBeNull();
    guard.finish('1');
    expect(guard.noteRedirect('1', 'https://a.test/', 'http://a.test/')).toBeNull();
    expect(guard.noteRedirect('2', 'https://a.test/', 'http://a.test/')).toBe('a.test');
    expect(guard.isUrlBlocked('http://b.test/')).toBe(false);
  });

  it('restores hosts recorded earlier in the session and clears them on request', () => {
    const guard = new LoopGuard();
    guard.restore(['x.test']);
    expect(guard.isUrlBlocked('http://x.test:8080/')).toBe(true);
    guard.clear();
    expect(guard.blockedHosts()).toEqual([]);
  });
});
