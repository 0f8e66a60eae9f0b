import { describe, expect, it } from 'vitest';
import {
  casesMatch,
  Form,
  type PreparedPattern,
  prepareLiteralRule,
  prepareRule,
  prepareTest,
  rewriteLiteral,
} from '../src/regex/prepared-pattern.js';
import { loadRulesets } from '../src/node/index.js';
import { corpusRulesDir } from './support/corpus.js';

/** What the reference does with a rule: `url.replace(new RegExp(from), to)`, null when unchanged. */
function regexRewrite(from: string, to: string, input: string): string | null {
  const out = input.replace(new RegExp(from), to);
  return out === input ? null : out;
}

/**
 * Inputs around every boundary of a finite pattern: each string itself, cut short, extended,
 * followed by runs of its run's characters, by each lookahead alternative (whole, cut short,
 * extended, after such runs), and in another case.
 */
function probes(p: PreparedPattern): string[] {
  const out = new Set<string>();
  const runs = ['', '/', '//', '///'];
  for (const c of p.run?.chars ?? '') runs.push(c, c + c, c + c + c, `a${c}`, `${c}a${c}`);
  const tails = ['a', '?x', '#f', 'A/b.c', '$', 'ab?cd/e', 'x//y']
    .flatMap((t) => runs.map((r) => r + t))
    .concat(runs);
  for (const look of p.lookahead?.texts ?? [])
    for (const r of runs)
      tails.push(r + look, r + look.slice(0, -1), `${r}${look}z`, `${r}${look}/`);
  for (const text of p.texts ?? [p.prefix]) {
    for (const tail of tails) out.add(text + tail);
    out.add(text.slice(0, -1));
    out.add(text.toUpperCase());
  }
  return [...out];
}

describe('rules and exclusions without a regex (finite languages)', () => {
  const { rulesets } = loadRulesets([corpusRulesDir()]);

  it('rewrite exactly as RegExp replace does, for every corpus rule that qualifies', () => {
    let prepared = 0;
    let compared = 0;
    let changed = 0;
    const wrong: string[] = [];
    for (const rs of rulesets) {
      for (const rule of rs.rules) {
        const p = prepareRule(rule.from, rule.to);
        if (p.form !== Form.Cases) continue;
        prepared++;
        for (const input of probes(p)) {
          compared++;
          const expected = regexRewrite(rule.from, rule.to, input);
          const got = rewriteLiteral(p, input);
          if (expected !== null) changed++;
          if (got !== expected && wrong.length < 20)
            wrong.push(
              `${rs.name}: ${rule.from} -> ${rule.to} on ${input}: expected ${expected}, got ${got}`,
            );
        }
      }
    }
    expect(wrong).toEqual([]);
    // Most corpus rules are finite languages; the probes must really reach the rewriting side.
    expect(prepared).toBeGreaterThan(10_000);
    expect(changed).toBeGreaterThan(compared / 20);
  });

  it('match exactly as RegExp test does, for every corpus exclusion and securecookie pattern that qualifies', () => {
    let prepared = 0;
    let matched = 0;
    const wrong: string[] = [];
    const patterns = rulesets.flatMap((rs) => [
      ...rs.exclusions.map((e) => e.pattern),
      ...rs.secureCookies.flatMap((c) => [c.host, c.name]),
    ]);
    for (const source of patterns) {
      const p = prepareTest(source);
      if (p.form !== Form.Cases) continue;
      prepared++;
      const re = new RegExp(source);
      for (const input of probes(p)) {
        const expected = re.test(input);
        if (expected) matched++;
        if (casesMatch(p, input) !== expected && wrong.length < 20)
          wrong.push(`${source} on ${input}: expected ${expected}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(prepared).toBeGreaterThan(1_000);
    expect(matched).toBeGreaterThan(prepared);
  });

  it('handles the edge cases of JavaScript replacement and anchoring', () => {
    const cases: [string, string, string[]][] = [
      // `$` inside a group, alternatives that are prefixes of exact ones, `$&`, `$$`, `$10` with one group.
      [
        '^http://(www\\.)?a\\.com/(?:$|\\?)',
        'https://a.com/$1',
        ['http://a.com/', 'http://www.a.com/?q', 'http://a.com/x', 'http://www.a.com/'],
      ],
      [
        '^http://a\\.com/(?:$|b)',
        'https://a.com/$&!',
        ['http://a.com/', 'http://a.com/b', 'http://a.com/bc', 'http://a.com/c'],
      ],
      [
        '^http://(a|b)\\.com/',
        'https://$$$1$10.com/',
        ['http://a.com/x', 'http://b.com/', 'http://c.com/'],
      ],
      // Trailing `.*`: the whole rest is consumed and replaced.
      ['^http://a\\.com/.*', 'https://a.com/', ['http://a.com/x/y?z', 'http://a.com/']],
      // Lazy and greedy optional parts keep the regex's preference.
      ['^http://(www\\.)??a\\.com/', 'https://$1a.com/', ['http://www.a.com/', 'http://a.com/']],
      // Lookaheads at the end, negative and positive, with `$` alternatives.
      [
        '^http://(?:www\\.)?a\\.com/(?!css/|$)',
        'https://a.com/',
        ['http://a.com/', 'http://a.com/css/x', 'http://a.com/cs', 'http://www.a.com/x'],
      ],
      [
        '^http://a\\.com/(?=img/|favicon\\.ico$)',
        'https://a.com/',
        [
          'http://a.com/img/1',
          'http://a.com/favicon.ico',
          'http://a.com/favicon.icox',
          'http://a.com/',
        ],
      ],
      // Runs: greedy, then given back one character at a time while the lookahead fails.
      [
        '^http://(www\\.)?a\\.com/+',
        'https://$1a.com/',
        ['http://a.com/', 'http://a.com///x', 'http://www.a.com//'],
      ],
      [
        '^http://a\\.com/+(?!/b|c)',
        'https://a.com/',
        [
          'http://a.com//b',
          'http://a.com/c',
          'http://a.com///c',
          'http://a.com/b',
          'http://a.com/',
        ],
      ],
      [
        '^http://a\\.com/[^?]*',
        'https://a.com/',
        ['http://a.com/x/y?z', 'http://a.com/?q', 'http://a.com/'],
      ],
      [
        '^http://a\\.com/x*(?=y)',
        'https://b.com/',
        ['http://a.com/xxy', 'http://a.com/y', 'http://a.com/xx'],
      ],
    ];
    for (const [from, to, inputs] of cases) {
      const p = prepareRule(from, to);
      expect(p.form, from).toBe(Form.Cases);
      for (const input of inputs)
        expect(rewriteLiteral(p, input), `${from} on ${input}`).toBe(regexRewrite(from, to, input));
    }
  });

  it('leaves to the regex what a fixed replacement cannot express', () => {
    expect(prepareRule('^http://a\\.com/', "https://a.com/$'").form).toBe(Form.Regex);
    expect(prepareRule('^http://a\\.com/.*', 'https://a.com/$&').form).toBe(Form.Regex);
    // One alternative a prefix of another: "the first that matches" is not a binary search.
    expect(prepareRule('^http://(a|ab)\\.com/', 'https://x/').form).toBe(Form.Cases);
    expect(prepareRule('^http://a(b)?', 'https://x/').form).toBe(Form.Regex);
    expect(prepareRule('^http://(\\w+)\\.a\\.com/', 'https://$1.a.com/').form).toBe(Form.Regex);
    // `$&` would hold the run; a lazy run gives back in the other direction.
    expect(prepareRule('^http://a\\.com/+', 'https://a.com/$&').form).toBe(Form.Regex);
    expect(prepareRule('^http://a\\.com/+?', 'https://a.com/').form).toBe(Form.Regex);
    expect(prepareTest('a\\.com').form).toBe(Form.Regex);
  });

  it('swaps a literal prefix for a literal rule', () => {
    const p = prepareLiteralRule('http://a.com/', 'https://b.com/');
    expect(rewriteLiteral(p, 'http://a.com/x?y')).toBe('https://b.com/x?y');
    expect(rewriteLiteral(p, 'http://a.comx/')).toBeNull();
  });
});
