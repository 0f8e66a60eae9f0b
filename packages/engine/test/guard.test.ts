import { describe, expect, it } from 'vitest';
import { guardRegex, guardRulesets, parseRulesetXml, screenRegex } from '../src/parse/index.js';

describe('catastrophic-backtracking guard', () => {
  it('screens nested quantifiers and quantified alternations, not plain host regexes', () => {
    expect(screenRegex('^http://x/(a+)+$').suspicious).toBe(true);
    expect(screenRegex('^http://(a|aa)+b').suspicious).toBe(true);
    expect(screenRegex('^http://(?:www\\.)?example\\.com/').suspicious).toBe(false);
    expect(screenRegex('^http://([^/:@]+\\.)?example\\.com/').suspicious).toBe(false);
  });

  it('refuses exponential regexes after measuring them, quickly', () => {
    for (const source of ['^http://slow\\.example/(a+)+$', '^http://(a|aa)+b', '^http://([\\w.-]+)*x$']) {
      const started = performance.now();
      const verdict = guardRegex(source);
      expect(verdict.refused, source).toBe(true);
      expect(verdict.reason).toMatch(/took \d+\.\d ms on a \d+-character input/);
      expect(performance.now() - started).toBeLessThan(10_000);
    }
    expect(guardRegex('^http://(?:www\\.)?example\\.com/', { measureAll: true })).toMatchObject({ refused: false, slow: false });
  });

  it('refuses the ruleset holding a bad regex and keeps the others', () => {
    const good = parseRulesetXml('<ruleset name="Good"><target host="a.example"/><rule from="^http:" to="https:"/></ruleset>', 'Good.xml').ruleset!;
    const bad = parseRulesetXml('<ruleset name="Bad">\n<target host="b.example"/>\n<exclusion pattern="^http://b\\.example/(a|aa)+b"/>\n<rule from="^http:" to="https:"/></ruleset>', 'Bad.xml').ruleset!;
    const result = guardRulesets([good, bad]);
    expect(result.rulesets.map((r) => r.name)).toEqual(['Good']);
    expect(result.diagnostics).toMatchObject([{ severity: 'error', code: 'slow-regex', file: 'Bad.xml', line: 3 }]);
  });
});
