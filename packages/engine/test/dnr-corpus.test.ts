import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Ruleset } from '../src/index.js';
import { parseRulesetXml } from '../src/parse/index.js';
import {
  compileDnr,
  DNR_LIMITS,
  measureDnrCoverage,
  translateRegex,
  type DnrCompileResult,
} from '../src/dnr/index.js';
import { corpusXmlFiles, readOracle, type OracleCase } from './support/corpus.js';

/**
 * The whole 2018 HTTPS Everywhere corpus compiled to DNR rules, measured against the oracle:
 * what fraction of the reference rewrites the compiled rules reproduce under DNR matching.
 */
describe('DNR rules compiled from the corpus', () => {
  let rulesets: Ruleset[];
  let result: DnrCompileResult;
  let oracle: OracleCase[];

  beforeAll(async () => {
    rulesets = corpusXmlFiles().flatMap((file) => {
      const { ruleset } = parseRulesetXml(readFileSync(file, 'utf8'), file);
      return ruleset ? [ruleset] : [];
    });
    result = compileDnr(rulesets);
    oracle = await readOracle();
  });

  it('fits Chromium limits and accounts for every left-out piece', () => {
    const { report, rules } = result;
    expect(report.regexRuleCount).toBeLessThanOrEqual(DNR_LIMITS.regexRules);
    expect(rules.filter((r) => r.condition.regexFilter !== undefined)).toHaveLength(
      report.regexRuleCount,
    );
    expect(rules.length).toBeLessThanOrEqual(DNR_LIMITS.guaranteedStaticRules);
    expect(report.overLimits).toEqual([]);
    expect(new Set(rules.map((r) => r.id)).size).toBe(rules.length);
    expect(report.rulesetsComplete + report.rulesetsPartial + report.rulesetsSkipped).toBe(
      report.rulesetsConsidered,
    );
    for (const o of report.omissions) expect(o.reason).not.toBe('');
  });

  it('reproduces the oracle rewrites under DNR matching', () => {
    const coverage = measureDnrCoverage(result.rules, oracle);
    const fraction = coverage.reproduced / coverage.rewrites;
    console.log(
      `DNR coverage: ${coverage.reproduced}/${coverage.rewrites} oracle rewrites reproduced (${(100 * fraction).toFixed(2)}%); ` +
        `${coverage.missed} missed, ${coverage.wrong} different, ${coverage.spurious} spurious; ` +
        `${result.report.ruleCount} rules, ${result.report.regexRuleCount} regex`,
    );
    expect(coverage.rewrites).toBe(oracle.filter((c) => c.expected !== null).length);
    expect(fraction).toBeGreaterThan(0.985);
    // Where DNR cannot follow the reference it must leave the URL alone, not send it elsewhere.
    expect(coverage.wrong).toBeLessThanOrEqual(5);
    expect(coverage.spurious).toBe(0);
  });

  it('sends no subdomain of an oracle host anywhere the reference would not', () => {
    // DNR domain lists admit every subdomain of a target; the reference offers a ruleset only
    // for its targets. The engine (exact on the oracle) is the reference for these variants.
    const engine = createEngine(rulesets);
    for (const prefix of ['zz.', 'www.', 'a.b.']) {
      const cases = oracle.map((c) => {
        const url = c.url.replace(/^(https?:\/\/)/, `$1${prefix}`);
        return { url, expected: engine.rewrite(url) };
      });
      const coverage = measureDnrCoverage(result.rules, cases);
      console.log(
        `DNR on "${prefix}" variants: ${coverage.reproduced}/${coverage.rewrites} reproduced, ${coverage.wrong} different, ${coverage.spurious} spurious`,
      );
      expect(coverage.rewrites).toBeGreaterThan(1000);
      expect(
        coverage.spurious,
        JSON.stringify(coverage.examples.filter((e) => e.expected === null)),
      ).toBe(0);
      expect(coverage.wrong).toBeLessThanOrEqual(5);
    }
  });

  it('translates corpus regexes without changing what they match', () => {
    // Every translated `from` must agree with the original on the corpus's own test URLs.
    let checked = 0;
    for (const rs of rulesets) {
      for (const rule of rs.rules) {
        const tr = translateRegex(rule.from);
        if (!tr.ok) continue;
        const original = new RegExp(rule.from);
        const translated = new RegExp(tr.re2);
        for (const t of rs.tests) {
          expect(translated.exec(t.url)?.slice(), `${rule.from} on ${t.url}`).toEqual(
            original.exec(t.url)?.slice(),
          );
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10_000);
  });
});
