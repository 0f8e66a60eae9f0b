import { accessSync, constants, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine, type Engine, type Ruleset } from '@httpsify/engine';
import { isBundle, isRulesetDirectory, loadRulesets } from '@httpsify/engine/node';
import { checkJob } from './check-job.js';
import { discoveryJobs, writeDiscoveredRulesets, type DiscoveryCounts } from './discovery.js';
import { sweepHtml } from '../formats/html.js';
import { sweepSummaryJson } from '../formats/json/sweep.js';
import { libraryRulesets, readRulesetsFile, rulesetJobs } from './job-source.js';
import { Journal } from './journal.js';
import { sweepClient, type SweepRequestOptions } from './polite-settings.js';
import { SweepProgress } from './progress.js';
import { runPool } from './run-pool.js';
import { readSummary, summarize, type SweepSummary } from './summary.js';
import type { SweepJob, SweepResult } from './verdicts.js';
import { writeBack, type WriteBackOutcome } from './write-back.js';

export interface SweepOptions {
  /** The ruleset library: directories of *.xml, XML files, bundles, tar(.gz) archives. */
  paths: readonly string[];
  /** Discovery instead of health: a host list file. */
  discover?: string;
  /** Where results.jsonl, summary.json and report.html go (and discovered rulesets). */
  outDir: string;
  /** Start over instead of resuming the journal in `outDir`. */
  fresh?: boolean;
  concurrency: number;
  request: SweepRequestOptions;
  includeDefaultOff?: boolean;
  /** summary.json of an earlier sweep: the report's diff, and --write's confirmation. */
  previous?: string;
  write?: boolean;
  confirmAfterMs?: number;
  progress?: NodeJS.WriteStream;
  /** Problems with the input (bad ruleset files, bad host list lines). */
  onBad?: (message: string) => void;
}

export interface SweepOutcome {
  summary: SweepSummary;
  ranNow: number;
  resumedFrom: number;
  resultsPath: string;
  reportPath: string;
  summaryPath: string;
  writeBack: WriteBackOutcome | null;
  discovered: string[];
  discovery: DiscoveryCounts | null;
}

/** The whole library as one engine, to rewrite redirect targets the way a browser would. */
export async function libraryEngine(
  paths: readonly string[],
  onBad: (m: string) => void,
): Promise<Engine> {
  const [only] = paths;
  if (
    paths.length === 1 &&
    only !== undefined &&
    !isRulesetDirectory(only) &&
    isBundle(readRulesetsFile(only))
  ) {
    return loadRulesets(paths).engine;
  }
  const all: Ruleset[] = [];
  for await (const r of libraryRulesets(paths, onBad)) all.push(r);
  return createEngine(all);
}

/** Everything a process needs to sweep jobs: the library engine, the job stream, the checker. */
export interface SweepSetup {
  engine: Engine;
  jobs: () => AsyncGenerator<SweepJob>;
  discovery: DiscoveryCounts | null;
  check: (job: SweepJob) => Promise<SweepResult>;
  close: () => void;
}

export async function prepareSweep(
  options: Pick<SweepOptions, 'paths' | 'discover' | 'request' | 'includeDefaultOff' | 'onBad'>,
): Promise<SweepSetup> {
  const onBad = options.onBad ?? (() => undefined);
  const engine = await libraryEngine(options.paths, onBad);
  const client = sweepClient(options.request);
  const rewriteLocation = (url: string): string => engine.rewrite(url) ?? url;
  const discovery: DiscoveryCounts | null =
    options.discover !== undefined ? { covered: 0, bad: 0 } : null;
  // Input problems are reported once: ruleset files while the engine loads, host list lines on
  // the first pass over the list (a progress count makes a second).
  let passes = 0;
  const jobs = (): AsyncGenerator<SweepJob> => {
    const report = passes++ === 0;
    if (discovery === null)
      return rulesetJobs(options.paths, engine, {
        includeDefaultOff: options.includeDefaultOff === true,
        onBad: () => undefined,
      });
    discovery.covered = 0;
    discovery.bad = 0;
    return discoveryJobs(options.discover as string, engine, discovery, (m) =>
      report ? onBad(m) : undefined,
    );
  };
  return {
    engine,
    jobs,
    discovery,
    check: (job) => checkJob(job, client.settings, rewriteLocation),
    close: () => client.close(),
  };
}

/** Counts a job stream (the progress bar's total) without keeping it. */
export async function countJobs(jobs: AsyncIterable<SweepJob>): Promise<number> {
  let n = 0;
  for await (const _job of jobs) n++;
  return n;
}

/** Report files from the journal: summary.json, report.html, the discovered rulesets, --write. */
export async function finishSweep(
  options: SweepOptions,
  resultsPath: string,
  previous: SweepSummary | null,
): Promise<
  Pick<SweepOutcome, 'summary' | 'reportPath' | 'summaryPath' | 'writeBack' | 'discovered'>
> {
  const summary = await summarize(resultsPath);
  const summaryPath = join(options.outDir, 'summary.json');
  const reportPath = join(options.outDir, 'report.html');
  writeFileSync(summaryPath, sweepSummaryJson(summary));
  writeFileSync(
    reportPath,
    sweepHtml(
      summary,
      previous,
      options.discover !== undefined
        ? 'httpsify sweep: discovery'
        : 'httpsify sweep: ruleset health',
    ),
  );
  const discovered =
    options.discover !== undefined
      ? await writeDiscoveredRulesets(
          resultsPath,
          join(options.outDir, 'rulesets'),
          new Date().toISOString().slice(0, 10),
        )
      : [];
  const wb =
    options.write === true && options.discover === undefined
      ? await writeBack(summary, previous, options.confirmAfterMs ?? 0, options.paths)
      : null;
  return { summary, reportPath, summaryPath, writeBack: wb, discovered };
}

/** The embedded sweep: one process, no server. Resumes the journal in `outDir` if there is one. */
/**
 * What can be checked before sweeping is checked first, so a long sweep never ends on a usage
 * error: the previous summary is read, the host list must be readable.
 */
export function checkInputs(options: SweepOptions): SweepSummary | null {
  if (options.discover !== undefined) {
    try {
      accessSync(options.discover, constants.R_OK);
    } catch (err) {
      throw new Error(
        `--discover ${options.discover}: cannot read: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
      );
    }
  }
  return options.previous !== undefined ? readSummary(options.previous) : null;
}

export async function runSweep(options: SweepOptions): Promise<SweepOutcome> {
  const previous = checkInputs(options);
  mkdirSync(options.outDir, { recursive: true });
  const resultsPath = join(options.outDir, 'results.jsonl');
  const setup = await prepareSweep(options);
  try {
    const journal = await Journal.open(resultsPath, {
      fresh: options.fresh === true || !existsSync(resultsPath),
    });
    const resumedFrom = journal.done.size;
    let progress: SweepProgress | null = null;
    if (options.progress !== undefined) {
      const total = await countJobs(setup.jobs());
      progress = new SweepProgress(options.progress, total, resumedFrom);
    }
    let ranNow: number;
    try {
      ranNow = await runPool(setup.jobs(), journal, options.concurrency, setup.check, () =>
        progress?.tick(),
      );
    } finally {
      journal.close();
    }
    progress?.finish();
    const done = await finishSweep(options, resultsPath, previous);
    return { ...done, ranNow, resumedFrom, resultsPath, discovery: setup.discovery };
  } finally {
    setup.close();
  }
}
