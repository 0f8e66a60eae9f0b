import { describe, expect, it } from 'vitest';
import { ExclusionIndex } from '../src/match/exclusion-index.js';
import { prepareTest } from '../src/regex/prepared-pattern.js';
import { loadRulesets } from '../src/node/index.js';
import { corpusRulesDir } from './support/corpus.js';

/** The reference: an exclusion list excludes a URL when any of its regexes matches. */
function excludedByRegexes(regexes: readonly RegExp[], url: string): boolean {
  return regexes.some((re) => re.test(url));
}

function indexExcludes(index: ExclusionIndex, url: string): boolean {
  return index.literalMatch(url) || index.others.some((p) => new RegExp(p.source).test(url));
}

/** URLs around each exclusion's strings: the string, cut short, extended, and after another's. */
function probes(patterns: string[]): string[] {
  const out = new Set<string>();
  for (const source of patterns) {
    for (const text of prepareTest(source).texts ?? []) {
      // '~' sorts after every longer string that starts with this one: the search must walk back.
      for (const tail of ['', 'x', '/', '/a/b', '?q', 'favicon.ico', 'wp-content/x', '~', '/~'])
        out.add(text + tail);
      out.add(text.slice(0, -1));
      out.add(text.replace('http://', 'http://www.'));
    }
  }
  return [...out];
}

describe('exclusion index (rulesets with many exclusions)', () => {
  const { rulesets } = loadRulesets([corpusRulesDir()]);

  it('excludes exactly what trying every exclusion regex excludes, on every corpus ruleset with 8 or more', () => {
    const many = rulesets.filter((rs) => rs.exclusions.length >= 8);
    expect(many.length).toBeGreaterThan(10);
    expect(many.some((rs) => rs.name === 'JS.org')).toBe(true);
    let compared = 0;
    let excluded = 0;
    const wrong: string[] = [];
    for (const rs of many) {
      const sources = rs.exclusions.map((e) => e.pattern);
      const index = new ExclusionIndex(sources.map(prepareTest));
      const regexes = sources.map((s) => new RegExp(s));
      for (const url of probes(sources)) {
        compared++;
        const expected = excludedByRegexes(regexes, url);
        if (expected) excluded++;
        if (indexExcludes(index, url) !== expected && wrong.length < 20)
          wrong.push(`${rs.name}: ${url}: expected ${expected}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(excluded).toBeGreaterThan(compared / 10);
    expect(excluded).toBeLessThan(compared);
  });

  it('finds a string behind longer ones that sort between it and the URL', () => {
    // "http://a.com/" starts the URL, but "http://a.com/b/x" and "http://a.com/b" sort after it
    // and before the URL: the search must walk back to it through their parents.
    const sources = [
      '^http://a\\.com/b/x',
      '^http://a\\.com/b$',
      '^http://a\\.com/(?!c)',
      '^http://a\\.com/bz',
      '^http://z\\.com/',
    ];
    const index = new ExclusionIndex(sources.map(prepareTest));
    const regexes = sources.map((s) => new RegExp(s));
    for (const url of [
      'http://a.com/b/y',
      'http://a.com/b',
      'http://a.com/c',
      'http://a.com/cd',
      'http://a.com/bz9',
      'http://a.com/',
      'http://z.com/q',
      'http://y.com/',
    ]) {
      expect(indexExcludes(index, url), url).toBe(excludedByRegexes(regexes, url));
    }
    expect(index.literalMatch('http://a.com/b/y')).toBe(true);
    expect(index.literalMatch('http://a.com/c')).toBe(false);
  });
});
