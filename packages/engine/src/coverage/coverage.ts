import type { Diagnostic, Ruleset, SourceLocation } from '../model/ruleset.js';
import { diagnosticAt } from '../lint/diagnostic.js';
import { branchCount, parsePattern } from '../lint/regex-ast.js';
import { targetKeysFor } from '../lint/target-match.js';
import { rulesetRegexOrNull, type RulesetRegex } from '../regex/safe-regex.js';

/** One test URL of a ruleset: written as `<test url>`, or implied by a non-wildcard target. */
export interface CoverageTest {
  url: string;
  implicit: boolean;
  loc: SourceLocation | undefined;
  /** `exclusion` or `rule` index this test attaches to, or null. */
  owner: { kind: 'exclusion' | 'rule'; index: number } | null;
}

export interface RulesetCoverage {
  ruleset: Ruleset;
  tests: CoverageTest[];
  diagnostics: Diagnostic[];
}

/** Rewrites a URL with every loaded ruleset; used to see whether an excluded URL still gets rewritten. */
export interface CollectionRewriter {
  rewriteWithRuleset(url: string): { rewritten: string | null; ruleset: string | null };
}

/** Tests a left (`*.x`) wildcard target needs. */
export const WILDCARD_TESTS = 3;
/** Tests a right (`x.*`) wildcard target needs: it covers every top-level domain, EFF asked 10. */
export const RIGHT_WILDCARD_TESTS = 10;

/** Through the regex door: a refused pattern is not run (`check` reports it). */
function compile(source: string): RulesetRegex | null {
  return rulesetRegexOrNull(source);
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/\.+$/, '');
  } catch {
    return null;
  }
}

function needed(pattern: string): number {
  const ast = parsePattern(pattern);
  return ast === null ? 1 : branchCount(ast);
}

/**
 * Offline coverage of one ruleset, as `httpsify test` reports it: every test attaches to the first
 * exclusion that matches it, else the first rule that matches it; each rule and exclusion needs
 * as many tests as its pattern has branches (see `branchCount`), each wildcard target
 * `WILDCARD_TESTS` (`RIGHT_WILDCARD_TESTS` for `x.*`) non-excluded tests on hosts it covers. `others`, when given, finds excluded
 * test URLs that another ruleset still rewrites (exclusions only hold inside their ruleset).
 */
export function rulesetCoverage(ruleset: Ruleset, others?: CollectionRewriter): RulesetCoverage {
  const out: Diagnostic[] = [];
  const file = ruleset.loc?.file ?? '';
  const at = (
    loc: SourceLocation | undefined,
    severity: Diagnostic['severity'],
    code: string,
    message: string,
  ): void => {
    out.push(diagnosticAt(loc ?? ruleset.loc, severity, code, message, file));
  };
  const targetSet = new Set(ruleset.targets.map((t) => t.host));
  const exclusions = ruleset.exclusions.map((e) => compile(e.pattern));
  const rules = ruleset.rules.map((r) => compile(r.from));

  const tests: CoverageTest[] = [
    ...ruleset.tests.map((t) => ({ url: t.url, implicit: false, loc: t.loc, owner: null })),
    ...ruleset.targets
      .filter((t) => !t.host.includes('*'))
      .map((t) => ({ url: `http://${t.host}/`, implicit: true, loc: t.loc, owner: null })),
  ];

  const seen = new Map<string, CoverageTest>();
  for (const test of tests) {
    const first = seen.get(test.url);
    if (first !== undefined) {
      at(
        test.loc,
        'warning',
        'duplicate-test',
        `test url ${test.url} is already tested at line ${first.loc?.line ?? '?'}${first.implicit ? ' (implied by its target)' : ''}`,
      );
      continue;
    }
    seen.set(test.url, test);
    const host = hostOf(test.url);
    if (host === null) {
      at(test.loc, 'error', 'test-url', `test url "${test.url}" is not a valid URL`);
      continue;
    }
    if (!targetKeysFor(host).some((k) => targetSet.has(k))) {
      at(
        test.loc,
        'error',
        'test-no-target',
        `no target of this ruleset covers the host of test url ${test.url}`,
      );
    }
    const excludedBy = exclusions.findIndex((re) => re !== null && re.test(test.url));
    if (excludedBy >= 0) {
      test.owner = { kind: 'exclusion', index: excludedBy };
      const other = others?.rewriteWithRuleset(test.url);
      if (other !== undefined && other.rewritten !== null && other.ruleset !== ruleset.name) {
        at(
          test.loc,
          'warning',
          'excluded-still-rewritten',
          `test url ${test.url} is excluded here, but ruleset "${other.ruleset}" still rewrites it to ${other.rewritten}`,
        );
      }
      continue;
    }
    const ruleIndex = rules.findIndex((re) => re !== null && re.test(test.url));
    if (ruleIndex >= 0) test.owner = { kind: 'rule', index: ruleIndex };
    else
      at(
        test.loc,
        'error',
        'test-no-rule',
        `no rule or exclusion of this ruleset applies to test url ${test.url}`,
      );
  }

  const unique = [...seen.values()];
  const count = (kind: 'exclusion' | 'rule', index: number): number =>
    unique.filter((t) => t.owner?.kind === kind && t.owner.index === index).length;
  ruleset.rules.forEach((rule, index) => {
    const need = needed(rule.from);
    const have = count('rule', index);
    if (have < need)
      at(
        rule.loc,
        'error',
        'rule-coverage',
        `rule from "${rule.from}" has ${have} test${have === 1 ? '' : 's'}, needs ${need} (one per branch of the pattern)`,
      );
  });
  ruleset.exclusions.forEach((exclusion, index) => {
    const need = needed(exclusion.pattern);
    const have = count('exclusion', index);
    if (have < need)
      at(
        exclusion.loc,
        'error',
        'exclusion-coverage',
        `exclusion "${exclusion.pattern}" has ${have} test${have === 1 ? '' : 's'}, needs ${need} (one per branch of the pattern)`,
      );
  });
  const notExcluded = unique
    .filter((t) => t.owner?.kind !== 'exclusion')
    .map((t) => hostOf(t.url))
    .filter((h): h is string => h !== null);
  for (const target of ruleset.targets) {
    if (!target.host.startsWith('*.') && !target.host.endsWith('.*')) continue;
    const have = notExcluded.filter(
      (h) => h !== target.host && targetKeysFor(h).includes(target.host),
    ).length;
    const need = target.host.endsWith('.*') ? RIGHT_WILDCARD_TESTS : WILDCARD_TESTS;
    if (have < need) {
      at(
        target.loc,
        'error',
        'target-coverage',
        `wildcard target "${target.host}" has ${have} test${have === 1 ? '' : 's'} on hosts it covers, needs ${need}`,
      );
    }
  }
  return { ruleset, tests: unique, diagnostics: out };
}
