import {
  isTrivialRule,
  type Diagnostic,
  type Ruleset,
  type SourceLocation,
} from '../model/ruleset.js';
import { Form, isLiteralRule, prepareRule, prepareTest } from './prepared-pattern.js';
import { judgeRegex, type PatternUse } from './safe-regex.js';

/** One pattern of a ruleset, and whether the matcher runs it as a regex. */
export interface RulesetPattern {
  /** `<rule> from`, `<exclusion> pattern`, `<securecookie> host` or `<securecookie> name`. */
  what: string;
  source: string;
  use: PatternUse;
  /**
   * The matcher runs it through the regex door: not a trivial rule, not a prefix swap, not a
   * finite language (prepared-pattern.ts). Only these get a verdict, here and in a bundle.
   */
  regex: boolean;
  loc: SourceLocation | undefined;
}

const TEST: PatternUse = { use: 'test' };
const isRegex = (source: string): boolean => prepareTest(source).form === Form.Regex;

/**
 * Every pattern of `rulesets`, in the order of a bundle's PatternVerdict column: all rules,
 * then all exclusions, then each securecookie's host and name. The one answer to "which
 * patterns are regexes", for the checks before loading and for the verdicts a bundle stores.
 */
export function* rulesetPatterns(rulesets: readonly Ruleset[]): Generator<RulesetPattern> {
  for (const rs of rulesets) {
    for (const r of rs.rules) {
      const regex =
        !isTrivialRule(r) &&
        !isLiteralRule(r.from, r.to) &&
        prepareRule(r.from, r.to).form === Form.Regex;
      yield {
        what: '<rule> from',
        source: r.from,
        use: { use: 'replace', to: r.to },
        regex,
        loc: r.loc,
      };
    }
  }
  for (const rs of rulesets) {
    for (const e of rs.exclusions)
      yield {
        what: '<exclusion> pattern',
        source: e.pattern,
        use: TEST,
        regex: isRegex(e.pattern),
        loc: e.loc,
      };
  }
  for (const rs of rulesets) {
    for (const c of rs.secureCookies) {
      yield {
        what: '<securecookie> host',
        source: c.host,
        use: TEST,
        regex: isRegex(c.host),
        loc: c.loc,
      };
      yield {
        what: '<securecookie> name',
        source: c.name,
        use: TEST,
        regex: isRegex(c.name),
        loc: c.loc,
      };
    }
  }
}

/** A pattern of a ruleset that the regex door refuses. */
export interface RefusedPattern {
  /** `<rule> from`, `<exclusion> pattern`, `<securecookie> host` or `<securecookie> name`. */
  what: string;
  pattern: string;
  reason: string;
  loc: SourceLocation | undefined;
}

/**
 * The patterns of `ruleset` that the engine would refuse when it first ran them: the same
 * verdict (judgeRegex), on the same patterns (those the matcher runs as a regex; finite
 * languages and prefix swaps never reach one). Used where everything must be judged up front:
 * `check`, `compile`, `publish`.
 */
export function refusedPatterns(ruleset: Ruleset): RefusedPattern[] {
  const out: RefusedPattern[] = [];
  for (const p of rulesetPatterns([ruleset])) {
    if (!p.regex) continue;
    const verdict = judgeRegex(p.source, p.use);
    if (verdict.kind === 'refused')
      out.push({ what: p.what, pattern: p.source, reason: verdict.reason, loc: p.loc });
  }
  return out;
}

/** The diagnostic for a refused pattern (shared by `check` and the loaders). */
export function refusedPatternDiagnostic(ruleset: Ruleset, refused: RefusedPattern): Diagnostic {
  return {
    severity: 'error',
    code: 'unsafe-regex',
    message: `${refused.what} ${JSON.stringify(refused.pattern)} of ruleset "${ruleset.name}" is refused: ${refused.reason}`,
    file: refused.loc?.file ?? ruleset.loc?.file ?? '<memory>',
    line: refused.loc?.line ?? ruleset.loc?.line ?? 1,
    column: refused.loc?.column ?? ruleset.loc?.column ?? 1,
  };
}

export interface RegexCheckResult {
  /** Rulesets none of whose patterns is refused, in input order. */
  rulesets: Ruleset[];
  diagnostics: Diagnostic[];
}

/** Leaves out every ruleset with a refused pattern, with one error per refused pattern. */
export function checkRulesetRegexes(rulesets: readonly Ruleset[]): RegexCheckResult {
  const kept: Ruleset[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const rs of rulesets) {
    const refused = refusedPatterns(rs);
    if (refused.length === 0) kept.push(rs);
    for (const r of refused) diagnostics.push(refusedPatternDiagnostic(rs, r));
  }
  return { rulesets: kept, diagnostics };
}
