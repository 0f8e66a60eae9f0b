import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Journal } from '../journal.js';
import { SweepProgress } from '../progress.js';
import { checkInputs, countJobs, finishSweep, prepareSweep, type SweepOptions, type SweepOutcome } from '../run-sweep.js';
import type { SweepJob, SweepResult } from '../verdicts.js';
import { connect, sweepKeys } from './redis-keys.js';

export interface CoordinatorOptions extends SweepOptions {
  queueUrl: string;
  queueName: string;
  /** Jobs kept waiting in Redis at most; the input is read on as they drain (flat memory). */
  highWater?: number;
  log?: (line: string) => void;
}

/** BullMQ job ids must not be plain integers; a hash of the key is stable and never one. */
export const queueJobId = (key: string): string => `u-${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The coordinator of a queued sweep: feeds the jobs to BullMQ, journals the results the workers
 * store, and writes the same reports as the embedded sweep. Restarted after a kill, it finds
 * its run in `outDir/queue-run.json`, journals every stored result the journal lacks, and feeds
 * only the jobs with no result (a job still queued is not added twice: its id is its key's).
 */
export async function runCoordinator(options: CoordinatorOptions): Promise<SweepOutcome & { perWorker: Record<string, number> }> {
  const previous = checkInputs(options);
  mkdirSync(options.outDir, { recursive: true });
  const keys = sweepKeys(options.queueName);
  const redis = await connect(options.queueUrl);
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
    const localRun = options.fresh !== true && existsSync(runPath) ? (JSON.parse(readFileSync(runPath, 'utf8')) as { run?: string }).run : undefined;
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
    const progress = options.progress !== undefined ? new SweepProgress(options.progress, 0, resumedFrom) : null;
    const journalKeys = async (batch: string[]): Promise<number> => {
      if (batch.length === 0) return 0;
      const values = await redis.hmget(keys.results, ...batch);
      let n = 0;
      for (const v of values) if (v !== null && journal.append(JSON.parse(v) as SweepResult)) n++;
      progress?.tick(n);
      return n;
    };
    if (resuming) {
      // Results stored while no coordinator was journaling (or popped and lost by the kill).
      let cursor = '0';
      let recovered = 0;
      do {
        const [next, flat] = await redis.hscan(keys.results, cursor, 'COUNT', 1000);
        cursor = next;
        for (let i = 0; i + 1 < flat.length; i += 2) if (journal.append(JSON.parse(flat[i + 1] as string) as SweepResult)) recovered++;
      } while (cursor !== '0');
      log(`resumed run: ${resumedFrom} results in the journal, ${recovered} recovered from Redis`);
    }
    const drain = async (): Promise<number> => {
      let n = 0;
      for (;;) {
        const batch = await redis.lpop(keys.done, 500);
        if (batch === null || batch.length === 0) return n;
        n += await journalKeys(batch.filter((k) => !journal.done.has(k)));
      }
    };

    const total = await countJobs(setup.jobs());
    progress?.setTotal(total);
    const highWater = options.highWater ?? 5000;
    let batch: { name: string; data: SweepJob; opts: { jobId: string; removeOnComplete: boolean; removeOnFail: boolean } }[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      await queue.addBulk(batch);
      batch = [];
      for (;;) {
        await drain();
        const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed');
        if ((counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0) < highWater) return;
        await sleep(100);
      }
    };
    for await (const job of setup.jobs()) {
      if (journal.done.has(job.key)) continue;
      batch.push({ name: 'url', data: job, opts: { jobId: queueJobId(job.key), removeOnComplete: true, removeOnFail: false } });
      if (batch.length >= 200) await flush();
    }
    await flush();

    // Wait for the rest; jobs BullMQ gave up on (stalled too often) are put back.
    let idleSince = Date.now();
    while (journal.done.size < total) {
      const n = await drain();
      if (n > 0) idleSince = Date.now();
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
      if ((counts.failed ?? 0) > 0) {
        log(`putting ${counts.failed} failed jobs back in the queue`);
        await queue.retryJobs({ state: 'failed' });
      } else if (
        n === 0 &&
        (counts.waiting ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0) === 0 &&
        Date.now() - idleSince > 2000
      ) {
        // Every job finished but some results are missing (their jobs were removed): feed them again.
        for await (const job of setup.jobs()) {
          if (!journal.done.has(job.key)) await queue.add('url', job, { jobId: queueJobId(job.key), removeOnComplete: true, removeOnFail: false });
        }
        idleSince = Date.now();
      }
      if (n === 0) await sleep(100);
    }
    journal.close();
    progress?.finish();
    const perWorker = Object.fromEntries(Object.entries(await redis.hgetall(keys.workers)).map(([k, v]) => [k, Number(v)]));
    const done = await finishSweep(options, resultsPath, previous);
    return { ...done, ranNow: journal.done.size - resumedFrom, resumedFrom, resultsPath, discovery: setup.discovery, perWorker };
  } finally {
    setup.close();
    await queue.close();
    queueConnection.disconnect();
    redis.disconnect();
  }
}
