import { isLiteralRule } from '../bundle/write.js';
import { Form, prepareRule, prepareTest } from './prepared-pattern.js';
import { isTrivialRule, type Diagnostic, type Ruleset, type SourceLocation } from '../model/ruleset.js';
import { judgeRegex } from './safe-regex.js';

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
  const judge = (what: string, pattern: string, form: Form, to: string | null, loc: SourceLocation | undefined): void => {
    if (form !== Form.Regex) return;
    const verdict = judgeRegex(pattern, to === null ? { use: 'test' } : { use: 'replace', to });
    if (verdict.kind === 'refused') out.push({ what, pattern, reason: verdict.reason, loc });
  };
  for (const r of ruleset.rules) {
    if (isTrivialRule(r) || isLiteralRule(r.from, r.to)) continue;
    judge('<rule> from', r.from, prepareRule(r.from, r.to).form, r.to, r.loc);
  }
  for (const e of ruleset.exclusions) judge('<exclusion> pattern', e.pattern, prepareTest(e.pattern).form, null, e.loc);
  for (const c of ruleset.secureCookies) {
    judge('<securecookie> host', c.host, prepareTest(c.host).form, null, c.loc);
    judge('<securecookie> name', c.name, prepareTest(c.name).form, null, c.loc);
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
