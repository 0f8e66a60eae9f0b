import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine, type Ruleset } from '../src/index.js';
import { parseRulesetXml } from '../src/parse/index.js';
import { rulesetCoverage } from '../src/authoring/index.js';
import { corpusRulesDir, corpusXmlFiles } from './support/corpus.js';
import { CORPUS_RULESETS, workTimeout } from './support/work-timeout.js';

const parse = (xml: string, file = 'T.xml'): Ruleset => {
  const { ruleset, diagnostics } = parseRulesetXml(xml, file);
  if (ruleset === null) throw new Error(diagnostics.map((d) => d.message).join('; '));
  return ruleset;
};
const codes = (xml: string): string[] => rulesetCoverage(parse(xml)).diagnostics.map((d) => d.code);

describe('rulesetCoverage', () => {
  it('passes a trivial ruleset through its implicit tests', () => {
    const r = rulesetCoverage(
      parse(
        '<ruleset name="T"><target host="example.com"/><target host="www.example.com"/><rule from="^http:" to="https:"/></ruleset>',
      ),
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.tests.map((t) => [t.url, t.implicit, t.owner])).toEqual([
      ['http://example.com/', true, { kind: 'rule', index: 0 }],
      ['http://www.example.com/', true, { kind: 'rule', index: 0 }],
    ]);
  });
  it('asks one test per branch and attaches tests to exclusions first', () => {
    const xml = `<ruleset name="T">
      <target host="example.com"/>
      <exclusion pattern="^http://example\\.com/(?:foo|bar)"/>
      <rule from="^http://example\\.com/(a|b)?" to="https://example.com/"/>
      <test url="http://example.com/foo"/>
    </ruleset>`;
    const r = rulesetCoverage(parse(xml));
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['rule-coverage', 4],
      ['exclusion-coverage', 3],
    ]);
    expect(r.diagnostics[0]?.message).toContain('has 1 test, needs 3');
  });
  it('reports tests without a target or an owner, and duplicates', () => {
    const xml = `<ruleset name="T"><target host="example.com"/><rule from="^http://example\\.com/x" to="https://example.com/x"/>
      <test url="http://other.com/x"/><test url="http://example.com/x"/><test url="http://example.com/x"/></ruleset>`;
    expect(codes(xml).sort()).toEqual(
      ['duplicate-test', 'test-no-rule', 'test-no-target', 'test-no-rule'].sort(),
    );
  });
  it('needs three tests per wildcard target', () => {
    const base = '<target host="*.example.com"/><rule from="^http:" to="https:"/>';
    expect(codes(`<ruleset name="T">${base}<test url="http://a.example.com/"/></ruleset>`)).toEqual(
      ['target-coverage'],
    );
    expect(
      codes(
        `<ruleset name="T">${base}<test url="http://a.example.com/"/><test url="http://b.example.com/"/><test url="http://c.d.example.com/"/></ruleset>`,
      ),
    ).toEqual([]);
  });
  it('needs ten tests per right wildcard target', () => {
    const tests = (n: number): string =>
      Array.from({ length: n }, (_, i) => `<test url="http://www.example.t${i}/"/>`).join('');
    const base = '<target host="www.example.*"/><rule from="^http:" to="https:"/>';
    expect(
      rulesetCoverage(parse(`<ruleset name="T">${base}${tests(9)}</ruleset>`)).diagnostics.map(
        (d) => d.message,
      ),
    ).toEqual(['wildcard target "www.example.*" has 9 tests on hosts it covers, needs 10']);
    expect(codes(`<ruleset name="T">${base}${tests(10)}</ruleset>`)).toEqual([]);
  });
  it('finds an excluded URL that another ruleset still rewrites', () => {
    const a = parse(
      '<ruleset name="A"><target host="www.example.com"/><exclusion pattern="^http://www\\.example\\.com/x"/><rule from="^http:" to="https:"/><test url="http://www.example.com/x"/></ruleset>',
      'A.xml',
    );
    const b = parse(
      '<ruleset name="B"><target host="*.example.com"/><rule from="^http:" to="https:"/></ruleset>',
      'B.xml',
    );
    const r = rulesetCoverage(a, createEngine([a, b]));
    expect(r.diagnostics.map((d) => d.code)).toEqual(['excluded-still-rewritten']);
    expect(r.diagnostics[0]?.message).toContain(
      '"B" still rewrites it to https://www.example.com/x',
    );
  });
});

describe('corpus coverage', () => {
  it(
    'matches the reference checker on the counts that share its definition',
    () => {
      const rulesets = corpusXmlFiles()
        .map((f) => parseRulesetXml(readFileSync(f, 'utf8'), f).ruleset)
        .filter((r): r is Ruleset => r !== null && r.defaultOff === undefined);
      expect(rulesets.length).toBe(18769);
      const counts: Record<string, number> = {};
      for (const r of rulesets)
        for (const d of rulesetCoverage(r).diagnostics) counts[d.code] = (counts[d.code] ?? 0) + 1;
      // prior-ruleset-tooling.md §5.5: 25 duplicated test URLs and 925 tests no rule or exclusion applies to.
      expect(counts['duplicate-test']).toBe(25);
      expect(counts['test-no-rule']).toBe(925);
      expect(counts['test-no-target']).toBeGreaterThanOrEqual(19);
    },
    workTimeout(CORPUS_RULESETS, 5),
  );
  it('JS.org.xml: every one of its 925 tests has an owner and nothing is missing', () => {
    const r = parseRulesetXml(
      readFileSync(join(corpusRulesDir(), 'JS.org.xml'), 'utf8'),
      'JS.org.xml',
    ).ruleset as Ruleset;
    const c = rulesetCoverage(r);
    expect(r.tests.length).toBe(925);
    expect(c.tests.every((t) => t.owner !== null)).toBe(true);
    expect(c.tests.some((t) => t.owner?.kind === 'exclusion')).toBe(true);
    expect(c.diagnostics).toEqual([]);
  });
});
