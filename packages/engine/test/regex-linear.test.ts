import { describe, expect, it } from 'vitest';
import { compileRulesetRegex, judgeRegex } from '../src/parse/index.js';

/** Patterns the proof rejects but re2js can run: each must behave exactly as RegExp + String.prototype.replace. */
const CASES: { from: string; to: string; inputs: string[] }[] = [
  {
    from: '^http://awstrust\\.com/([^?]*).*',
    to: 'https://www.amazontrust.com/$1',
    inputs: ['http://awstrust.com/a/b?c=d', 'http://awstrust.com/', 'http://x.com/'],
  },
  {
    from: '^http://h\\.test/(a|aa)+$',
    to: "https://h.test/[$&][$`][$'][$$][$2][$0][$9]",
    inputs: ['http://h.test/aaa', 'http://h.test/aab', 'http://h.test/'],
  },
  {
    from: 'h\\.test/(\\w+)\\W+(\\d*)',
    to: '<$2|$1|$3>',
    inputs: ['x http://h.test/abc--- tail', 'http://h.test/abc-12x', 'nothing'],
  },
  {
    from: '^http://(www\\.)?e\\.org/(.*)(.*)$',
    to: 'https://e.org/$1-$2-$3',
    inputs: ['http://e.org/x/y', 'http://www.e.org/'],
  },
  {
    from: '^http://e\\.org/[\\s\\S]*?(\\.\\w+)?$',
    to: 'https://e.org/$1',
    inputs: ['http://e.org/a.b.c', 'http://e.org/\u2028.x'],
  },
];

describe('linear-time route: same results as RegExp', () => {
  it.each(CASES)('$from', ({ from, to, inputs }) => {
    const verdict = judgeRegex(from, { use: 'replace', to });
    const compiled = compileRulesetRegex(from, { use: 'replace', to });
    expect(compiled.ok).toBe(true);
    if (!compiled.ok) return;
    for (const input of inputs) {
      if (verdict.kind === 'linear') expect(compiled.regex.verdict).toBe('linear');
      expect(compiled.regex.replace(input, to), input).toBe(input.replace(new RegExp(from), to));
      expect(compiled.regex.test(input), input).toBe(new RegExp(from).test(input));
    }
  });

  it("JavaScript classes keep their meaning (. and \\s are not RE2's)", () => {
    for (const [pattern, input] of [
      ['^a.*.*.*b$', 'a\rb'],
      ['^a.*.*.*b$', 'a\u2029b'],
      ['^a\\s*\\s*\\s*b$', 'a\u00a0b'],
      ['^a\\s*\\s*\\s*b$', 'a\u2028b'],
      ['^a\\w*\\w*\\w*b$', 'a\u00e9b'],
      ['^(a|a)+.$', 'aa\n'],
    ] as const) {
      const compiled = compileRulesetRegex(pattern);
      expect(compiled.ok && compiled.regex.verdict).toBe('linear');
      expect(
        compiled.ok && compiled.regex.test(input),
        `${pattern} on ${JSON.stringify(input)}`,
      ).toBe(new RegExp(pattern).test(input));
    }
  });

  it('refuses for rules what RE2 would capture differently, keeps it for tests', () => {
    expect(judgeRegex('^x(?:(a)|b|a)+$', { use: 'replace', to: '$1' }).kind).toBe('refused');
    expect(judgeRegex('^x(?:(a)|b|a)+$', { use: 'replace', to: 'y' }).kind).toBe('linear');
    expect(judgeRegex('^x(?:|a)*$', { use: 'replace', to: 'y' }).kind).toBe('refused');
    expect(judgeRegex('^x(?:|a)*$').kind).toBe('linear');
  });
});
