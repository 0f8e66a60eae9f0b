import type { Command } from '../shared/commander.js';
import { createEngine, type Diagnostic, type Ruleset } from '@httpsify/engine';
import { checkRulesetRegexes, parseRulesetXml } from '@httpsify/engine/parse';
import { applySuppressions, rulesetCoverage, suppressionsOf } from '@httpsify/engine/authoring';
import {
  DEFAULT_BASELINE,
  filterByBaseline,
  findBaseline,
  readBaseline,
  writeBaseline,
} from '../authoring/baseline.js';
import { resolve } from 'node:path';
import { readRulesetSource } from '../authoring/ruleset-files.js';
import {
  applyRuleSettings,
  DEFAULT_CONFIG,
  loadCheckConfig,
  selectRulesetFiles,
  type CheckConfig,
} from '../authoring/check-config.js';
import {
  checkOutputOption,
  findingsExitCode,
  parseMaxWarnings,
  parseReportFormat,
  resolveChangedOptions,
  type ReportFormat,
} from './check.js';
import { testJson } from '../formats/json/findings.js';
import { findingsSarif } from '../formats/sarif/findings.js';
import { baselineWrittenLine, testText } from '../formats/text/findings.js';
import { emitReport, raiseExitCode, type Formatters } from '../shared/emit-report.js';
import { cliVersion } from '../shared/version.js';
import { addProgressOptions, ProgressBar } from '../shared/progress.js';

export interface TestSummary {
  file: string;
  name: string;
  tests: number;
  problems: number;
}

export interface TestReport {
  rulesets: TestSummary[];
  skippedDefaultOff: number;
  diagnostics: Diagnostic[];
  counts: Record<string, number>;
  errors: number;
  warnings: number;
  /** Findings hidden by `<!-- httpsify-ignore -->` comments and by the baseline. */
  suppressed: number;
  baselineHidden: number;
  baselineHiddenFiles: number;
  /** Baseline entries for file contents not seen in this run (only counted when every file is in scope). */
  baselineStale: number;
  /** The config file used (null: none), and the files its `ignores` left out. */
  config: string | null;
  ignored: number;
  /** Findings before the baseline, and each file's SHA-256, for --write-baseline. */
  unfiltered: Diagnostic[];
  hashes: Map<string, string>;
}

export interface TestOptions {
  includeDefaultOff?: boolean;
  /** Baseline file to hide known findings with; null or absent: none. */
  baseline?: string | null;
  /** Only these files are tested; the others still take part as the rulesets that may rewrite an excluded URL. */
  changed?: readonly string[];
  /** httpsify.config.json: severities per code, and files left out (not even as other rulesets). */
  config?: CheckConfig | null;
  /** Drawn as files are read and rulesets tested; cleared before runTest returns. */
  progress?: ProgressBar;
}

/** Offline coverage over the given files; other rulesets in the same run are checked against excluded URLs. */
export function runTest(paths: readonly string[], options: TestOptions = {}): TestReport {
  const found: Diagnostic[] = [];
  const rulesets: Ruleset[] = [];
  const hashes = new Map<string, string>();
  const suppressions = new Map<string, ReturnType<typeof suppressionsOf>['suppressions']>();
  const config = options.config ?? null;
  const { files, changed, ignored } = selectRulesetFiles(paths, options.changed, config);
  const inScope = (file: string): boolean => changed === null || changed.has(resolve(file));
  options.progress?.phase('files read', files.length);
  for (const file of files) {
    options.progress?.tick();
    const source = readRulesetSource(file);
    hashes.set(file, source.sha256);
    const parsed = parseRulesetXml(source.text, file);
    const declared = suppressionsOf(source.text, file);
    suppressions.set(file, declared.suppressions);
    found.push(...parsed.diagnostics, ...declared.diagnostics);
    if (parsed.ruleset !== null) rulesets.push(parsed.ruleset);
  }
  // Built on first use: only an excluded test URL needs every ruleset's engine.
  let engine: ReturnType<typeof createEngine> | null = null;
  const others = {
    rewriteWithRuleset: (url: string) =>
      (engine ??= createEngine(rulesets)).rewriteWithRuleset(url),
  };
  const tested: { ruleset: Ruleset; file: string; tests: number }[] = [];
  let skipped = 0;
  options.progress?.phase('rulesets tested', rulesets.length);
  for (const ruleset of rulesets) {
    options.progress?.tick();
    if (!inScope(ruleset.loc?.file ?? '')) continue;
    if (ruleset.defaultOff !== undefined && options.includeDefaultOff !== true) {
      skipped++;
      continue;
    }
    const result = rulesetCoverage(ruleset, others);
    // A pattern the regex door refuses turns the whole ruleset off wherever it runs: a failure
    // of this ruleset, whatever its tests say.
    found.push(...result.diagnostics, ...checkRulesetRegexes([ruleset]).diagnostics);
    tested.push({ ruleset, file: ruleset.loc?.file ?? '', tests: result.tests.length });
  }
  options.progress?.clear();
  let suppressed = 0;
  const diagnostics: Diagnostic[] = [];
  for (const d of applyRuleSettings(found, config)) {
    if (!inScope(d.file)) continue;
    const { kept } = applySuppressions([d], suppressions.get(d.file) ?? []);
    if (kept.length === 0) suppressed++;
    else diagnostics.push(d);
  }
  const baseline = options.baseline == null ? null : readBaseline(options.baseline);
  const filtered = filterByBaseline(diagnostics, hashes, baseline, 'test', {
    baseline: options.baseline ?? '',
    scope: paths,
  });
  const problems = new Map<string, number>();
  for (const d of filtered.kept) problems.set(d.file, (problems.get(d.file) ?? 0) + 1);
  const summaries = tested.map(({ ruleset, file, tests }) => ({
    file,
    name: ruleset.name,
    tests,
    problems: problems.get(file) ?? 0,
  }));
  const counts: Record<string, number> = {};
  for (const d of filtered.kept) counts[d.code] = (counts[d.code] ?? 0) + 1;
  return {
    rulesets: summaries,
    skippedDefaultOff: skipped,
    diagnostics: filtered.kept,
    counts,
    errors: filtered.kept.filter((d) => d.severity === 'error').length,
    warnings: filtered.kept.filter((d) => d.severity === 'warning').length,
    suppressed,
    baselineHidden: filtered.hidden,
    baselineHiddenFiles: filtered.hiddenFiles,
    baselineStale: changed === null ? filtered.stale : 0,
    config: config?.file ?? null,
    ignored,
    unfiltered: diagnostics,
    hashes,
  };
}

/** What test prints: text (findings, a line per ruleset, totals, counts), JSON, SARIF. */
const TEST_FORMATS: Formatters<TestReport, ReportFormat> = {
  text: testText,
  json: testJson,
  sarif: (report) => findingsSarif(report.diagnostics, process.cwd(), cliVersion()),
};

export function registerTest(program: Command): void {
  addProgressOptions(program.command('test'))
    .description(
      'offline test coverage of rulesets: every test owned by a rule or exclusion, enough tests per branch, no network',
    )
    .argument(
      '[paths...]',
      'ruleset files or directories of *.xml (default: the current directory)',
    )
    .option('--include-default-off', 'also test rulesets that are off by default')
    .option(
      '--changed <files...>',
      'test only these files; the others of [paths] (default: their directories) still count as rulesets that may rewrite an excluded URL',
    )
    .option(
      '--changed-since <rev>',
      'test only the *.xml files that differ from git revision <rev> (plus untracked ones)',
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
      '--max-warnings <n>',
      'exit 1 when more than n warnings are left after the baseline (as ESLint; -1: no limit)',
      '-1',
    )
    .action(
      async (
        paths: string[],
        opts: {
          includeDefaultOff?: boolean;
          format: string;
          outputFile?: string;
          config?: string | false;
          baseline: string | false;
          writeBaseline?: boolean;
          changed?: string[];
          changedSince?: string;
          maxWarnings: string;
          progress?: boolean;
        },
      ) => {
        const format = parseReportFormat(opts.format);
        const maxWarnings = parseMaxWarnings(opts.maxWarnings);
        checkOutputOption(opts);
        const config = loadCheckConfig(opts.config);
        const scope = resolveChangedOptions(paths, opts);
        if (opts.writeBaseline === true && scope.changed !== undefined) {
          throw new Error(
            '--write-baseline records every file: run it without --changed/--changed-since',
          );
        }
        const baselinePath = opts.baseline === false ? null : findBaseline(opts.baseline);
        const report = runTest(scope.paths, {
          includeDefaultOff: opts.includeDefaultOff === true,
          baseline: opts.writeBaseline === true ? null : baselinePath,
          changed: scope.changed,
          config,
          progress: new ProgressBar(process.stderr, 0, 'files', opts.progress),
        });
        if (opts.writeBaseline === true) {
          const path = baselinePath ?? DEFAULT_BASELINE;
          const written = writeBaseline(
            path,
            'test',
            report.unfiltered,
            report.hashes,
            scope.paths,
          );
          process.stderr.write(baselineWrittenLine(path, 'test', written, scope.paths));
          return;
        }
        await emitReport(TEST_FORMATS, format, report, { outputFile: opts.outputFile });
        raiseExitCode(findingsExitCode(report, maxWarnings));
      },
    );
}
