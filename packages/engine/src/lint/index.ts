import type { Diagnostic, Ruleset } from '../model/ruleset.js';
import { parseRulesetXml } from '../parse/xml-ruleset.js';
import { lintRulesAndPatterns } from './rules.js';
import { lintStructure } from './structure.js';
import { lintTargets } from './targets.js';
import { applySuppressions, suppressionsOf, type Suppression } from './suppression.js';
import { lintRegexSafety } from './regex-safety.js';

export { lintCollection, type LintedFile } from './collection.js';
export { collectionFacts } from './collection-facts.js';
export { fixRuleset, type Fix, type FixEdit, type FixResult } from './fix.js';
export { branchCount, countCapturingGroups, parsePattern } from './regex-ast.js';
export { dollarUses, type DollarUse } from '../regex/replacement.js';
export { coveringTarget, targetKeysFor } from './target-match.js';
export { PUBLIC_SUFFIX_SITES } from './targets.js';
export { applySuppressions, suppressionsOf, type Suppression } from './suppression.js';

/** Lint findings of one parsed ruleset (targets, rules, exclusions, secure cookies, tests). */
export function lintRuleset(ruleset: Ruleset): Diagnostic[] {
  return [...lintTargets(ruleset), ...lintRulesAndPatterns(ruleset), ...lintRegexSafety(ruleset)];
}

export interface LintResult {
  /** The parsed ruleset, or null when the parser found errors. */
  ruleset: Ruleset | null;
  /** Parser errors plus lint findings, in source order, less those the file's suppressions hide. */
  diagnostics: Diagnostic[];
  /** `<!-- httpsify-ignore code: reason -->` comments of the file (they also apply to checks across files). */
  suppressions: Suppression[];
  /** Findings the suppressions hid. */
  suppressed: Diagnostic[];
}

export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return a.file < b.file
    ? -1
    : a.file > b.file
      ? 1
      : a.line - b.line || a.column - b.column || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);
}

/**
 * Everything `httpsify check` says about one file: the parser's errors, the structure checks
 * that need the raw XML, and, when the file parsed, the ruleset checks. Browser-safe, so the
 * extension's editor can show the same messages as the command line.
 */
export function lintRulesetSource(xml: string, file: string): LintResult {
  const parsed = parseRulesetXml(xml, file);
  const diagnostics = [...parsed.diagnostics];
  if (!parsed.diagnostics.some((d) => d.code === 'xml-syntax'))
    diagnostics.push(...lintStructure(xml, file));
  if (parsed.ruleset !== null) diagnostics.push(...lintRuleset(parsed.ruleset));
  const declared = suppressionsOf(xml, file);
  diagnostics.push(...declared.diagnostics);
  const { kept, suppressed } = applySuppressions(diagnostics, declared.suppressions);
  kept.sort(compareDiagnostics);
  return {
    ruleset: parsed.ruleset,
    diagnostics: kept,
    suppressions: declared.suppressions,
    suppressed,
  };
}
