import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Journal } from '../journal.js';
import { SweepProgress } from '../progress.js';
import {
  checkInputs,
  countJobs,
  finishSweep,
  prepareSweep,
  type SweepOptions,
  type SweepOutcome,
} from '../run-sweep.js';
import type { SweepJob } from '../verdicts.js';
import { agreeOnPoliteness } from './host-leases.js';
import { MAX_STORED_RESULT_BYTES, trustedResult } from './queue-trust.js';
import { connect, sweepKeys } from './redis-keys.js';

export interface CoordinatorOptions extends SweepOptions {
  queueUrl: string;
  queueName: string;
  /** Jobs kept waiting in Redis at most; the input is read on as they drain (flat memory). */
  highWater?: number;
  log?: (line: string) => void;
}

/** BullMQ job ids must not be plain integers; a hash of the key is stable and never one. */
export const queueJobId = (key: string): string =>
  `u-${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A URL whose stored results were refused this often is given up (counted, not journaled). */
const MAX_REFUSED_PER_URL = 3;

/**
 * The coordinator of a queued sweep: feeds the jobs to BullMQ, journals the results the workers
 * store, and writes the same reports as the embedded sweep. Restarted after a kill, it finds
 * its run in `outDir/queue-run.json`, journals every stored result the journal lacks, and feeds
 * only the jobs with no result (a job still queued is not added twice: its id is its key's).
 *
 * Nothing read back from Redis is trusted (queue-trust.ts): a result is taken only for a job
 * this coordinator derived from its own library and has not journaled yet, and only its
 * measured fields; everything else is refused with a counted warning, and the URL is swept again.
 */
export async function runCoordinator(
  options: CoordinatorOptions,
): Promise<SweepOutcome & { perWorker: Record<string, number> }> {
  const previous = checkInputs(options);
  mkdirSync(options.outDir, { recursive: true });
  const keys = sweepKeys(options.queueName);
  const redis = await connect(options.queueUrl);
  let agreed: { close(): void };
  try {
    // Before anything is fed: workers started with other per-host settings are refused, or this.
    agreed = await agreeOnPoliteness(redis, options.queueName, options.request);
  } catch (err) {
    redis.disconnect();
    throw err;
  }
  // BullMQ leaves a connection it was given open on close(): ours to end.
  const queueConnection = await connect(options.queueUrl);
  const queue = new Queue<SweepJob>(options.queueName, { connection: queueConnection });
  const setup = await prepareSweep(options);
  const log = options.log ?? (() => undefined);
  const resultsPath = join(options.outDir, 'results.jsonl');
  const runPath = join(options.outDir, 'queue-run.json');
  try {
    // A run is resumed only when this directory and Redis agree on its id; anything else starts
    // over, so an old sweep's stored results never leak into a new one.
    const localRun =
      options.fresh !== true && existsSync(runPath)
        ? (JSON.parse(readFileSync(runPath, 'utf8')) as { run?: string }).run
        : undefined;
    const remoteRun = await redis.get(keys.run);
    const resuming = localRun !== undefined && localRun === remoteRun;
    if (!resuming) {
      await queue.obliterate({ force: true });
      await redis.del(keys.results, keys.done, keys.workers);
      const run = randomUUID();
      await redis.set(keys.run, run);
      writeFileSync(runPath, `${JSON.stringify({ run, queue: options.queueName })}\n`);
    }
    const journal = await Journal.open(resultsPath, { fresh: !resuming });
    const resumedFrom = journal.done.size;
    const progress =
      options.progress !== undefined ? new SweepProgress(options.progress, 0, resumedFrom) : null;
    // Jobs fed and not yet journaled: the only keys whose stored results are read. Bounded by
    // what waits in Redis (highWater) plus what workers hold.
    const pending = new Map<string, SweepJob>();
    const refusedTimes = new Map<string, number>();
    const givenUp = new Set<string>();
    let refusedCount = 0;
    const requeue = async (job: SweepJob): Promise<void> => {
      await queue.add('url', job, {
        jobId: queueJobId(job.key),
        removeOnComplete: true,
        removeOnFail: false,
      });
    };
    const refuse = async (job: SweepJob, why: string): Promise<void> => {
      refusedCount++;
      const times = (refusedTimes.get(job.key) ?? 0) + 1;
      refusedTimes.set(job.key, times);
      log(
        `warning: refused a stored result for ${job.url}: ${why} (${refusedCount} refused so far)`,
      );
      await redis.hdel(keys.results, job.key);
      if (times >= MAX_REFUSED_PER_URL) {
        pending.delete(job.key);
        givenUp.add(job.key);
        log(`warning: gave up on ${job.url} after ${times} refused results; it has no result`);
      } else {
        await requeue(job);
      }
    };
    /** Journals the stored results of these pending jobs; returns how many, and which had none. */
    const journalStored = async (
      jobs: SweepJob[],
    ): Promise<{ journaled: number; missing: SweepJob[] }> => {
      const missing: SweepJob[] = [];
      if (jobs.length === 0) return { journaled: 0, missing };
      // Sizes first: a value too large to be a result is refused without being read.
      const sizes = await Promise.all(jobs.map((j) => redis.hstrlen(keys.results, j.key)));
      const readable = jobs.filter((_, i) => (sizes[i] ?? 0) <= MAX_STORED_RESULT_BYTES);
      const values =
        readable.length > 0 ? await redis.hmget(keys.results, ...readable.map((j) => j.key)) : [];
      const stored = new Map(readable.map((j, i) => [j.key, values[i] ?? null]));
      let n = 0;
      for (const [i, job] of jobs.entries()) {
        if ((sizes[i] ?? 0) > MAX_STORED_RESULT_BYTES) {
          await refuse(job, `stored result of ${sizes[i]} bytes`);
          continue;
        }
        const text = stored.get(job.key) ?? null;
        if (text === null) {
          missing.push(job);
          continue;
        }
        const result = trustedResult(job, text);
        if ('refused' in result) {
          await refuse(job, result.refused);
          continue;
        }
        pending.delete(job.key);
        if (journal.append(result)) n++;
      }
      progress?.tick(n);
      return { journaled: n, missing };
    };
    let unknownKeys = 0;
    const drain = async (): Promise<number> => {
      let n = 0;
      for (;;) {
        const batch = await redis.lpop(keys.done, 500);
        if (batch === null || batch.length === 0) return n;
        const jobs: SweepJob[] = [];
        for (const k of batch) {
          const job = pending.get(k);
          if (job !== undefined) jobs.push(job);
          else if (!journal.done.has(k) && !givenUp.has(k)) unknownKeys++;
        }
        n += (await journalStored(jobs)).journaled;
      }
    };
    let recovered = 0;

    const total = await countJobs(setup.jobs());
    progress?.setTotal(total);
    const highWater = options.highWater ?? 5000;
    let batch: {
      name: string;
      data: SweepJob;
      opts: { jobId: string; removeOnComplete: boolean; removeOnFail: boolean };
    }[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      await queue.addBulk(batch);
      batch = [];
      for (;;) {
        await drain();
        const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed');
        if ((counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0) < highWater)
          return;
        await sleep(100);
      }
    };
    // Results stored while no coordinator was journaling (a resumed run) are taken first; the
    // rest is fed.
    let candidates: SweepJob[] = [];
    const feed = async (): Promise<void> => {
      const jobs = candidates;
      candidates = [];
      for (const job of jobs) pending.set(job.key, job);
      const { journaled, missing } = resuming
        ? await journalStored(jobs)
        : { journaled: 0, missing: jobs };
      recovered += journaled;
      for (const job of missing)
        batch.push({
          name: 'url',
          data: job,
          opts: { jobId: queueJobId(job.key), removeOnComplete: true, removeOnFail: false },
        });
      await flush();
    };
    for await (const job of setup.jobs()) {
      if (journal.done.has(job.key) || pending.has(job.key)) continue;
      candidates.push(job);
      if (candidates.length >= 200) await feed();
    }
    await feed();
    if (resuming)
      log(`resumed run: ${resumedFrom} results in the journal, ${recovered} recovered from Redis`);

    // Wait for the rest; jobs BullMQ gave up on (stalled too often) are put back.
    let idleSince = Date.now();
    while (journal.done.size + givenUp.size < total) {
      const n = await drain();
      if (n > 0) idleSince = Date.now();
      const counts = await queue.getJobCounts(
        'waiting',
        'active',
        'delayed',
        'failed',
        'prioritized',
      );
      if ((counts.failed ?? 0) > 0) {
        log(`putting ${counts.failed} failed jobs back in the queue`);
        await queue.retryJobs({ state: 'failed' });
      } else if (
        n === 0 &&
        (counts.waiting ?? 0) +
          (counts.active ?? 0) +
          (counts.delayed ?? 0) +
          (counts.prioritized ?? 0) ===
          0 &&
        Date.now() - idleSince > 2000
      ) {
        // Every job finished but some results are missing (their jobs were removed): feed them again.
        for await (const job of setup.jobs()) {
          if (journal.done.has(job.key) || givenUp.has(job.key)) continue;
          pending.set(job.key, job);
          const { missing } = await journalStored([job]);
          for (const m of missing) await requeue(m);
        }
        idleSince = Date.now();
      }
      if (n === 0) await sleep(100);
    }
    journal.close();
    progress?.finish();
    if (refusedCount > 0 || unknownKeys > 0)
      log(
        `warning: ${refusedCount} stored results refused, ${unknownKeys} unknown keys ignored, ${givenUp.size} URLs left without a result`,
      );
    // Worker ids and counts are shown, not used: bounded and checked all the same.
    const perWorker = Object.fromEntries(
      Object.entries(
        (await redis.hlen(keys.workers)) <= 10_000 ? await redis.hgetall(keys.workers) : {},
      )
        .filter(([k, v]) => k.length <= 200 && /^\d{1,12}$/.test(v))
        .slice(0, 1000)
        .map(([k, v]) => [k.replace(/[^\x20-\x7e]/g, '?'), Number(v)]),
    );
    const done = await finishSweep(options, resultsPath, previous);
    return {
      ...done,
      ranNow: journal.done.size - resumedFrom,
      resumedFrom,
      resultsPath,
      discovery: setup.discovery,
      perWorker,
    };
  } finally {
    agreed.close();
    setup.close();
    await queue.close();
    queueConnection.disconnect();
    redis.disconnect();
  }
}
