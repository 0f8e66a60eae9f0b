import type { Diagnostic } from '@httpsify/engine';
import {
  artifactUri,
  formatSarifLog,
  sarifLevel,
  type SarifResult,
  type SarifRule,
} from './log.js';

/** Where each code is explained: the list of findings in the ruleset authors' guide. */
const HELP_URI =
  'https://github.com/httpsify/httpsify/blob/main/docs/writing-rulesets.md#what-check-and-test-say';

/**
 * SARIF 2.1.0 for the findings of `check` and `test`: one rule per finding code (its id is the
 * code), one result per finding at its file:line:column, the level from its severity (after the
 * config file's settings). A finding has a start and no end: the codes point at an element.
 */
export function findingsSarif(
  diagnostics: readonly Diagnostic[],
  cwd: string,
  version: string,
): string {
  const codes = [...new Set(diagnostics.map((d) => d.code))].sort();
  const rules: SarifRule[] = codes.map((id) => ({ id, helpUri: HELP_URI }));
  const results: SarifResult[] = diagnostics.map((d) => ({
    ruleId: d.code,
    level: sarifLevel(d.severity),
    message: { text: d.message },
    locations: [
      {
        physicalLocation: {
          artifactLocation: artifactUri(d.file, cwd),
          region: { startLine: d.line, startColumn: d.column },
        },
      },
    ],
  }));
  return formatSarifLog({ cwd, version, rules, results, executionSuccessful: true });
}
