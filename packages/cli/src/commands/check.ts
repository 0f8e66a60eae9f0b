import type { Command } from '../shared/commander.js';
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Diagnostic } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import {
  collectionFacts,
  compareDiagnostics,
  lintCollection,
  lintRulesetSource,
  PSL_SNAPSHOT,
  applySuppressions,
  fixRuleset,
  type LintedFile,
  type Suppression,
} from '@httpsify/engine/authoring';
import {
  DEFAULT_BASELINE,
  filterByBaseline,
  findBaseline,
  readBaseline,
  writeBaseline,
} from '../authoring/baseline.js';
import { changedSince } from '../authoring/changed-files.js';
import { readRulesetSource } from '../authoring/ruleset-files.js';
import {
  applyRuleSettings,
  DEFAULT_CONFIG,
  loadCheckConfig,
  selectRulesetFiles,
  type CheckConfig,
} from '../authoring/check-config.js';
import { createTwoFilesPatch } from 'diff';
import { checkJson, fixesJson } from '../formats/json/findings.js';
import { findingsSarif } from '../formats/sarif/findings.js';
import {
  baselineWrittenLine,
  checkSummaryLine,
  checkText,
  fixesDiff,
  fixSummaryLine,
  shownFindings,
  tooManyWarningsLine,
  type FindingsShown,
} from '../formats/text/findings.js';
import { emitReport, raiseExitCode, type Formatters } from '../shared/emit-report.js';
import { checkReportPath, writeOutputFile } from '../shared/output-file.js';
import { cliVersion } from '../shared/version.js';
import { addProgressOptions, ProgressBar } from '../shared/progress.js';

export interface CheckOptions {
  /** Only these files get the per-file checks and findings; the rest only feed the checks across files. */
  changed?: readonly string[];
  /** Baseline file to hide known findings with; null or absent: none. */
  baseline?: string | null;
  /** httpsify.config.json: severities per code, and files left out. */
  config?: CheckConfig | null;
  /** Drawn as files are checked; cleared before runCheck returns. */
  progress?: ProgressBar;
}

export interface CheckReport {
  files: number;
  /** Files whose findings are reported (all of them, or the changed ones). */
  checked: number;
  diagnostics: Diagnostic[];
  counts: Record<string, number>;
  errors: number;
  warnings: number;
  info: number;
  /** Findings hidden by `<!-- httpsify-ignore -->` comments and by the baseline. */
  suppressed: number;
  baselineHidden: number;
  baselineHiddenFiles: number;
  /** Baseline entries for file contents not seen in this run (only counted when every file is in scope). */
  baselineStale: number;
  /** The config file used (null: none), and the files its `ignores` left out. */
  config: string | null;
  ignored: number;
  /** Findings before the baseline, and each checked file's SHA-256, for --write-baseline. */
  unfiltered: Diagnostic[];
  hashes: Map<string, string>;
  publicSuffixList: string;
  elapsedMs: number;
}

/**
 * Lints every file (or only the changed ones), then the cross-file checks over all files that
 * parsed; suppressions in each file and the baseline then hide accepted findings.
 */
export function runCheck(paths: readonly string[], options: CheckOptions = {}): CheckReport {
  const started = performance.now();
  const config = options.config ?? null;
  const { files, changed, ignored } = selectRulesetFiles(paths, options.changed, config);
  const diagnostics: Diagnostic[] = [];
  const collection: LintedFile[] = [];
  const suppressions = new Map<string, Suppression[]>();
  const hashes = new Map<string, string>();
  let suppressed = 0;
  let checked = 0;
  options.progress?.phase('files checked', files.length);
  for (const file of files) {
    options.progress?.tick();
    const source = readRulesetSource(file);
    if (changed === null || changed.has(resolve(file))) {
      checked++;
      hashes.set(file, source.sha256);
      const result = lintRulesetSource(source.text, file);
      diagnostics.push(...applyRuleSettings(result.diagnostics, config));
      // A comment that hides a code the config turned off hid nothing.
      suppressed += applyRuleSettings(result.suppressed, config).length;
      suppressions.set(file, result.suppressions);
      if (result.ruleset !== null) collection.push({ file, ruleset: result.ruleset });
      continue;
    }
    const facts = collectionFacts(source.text) ?? parseRulesetXml(source.text, file).ruleset;
    if (facts !== null)
      collection.push({
        file,
        ruleset: { rules: [], exclusions: [], secureCookies: [], tests: [], ...facts },
      });
  }
  options.progress?.clear();
  for (const d of applyRuleSettings(lintCollection(collection), config)) {
    if (changed !== null && !changed.has(resolve(d.file))) continue;
    const { kept } = applySuppressions([d], suppressions.get(d.file) ?? []);
    if (kept.length === 0) suppressed++;
    else diagnostics.push(d);
  }
  diagnostics.sort(compareDiagnostics);
  const baseline = options.baseline == null ? null : readBaseline(options.baseline);
  const filtered = filterByBaseline(diagnostics, hashes, baseline, 'check', {
    baseline: options.baseline ?? '',
    scope: paths,
  });
  const counts: Record<string, number> = {};
  for (const d of filtered.kept) counts[d.code] = (counts[d.code] ?? 0) + 1;
  const severity = (s: Diagnostic['severity']): number =>
    filtered.kept.filter((d) => d.severity === s).length;
  return {
    files: files.length,
    checked,
    diagnostics: filtered.kept,
    counts: Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1))),
    errors: severity('error'),
    warnings: severity('warning'),
    info: severity('info'),
    suppressed,
    baselineHidden: filtered.hidden,
    baselineHiddenFiles: filtered.hiddenFiles,
    baselineStale: changed === null ? filtered.stale : 0,
    config: config?.file ?? null,
    ignored,
    unfiltered: diagnostics,
    hashes,
    publicSuffixList: PSL_SNAPSHOT.source,
    elapsedMs: performance.now() - started,
  };
}

export interface FixReport {
  files: number;
  /** Per changed file: its path, the fixes (code, line, message), the diff and the new text. */
  changed: {
    file: string;
    fixes: { code: string; line: number; message: string }[];
    diff: string;
    fixed: string;
  }[];
  /** Fixes dropped because a test URL of the ruleset would be rewritten differently. */
  rejected: number;
  /** Files where the fixes make room for more (a dot escaped, then the rule trivialised): another round is pending. */
  pending: number;
}

/**
 * `check --fix` and `--fix-dry-run`: the automatic fixes of every file in scope, as diffs and new
 * texts; nothing is written here.
 * One fix can make room for another, so up to `rounds` rounds run per file (as ESLint's --fix
 * does, 10 at most); each round's diff applies to the text the one before left.
 */
export function runFix(
  paths: readonly string[],
  options: { changed?: readonly string[]; rounds?: number; config?: CheckConfig | null } = {},
): FixReport {
  const selected = selectRulesetFiles(paths, options.changed, options.config ?? null);
  // Files the config ignores are left alone, as they are by the checks.
  const files =
    selected.changed === null
      ? selected.files
      : [...new Set(options.changed)].filter((f) => selected.changed?.has(resolve(f)));
  const report: FixReport = { files: files.length, changed: [], rejected: 0, pending: 0 };
  for (const file of files) {
    const original = readRulesetSource(file).text;
    let text = original;
    const done: FixReport['changed'][number] = { file, fixes: [], diff: '', fixed: text };
    let result = fixRuleset(text, file);
    for (let round = 0; round < (options.rounds ?? 1) && result.fixes.length > 0; round++) {
      done.fixes.push(
        ...result.fixes.map((f) => ({ code: f.code, line: f.line, message: f.message })),
      );
      text = done.fixed = result.fixed;
      result = fixRuleset(text, file);
    }
    // One diff per file, with 3 lines of context and git's a/ b/ prefixes: plain `git apply` and
    // `patch -p1` take it (a BOM and CR LF line ends are part of the lines, as in the file).
    if (done.fixes.length > 0)
      done.diff = createTwoFilesPatch(
        `a/${file}`,
        `b/${file}`,
        original,
        text,
        undefined,
        undefined,
        { context: 3 },
      );
    report.rejected += result.rejected.length;
    if (result.fixes.length > 0 && done.fixes.length > 0) report.pending++;
    if (done.fixes.length > 0) report.changed.push(done);
  }
  return report;
}

/** The `[paths]` and `--changed`/`--changed-since` of check (and test) resolved to directories and files. */
export function resolveChangedOptions(
  paths: string[],
  opts: { changed?: string[]; changedSince?: string },
): { paths: string[]; changed?: string[] } {
  if (opts.changed === undefined && opts.changedSince === undefined) {
    // As linters do: no path means the current directory.
    return { paths: paths.length > 0 ? paths : ['.'] };
  }
  const changed = [...(opts.changed ?? [])];
  for (const f of changed) {
    // `--changed` is variadic: a directory after it was meant as a path to check.
    if (statSync(f, { throwIfNoEntry: false })?.isDirectory() === true)
      throw new Error(
        `--changed takes ruleset files, and ${f} is a directory: write it before --changed`,
      );
  }
  const dirs = paths.length > 0 ? paths : [...new Set(changed.map((f) => dirname(f)))];
  if (opts.changedSince !== undefined) {
    if (dirs.length === 0)
      throw new Error(
        '--changed-since needs the rules directory, e.g. httpsify check rules/ --changed-since origin/main',
      );
    for (const dir of dirs) {
      if (!statSync(dir).isDirectory())
        throw new Error(`${dir}: --changed-since needs a directory`);
      changed.push(...changedSince(dir, opts.changedSince));
    }
  }
  return { paths: dirs, changed };
}

interface CheckCliOptions {
  format: string;
  config?: string | false;
  outputFile?: string;
  counts?: boolean;
  quiet?: boolean;
  info?: boolean;
  changed?: string[];
  changedSince?: string;
  baseline: string | false;
  writeBaseline?: boolean;
  fix?: boolean;
  fixDryRun?: boolean;
  write?: boolean;
  maxWarnings: string;
  progress?: boolean;
}

export function registerCheck(program: Command): void {
  addProgressOptions(program.command('check'))
    .description(
      'validate and lint ruleset files: structure, targets, rules, exclusions, secure cookies, and checks across files',
    )
    .argument(
      '[paths...]',
      'ruleset files or directories of *.xml (default: the current directory)',
    )
    .option(
      '-f, --format <format>',
      'text, json or sarif (SARIF 2.1.0, for code-scanning UIs)',
      'text',
    )
    .option(
      '-o, --output-file <path>',
      'write the report to this file instead of stdout (its directory is created)',
    )
    .option('--counts', 'print the number of findings per code')
    .option('-q, --quiet', 'print errors only')
    .option('--info', 'also print informational findings (changes-domain)')
    .option(
      '--changed <files...>',
      'report only these files; checks across files still see every file of [paths] (default: their directories)',
    )
    .option(
      '--changed-since <rev>',
      'report only the *.xml files that differ from git revision <rev> (plus untracked ones)',
    )
    .option(
      '--baseline <file>',
      'hide the findings this baseline lists for unchanged files',
      DEFAULT_BASELINE,
    )
    .option('--no-baseline', 'ignore the baseline file')
    .option(
      '--write-baseline',
      `write the current findings to the baseline file (${DEFAULT_BASELINE} unless --baseline)`,
    )
    .option(
      '-c, --config <file>',
      `severities per code and files to ignore (default: ${DEFAULT_CONFIG} here, if there is one)`,
    )
    .option('--no-config', `ignore ${DEFAULT_CONFIG}`)
    .option(
      '--fix',
      'write the automatic fixes to the files (trivialise rules, escape host dots, ".+" in secure cookies), then report what is left',
    )
    .option(
      '--fix-dry-run',
      'print the automatic fixes as a unified diff, writing nothing (exit 1 while any are pending)',
    )
    .option('--write', 'with --fix: the old spelling of --fix, which now writes by itself')
    .option(
      '--max-warnings <n>',
      'exit 1 when more than n warnings are left after the baseline (as ESLint; -1: no limit)',
      '-1',
    )
    .action(async (paths: string[], opts: CheckCliOptions) => {
      const format = parseReportFormat(opts.format);
      const maxWarnings = parseMaxWarnings(opts.maxWarnings);
      checkFixOptions(opts);
      checkOutputOption(opts);
      const config = loadCheckConfig(opts.config);
      const scope = resolveChangedOptions(paths, opts);
      if (opts.writeBaseline === true && scope.changed !== undefined) {
        throw new Error(
          '--write-baseline records every file: run it without --changed/--changed-since',
        );
      }
      if (opts.fixDryRun === true) {
        if (format === 'sarif')
          throw new Error(
            '--fix-dry-run prints a diff (or json), not SARIF: leave out --format sarif',
          );
        const fixes = runFix(scope.paths, { changed: scope.changed, rounds: 1, config });
        await emitReport(FIX_FORMATS, format, fixes, { outputFile: opts.outputFile });
        process.stderr.write(fixSummaryLine(fixes, false));
        // As `git diff --exit-code` and `links fix --diff`: 1 while fixes are pending (shown but
        // not written, or more than the rounds could apply) or left out.
        if (fixes.changed.length > 0 || fixes.rejected > 0 || fixes.pending > 0)
          process.exitCode = 1;
        return;
      }
      let fixed: FixReport | null = null;
      if (opts.fix === true) {
        // Plain --fix used to print the diff: say once per run that it writes now.
        if (opts.write !== true) process.stderr.write(FIX_NOTICE);
        fixed = runFix(scope.paths, { changed: scope.changed, rounds: 10, config });
        for (const c of fixed.changed) await writeOutputFile(c.file, c.fixed);
        process.stderr.write(fixSummaryLine(fixed, true));
      }
      const baselinePath = opts.baseline === false ? null : findBaseline(opts.baseline);
      const report = runCheck(scope.paths, {
        changed: scope.changed,
        baseline: opts.writeBaseline === true ? null : baselinePath,
        config,
        progress: new ProgressBar(process.stderr, 0, 'files', opts.progress),
      });
      if (opts.writeBaseline === true) {
        const path = baselinePath ?? DEFAULT_BASELINE;
        const written = writeBaseline(path, 'check', report.unfiltered, report.hashes, scope.paths);
        process.stderr.write(baselineWrittenLine(path, 'check', written, scope.paths));
        return;
      }
      // After --fix, as ESLint: the report and the exit status are those of what is left.
      const output: CheckOutput = { report, fixed, shown: opts, cwd: process.cwd() };
      await emitReport(CHECK_FORMATS, format, output, { outputFile: opts.outputFile });
      process.stderr.write(checkSummaryLine(report, scope.changed !== undefined, opts));
      raiseExitCode(findingsExitCode(report, maxWarnings));
    });
}

/**
 * `check --fix` writes, as ESLint's --fix does. It used to print a diff (`--fix --write` wrote):
 * a script or a CI log that still expects the diff is told why there is none, on every run.
 */
const FIX_NOTICE =
  'httpsify: note: check --fix now writes the fixes to the files, as ESLint does; --fix-dry-run prints the diff only\n';

/** The combinations of --fix, --fix-dry-run, --write and --write-baseline that make sense. */
function checkFixOptions(opts: {
  fix?: boolean;
  fixDryRun?: boolean;
  write?: boolean;
  writeBaseline?: boolean;
}): void {
  if (opts.fix === true && opts.fixDryRun === true)
    throw new Error(
      '--fix writes the fixes and --fix-dry-run only prints them: give one of the two',
    );
  if (opts.write === true && opts.fixDryRun === true)
    throw new Error('--fix-dry-run writes nothing: leave out --write (or use --fix, which writes)');
  if (opts.write === true && opts.fix !== true)
    throw new Error('--write applies fixes: use it with --fix');
  if (opts.writeBaseline === true && (opts.fix === true || opts.fixDryRun === true))
    throw new Error('--write-baseline records the findings as they are: run it apart from --fix');
}

/**
 * `-o, --output-file` of check and test, checked before any work: a typo costs nothing. With
 * --write-baseline there is no report to write.
 */
export function checkOutputOption(opts: { outputFile?: string; writeBaseline?: boolean }): void {
  if (opts.outputFile === undefined) return;
  if (opts.writeBaseline === true)
    throw new Error('--write-baseline writes the baseline and no report: leave out --output-file');
  checkReportPath(opts.outputFile, `--output-file ${opts.outputFile}`);
}

export type ReportFormat = 'text' | 'json' | 'sarif';

/** `-f, --format` of check and test. */
export function parseReportFormat(value: string): ReportFormat {
  if (value !== 'text' && value !== 'json' && value !== 'sarif')
    throw new Error(`--format must be text, json or sarif, not "${value}"`);
  return value;
}

/** `--max-warnings n` as ESLint takes it: a whole number, or -1 for no limit. */
export function parseMaxWarnings(value: string): number {
  if (!/^(-1|[0-9]+)$/.test(value))
    throw new Error(
      `--max-warnings must be a whole number (or -1 for no limit), got ${JSON.stringify(value)}`,
    );
  return Number(value);
}

/** More warnings are left than `--max-warnings` allows (-1: no limit). */
export function tooManyWarnings(warnings: number, max: number): boolean {
  return max >= 0 && warnings > max;
}

/**
 * The exit status of check and test, after the report: 1 when an error is left, or more warnings
 * than `--max-warnings` allows (then said on stderr); else 0.
 */
export function findingsExitCode(
  report: { errors: number; warnings: number },
  maxWarnings: number,
): 0 | 1 {
  const tooMany = tooManyWarnings(report.warnings, maxWarnings);
  if (tooMany) process.stderr.write(tooManyWarningsLine(report.warnings, maxWarnings));
  return report.errors > 0 || tooMany ? 1 : 0;
}

/** A check run as its reports see it. */
interface CheckOutput {
  report: CheckReport;
  /** What --fix wrote before the checks ran, or null. */
  fixed: FixReport | null;
  shown: FindingsShown & { counts?: boolean };
  cwd: string;
}

/** Text and SARIF show what a person should see (--quiet, --info); JSON holds everything. */
const CHECK_FORMATS: Formatters<CheckOutput, ReportFormat> = {
  text: (o) => checkText(o.report, o.shown),
  json: (o) => checkJson(o.report, o.fixed),
  sarif: (o) => findingsSarif(shownFindings(o.report.diagnostics, o.shown), o.cwd, cliVersion()),
};

/** `--fix-dry-run`: the diff, or the fixes as JSON. */
const FIX_FORMATS: Formatters<FixReport, 'text' | 'json'> = { text: fixesDiff, json: fixesJson };
