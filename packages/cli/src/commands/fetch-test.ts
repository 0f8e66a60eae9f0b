import { writeFileSync } from 'node:fs';
import type { Command } from '../shared/commander.js';
import { formatDiagnostic } from '@httpsify/engine';
import { defaultRulesetsDir } from '@httpsify/engine/node';
import { collect } from '../shared/rules-option.js';
import { disableRulesetFile } from '../fetch-test/disable-ruleset.js';
import { ProgressBar } from '../shared/progress.js';
import { fetchTestJson } from '../formats/json/fetch-test.js';
import { fetchTestSummary, fetchTestUrlLine } from '../formats/text/fetch-test.js';
import { raiseExitCode } from '../shared/emit-report.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_TIMEOUT_MS,
  runFetchTest,
  type FetchTestReport,
} from '../fetch-test/run-fetch-test.js';

export {
  runFetchTest,
  type FetchTestOptions,
  type FetchTestReport,
} from '../fetch-test/run-fetch-test.js';

interface FetchTestCliOptions {
  rules?: string[];
  concurrency: string;
  timeout: string;
  json?: string;
  disableFailing?: boolean;
  includeDefaultOff?: boolean;
  resolve?: string[];
  ca?: string[];
  allowPrivate?: boolean;
}

function positiveInteger(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1)
    throw new Error(`${name} must be a positive integer, not "${value}"`);
  return n;
}

export function registerFetchTest(program: Command): void {
  program
    .command('fetch-test')
    .description(
      'live check: fetch each test URL over HTTP and its rewrite over HTTPS (following redirects through the rulesets) and compare',
    )
    .argument(
      '[paths...]',
      'ruleset files or directories of *.xml to test (default: the --rules rulesets, else the bundled ones)',
    )
    .option(
      '--rules <path>',
      'more rulesets (directory, XML file or bundle) that rewrite redirect targets; repeatable',
      collect,
    )
    .option('--concurrency <n>', 'test URLs fetched at once', String(DEFAULT_CONCURRENCY))
    .option('--timeout <ms>', 'time limit per request, in milliseconds', String(DEFAULT_TIMEOUT_MS))
    .option('--json <file>', 'also write the full report as JSON to this file')
    .option(
      '--disable-failing',
      'mark each failing ruleset default_off="failed ruleset test", with a comment saying why',
    )
    .option('--include-default-off', 'also test rulesets that are off by default')
    .option(
      '--resolve <host:ip>',
      'connect to IP for HOST instead of resolving it (repeatable, like curl)',
      collect,
    )
    .option('--ca <file>', 'also trust the CA certificates in this PEM file (repeatable)', collect)
    .option(
      '--allow-private',
      'also fetch loopback, private and link-local addresses (refused by default, also after DNS and redirects)',
    )
    .action(async (paths: string[], opts: FetchTestCliOptions) => {
      const underTest =
        paths.length > 0
          ? paths
          : opts.rules !== undefined && opts.rules.length > 0
            ? opts.rules
            : [defaultRulesetsDir()];
      const progress: { bar: ProgressBar | null } = { bar: null };
      const report = await runFetchTest({
        paths: underTest,
        rules: paths.length > 0 ? (opts.rules ?? []) : [],
        concurrency: positiveInteger('--concurrency', opts.concurrency),
        timeoutMs: positiveInteger('--timeout', opts.timeout),
        resolve: opts.resolve ?? [],
        caFiles: opts.ca ?? [],
        includeDefaultOff: opts.includeDefaultOff === true,
        allowPrivate: opts.allowPrivate === true,
        onStart: (total) => {
          progress.bar = new ProgressBar(process.stderr, total);
          progress.bar.render();
        },
        onProgress: () => progress.bar?.tick(),
        onResult: (result) => {
          progress.bar?.clear();
          process.stdout.write(`${fetchTestUrlLine(result)}\n`);
          progress.bar?.render();
        },
      });
      progress.bar?.clear();
      for (const d of report.diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
      const disabled = opts.disableFailing === true ? await disableFailing(report) : [];
      // The URLs' lines went out as each was fetched (above); the summary follows them.
      process.stdout.write(`${fetchTestSummary(report, disabled)}\n`);
      if (opts.json !== undefined) writeFileSync(opts.json, fetchTestJson(report, disabled));
      raiseExitCode(fetchTestExitCode(report));
    });
}

/** 1 when a ruleset failed or a ruleset file has errors; else 0. */
function fetchTestExitCode(report: FetchTestReport): 0 | 1 {
  return report.failedRulesets > 0 || report.diagnostics.some((d) => d.severity === 'error')
    ? 1
    : 0;
}

/** Disables every failing ruleset file; a file that cannot be edited is reported and left alone. */
async function disableFailing(report: FetchTestReport): Promise<string[]> {
  const done: string[] = [];
  for (const r of report.rulesets) {
    if (r.verdict !== 'failed' || r.file === '') continue;
    try {
      await disableRulesetFile(r.file, r.reasons);
      done.push(r.file);
    } catch (err) {
      process.stderr.write(`httpsify: cannot disable ${r.name}: ${(err as Error).message}\n`);
    }
  }
  return done;
}
