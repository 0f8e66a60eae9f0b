import { formatDiagnostic, type Diagnostic } from '@httpsify/engine';
import type { BaselineSection } from '../../authoring/baseline.js';
import type { CheckReport, FixReport } from '../../commands/check.js';
import type { TestReport } from '../../commands/test.js';
import { count } from '../../shared/plural.js';

/**
 * The text reports of `check` and `test`: one line per finding (file:line:col: severity code:
 * message), test's line per ruleset, the counts per code, and the one-line summaries on stderr.
 */

/** What a person asked to see: errors only with --quiet, info findings only with --info. */
export interface FindingsShown {
  quiet?: boolean;
  info?: boolean;
}

/** The findings text and SARIF show (JSON has them all). */
export function shownFindings(
  diagnostics: readonly Diagnostic[],
  shown: FindingsShown,
): Diagnostic[] {
  return diagnostics.filter((d) =>
    shown.quiet === true ? d.severity === 'error' : d.severity !== 'info' || shown.info === true,
  );
}

/** check's stdout: the findings shown, then with --counts the number per code. */
export function checkText(
  report: CheckReport,
  shown: FindingsShown & { counts?: boolean },
): string {
  const lines = shownFindings(report.diagnostics, shown).map((d) => `${formatDiagnostic(d)}\n`);
  if (shown.counts === true)
    for (const [code, n] of Object.entries(report.counts))
      lines.push(`${String(n).padStart(7)} ${code}\n`);
  return lines.join('');
}

/** The one line check writes on stderr whatever the format: what was checked, found and hidden. */
export function checkSummaryLine(
  report: CheckReport,
  changedOnly: boolean,
  shown: { info?: boolean },
): string {
  const scopeText = changedOnly
    ? `${count(report.checked, 'changed file')} (checks across files over ${report.files})`
    : count(report.files, 'file');
  const hidden: string[] = [];
  if (report.info > 0 && shown.info !== true) hidden.push('--info lists the info findings');
  hidden.push(...hiddenFindingsText(report), ...ignoredFilesText(report));
  return (
    `${scopeText}: ${count(report.errors, 'error')}, ${count(report.warnings, 'warning')}, ${report.info} info in ${(report.elapsedMs / 1000).toFixed(1)} s` +
    ` (public suffix list: ${report.publicSuffixList})${hidden.length > 0 ? `; ${hidden.join('; ')}` : ''}\n`
  );
}

/** `check --fix-dry-run`: one unified diff per changed file, for `git apply` or `patch -p1`. */
export function fixesDiff(fixes: FixReport): string {
  return fixes.changed.map((c) => c.diff).join('');
}

/** The line on stderr that says what --fix wrote or --fix-dry-run would write. */
export function fixSummaryLine(fixes: FixReport, written: boolean): string {
  const n = fixes.changed.reduce((sum, c) => sum + c.fixes.length, 0);
  return (
    `${count(fixes.files, 'file')}: ${count(n, 'fix', 'fixes')} in ${count(fixes.changed.length, 'file')}${n === 0 ? '' : written ? ', written' : ' (--fix writes them)'}` +
    `${fixes.rejected > 0 ? `; ${count(fixes.rejected, 'fix', 'fixes')} left out because a test URL would be rewritten differently` : ''}` +
    `${fixes.pending > 0 ? `; more fixes follow in ${count(fixes.pending, 'file')} once these are applied` : ''}\n`
  );
}

/** test's stdout: the findings, a line per ruleset, the totals, then the number per code. */
export function testText(report: TestReport): string {
  const lines = report.diagnostics.map((d) => formatDiagnostic(d));
  for (const s of report.rulesets)
    lines.push(
      `${s.problems === 0 ? 'ok  ' : 'FAIL'} ${s.name} (${s.file}): ${count(s.tests, 'test')}, ${count(s.problems, 'problem')}`,
    );
  const failed = report.rulesets.filter((s) => s.problems > 0).length;
  const tests = report.rulesets.reduce((n, s) => n + s.tests, 0);
  const hidden = [...hiddenFindingsText(report), ...ignoredFilesText(report)];
  lines.push(
    `${count(report.rulesets.length, 'ruleset')}, ${count(tests, 'test')}: ${report.rulesets.length - failed} ok, ${failed} with problems` +
      `${report.skippedDefaultOff > 0 ? ` (${report.skippedDefaultOff} off by default skipped)` : ''}${hidden.length > 0 ? `; ${hidden.join('; ')}` : ''}`,
  );
  for (const [code, n] of Object.entries(report.counts).sort())
    lines.push(`${String(n).padStart(7)} ${code}`);
  return lines.map((l) => `${l}\n`).join('');
}

/** The line on stderr when more warnings are left than `--max-warnings` allows. */
export function tooManyWarningsLine(warnings: number, max: number): string {
  return `httpsify: ${count(warnings, 'warning')}, more than --max-warnings ${max} allows\n`;
}

/** What a check or test run hid, as its summary line says it: by the baseline and by httpsify-ignore comments. */
export interface HiddenFindings {
  baselineHidden: number;
  baselineHiddenFiles: number;
  suppressed: number;
  baselineStale: number;
}

/** The summary's phrases for what a run hid (none when nothing was). */
export function hiddenFindingsText(report: HiddenFindings): string[] {
  const out: string[] = [];
  if (report.baselineHidden > 0)
    out.push(
      `the baseline hid ${count(report.baselineHidden, 'finding')} in ${count(report.baselineHiddenFiles, 'unchanged file')}`,
    );
  if (report.suppressed > 0) out.push(`httpsify-ignore comments hid ${report.suppressed}`);
  if (report.baselineStale > 0)
    out.push(
      `${report.baselineStale} baseline ${report.baselineStale === 1 ? 'entry matches' : 'entries match'} no file any more (--write-baseline drops them)`,
    );
  return out;
}

/** What `--write-baseline` tells the user it wrote (one line, for stderr). */
export function baselineWrittenLine(
  path: string,
  section: BaselineSection,
  written: { files: number; findings: number; kept: number },
  scope: readonly string[],
): string {
  const kept =
    written.kept > 0
      ? `; kept the entries of ${count(written.kept, 'file')} outside ${scope.join(' ')}`
      : '';
  return `${path}: wrote ${count(written.findings, 'finding')} of ${count(written.files, 'file')} to the ${section} baseline${kept}\n`;
}

/** The summary's phrase for the files the config ignored (none when it ignored none). */
export function ignoredFilesText(report: { config: string | null; ignored: number }): string[] {
  return report.ignored > 0 && report.config !== null
    ? [`${count(report.ignored, 'file')} ignored by ${report.config}`]
    : [];
}
