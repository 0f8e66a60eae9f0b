import type { Diagnostic, Ruleset } from '../model/ruleset.js';
import { refusedPatternDiagnostic, refusedPatterns } from '../regex/ruleset-regexes.js';

/**
 * `unsafe-regex`: a pattern the regex door refuses (docs/regex-guard.md), so the engine would
 * not use the ruleset and `compile`/`publish` would leave it out. Same verdict as theirs.
 */
export function lintRegexSafety(ruleset: Ruleset): Diagnostic[] {
  return refusedPatterns(ruleset).map((refused) => refusedPatternDiagnostic(ruleset, refused));
}
