import { hostname } from 'node:os';
import { Worker } from 'bullmq';
import type { SweepJob } from '../verdicts.js';
import { trustedJob } from './queue-trust.js';
import { connect, STORE_ONCE, sweepKeys } from './redis-keys.js';

export interface WorkerOptions {
  queueUrl: string;
  queueName: string;
  concurrency: number;
  /** How long a job's lock lasts without renewal: a killed worker's job is redelivered after it. */
  lockMs: number;
  check: (job: SweepJob) => Promise<import('../verdicts.js').SweepResult>;
  log?: (line: string) => void;
}

export interface RunningWorker {
  id: string;
  stored: () => number;
  close: () => Promise<void>;
}

/**
 * A sweep worker: takes jobs from the queue, sweeps each, and stores the result once per key.
 * It runs until closed (SIGINT/SIGTERM in the CLI); it holds no state worth saving, so killing
 * it at any moment loses nothing: its unfinished jobs go back to the queue when their lock ends.
 */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const keys = sweepKeys(options.queueName);
  const redis = await connect(options.queueUrl);
  const id = `${hostname()}:${process.pid}`;
  let stored = 0;
  const workerConnection = await connect(options.queueUrl);
  const worker = new Worker<SweepJob>(
    options.queueName,
    async (job) => {
      // A job is read from Redis like anything else there: checked before it is swept.
      const data = trustedJob(job.data);
      if (data === null) throw new Error(`job ${job.id ?? '?'} is not a sweep job; not swept`);
      const result = await options.check(data);
      const added = (await redis.eval(STORE_ONCE, 3, keys.results, keys.done, keys.workers, result.key, JSON.stringify(result), id)) as number;
      if (added === 1) stored++;
      return added;
    },
    {
      connection: workerConnection,
      concurrency: options.concurrency,
      lockDuration: options.lockMs,
      stalledInterval: Math.max(1000, Math.floor(options.lockMs / 2)),
      // Redelivered up to this often before BullMQ fails it; the coordinator retries failed ones.
      maxStalledCount: 3,
    },
  );
  worker.on('error', (err) => options.log?.(`worker ${id}: ${err.message}`));
  await worker.waitUntilReady();
  return {
    id,
    stored: () => stored,
    close: async () => {
      await worker.close();
      workerConnection.disconnect();
      redis.disconnect();
    },
  };
}
