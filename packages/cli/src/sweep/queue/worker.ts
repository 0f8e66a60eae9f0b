import { hostname } from 'node:os';
import { Queue, Worker, type JobJson } from 'bullmq';
import type { Redis } from 'ioredis';
import type { SweepJob } from '../verdicts.js';
import { trustedJob } from './queue-trust.js';
import { connect, STORE_ONCE, sweepKeys } from './redis-keys.js';

/**
 * A job's data (or any other field BullMQ parses) longer than this is refused before it is
 * parsed: a sweep job is a few hundred bytes, its fields 8 KB at most (queue-trust.ts).
 */
export const MAX_JOB_FIELD_BYTES = 64 * 1024;

/** Raw job hash fields BullMQ hands to JSON.parse when it gives a worker the job. */
const PARSED_FIELDS = ['data', 'opts', 'progress', 'parent'] as const;
const FIELD_WORDS = {
  data: 'its data is',
  opts: 'its options are',
  progress: 'its progress is',
  parent: 'its parent is',
} as const;

/** A job id from Redis, fit for a log line. */
const shownId = (id: string): string => id.replace(/[^\x20-\x7e]/g, '?').slice(0, 100);

/** BullMQ could not turn this job into a Job: its data is too large or not JSON. */
class UnparsableJob extends Error {
  constructor(
    readonly jobId: string,
    why: string,
  ) {
    super(`job ${shownId(jobId)}: ${why}`);
  }
}

/**
 * BullMQ (6.7.6, pinned) parses a job's data in Worker.createJob: an oversized one is refused
 * here before JSON.parse sees it, and either refusal names the job. (Its options are parsed
 * earlier, in BullMQ's Redis backend, where nothing names it.) Either way the worker's 'error'
 * event fires with the job left active: see removePoisonedJobs.
 */
class BoundedWorker extends Worker<SweepJob> {
  protected override createJob(
    json: JobJson,
    jobId: string,
  ): ReturnType<Worker<SweepJob>['createJob']> {
    const bytes = Buffer.byteLength(json.data);
    if (bytes > MAX_JOB_FIELD_BYTES) throw new UnparsableJob(jobId, `data of ${bytes} bytes`);
    try {
      return super.createJob(json, jobId);
    } catch (err) {
      throw new UnparsableJob(jobId, (err as Error).message);
    }
  }
}

/** Why a job's raw hash cannot be handed to a worker by BullMQ, or null when it can. */
export async function poisonedBecause(redis: Redis, jobKey: string): Promise<string | null> {
  // Sizes first: a huge field is refused without being read.
  const sizes = await Promise.all(PARSED_FIELDS.map((f) => redis.hstrlen(jobKey, f)));
  for (const [i, field] of PARSED_FIELDS.entries()) {
    if ((sizes[i] ?? 0) > MAX_JOB_FIELD_BYTES) return `${FIELD_WORDS[field]} ${sizes[i]} bytes`;
  }
  const values = await redis.hmget(jobKey, ...PARSED_FIELDS);
  for (const [i, field] of PARSED_FIELDS.entries()) {
    const text = values[i];
    if (text === null || text === undefined) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return `${FIELD_WORDS[field]} not JSON`;
    }
    const wrong = wrongShape(field, value);
    if (wrong !== null) return `${FIELD_WORDS[field]} ${wrong}`;
  }
  return null;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What BullMQ needs of a parsed field beyond being JSON, or null when it has it. Valid JSON of
 * the wrong type (options `null`, a parent `1`) throws inside BullMQ just as bad JSON does, or
 * reaches its Lua scripts, which index into it: such a job is removed like an unparsable one.
 * The data is checked later, by trustedJob, where a bad one fails as not a sweep job.
 */
function wrongShape(field: (typeof PARSED_FIELDS)[number], value: unknown): string | null {
  switch (field) {
    case 'opts':
      return isObject(value) ? null : 'not a JSON object';
    case 'parent':
      // The shape BullMQ writes for a child job: its parent's id and queue key.
      return isObject(value) && typeof value.id === 'string' && typeof value.queueKey === 'string'
        ? null
        : 'not a JSON object with an id and a queueKey';
    case 'progress':
      return (typeof value === 'number' && Number.isFinite(value)) || isObject(value)
        ? null
        : 'not a number or a JSON object';
    default:
      return null;
  }
}

/**
 * Removes the active jobs BullMQ cannot parse; returns which, and why.
 *
 * Why this way: a job written straight into Redis with non-JSON (or huge) data or options makes
 * BullMQ throw while taking it, before our processor or trustedJob runs. The job is then active,
 * locked by a token no processor holds: it never completes, the stalled check puts it back (or
 * fails on it), and the worker logs an error every few seconds. Checking the waiting jobs in
 * advance would race BullMQ's atomic take; instead, after such an error, the active list (a few
 * jobs per worker) is checked on the raw hashes and any job BullMQ could not parse is removed
 * with BullMQ's own removal (after dropping its lock, which no one can be using). Removed, not
 * failed: the coordinator puts failed jobs back, and this one would fail again for ever; if it
 * was one of the coordinator's own, the coordinator re-adds it from its library when the queue
 * runs dry without its result. With `only`, just that job: one the processor found poisoned
 * (valid JSON of the wrong type passes BullMQ's take), whose lock it holds and gives up.
 */
async function removePoisonedJobs(
  redis: Redis,
  queue: Queue,
  queueName: string,
  only?: string,
): Promise<{ id: string; why: string }[]> {
  const prefix = `bull:${queueName}`;
  const removed: { id: string; why: string }[] = [];
  for (const id of only !== undefined ? [only] : await redis.lrange(`${prefix}:active`, 0, 999)) {
    const why = await poisonedBecause(redis, `${prefix}:${id}`);
    if (why === null) continue;
    await redis.del(`${prefix}:${id}:lock`);
    if ((await queue.remove(id)) === 1) removed.push({ id, why });
  }
  return removed;
}

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
  const log = (line: string): void => options.log?.(`worker ${id}: ${line}`);
  // Only to remove jobs BullMQ cannot parse; on our own connection, which it leaves open.
  const janitor = new Queue(options.queueName, { connection: redis });
  // Jobs this worker removed (the latest ones), so an error about one is not logged again.
  const removedIds = new Set<string>();
  let lastRemovalAt = -Infinity;
  const noteRemoved = (removed: readonly { id: string; why: string }[]): void => {
    for (const { id: jobId, why } of removed) {
      log(`removed job ${shownId(jobId)} from the queue: ${why}; it cannot be swept`);
      removedIds.add(jobId);
      lastRemovalAt = Date.now();
      if (removedIds.size > 1000) removedIds.delete(removedIds.values().next().value as string);
    }
  };
  // One check at a time, after each error: any of them may come from a poisoned job (BullMQ
  // reports one it took along with finishing another as that other job's "Missing lock").
  let checking: Promise<unknown> = Promise.resolve();
  const checkActive = (only?: string): Promise<number> => {
    const run = checking.then(
      () => removePoisonedJobs(redis, janitor, options.queueName, only),
      () => removePoisonedJobs(redis, janitor, options.queueName, only),
    );
    checking = run;
    return run.then((removed) => {
      noteRemoved(removed);
      return removed.length;
    });
  };
  // Left by a worker killed before it could remove them.
  await checkActive();
  const worker = new BoundedWorker(
    options.queueName,
    async (job) => {
      // A job is read from Redis like anything else there: checked before it is swept. Fields
      // of the wrong type that BullMQ let through (options `5`, a parent `1`) would make its
      // finishing script fail with the job still active: such a job is removed here, unswept.
      // In turn with the checks after errors, so a job is removed, and logged, once.
      if (
        job.id !== undefined &&
        (await poisonedBecause(redis, `bull:${options.queueName}:${job.id}`)) !== null
      ) {
        await checkActive(job.id);
        return 0;
      }
      const data = trustedJob(job.data);
      if (data === null) throw new Error(`job ${job.id ?? '?'} is not a sweep job; not swept`);
      const result = await options.check(data);
      const added = (await redis.eval(
        STORE_ONCE,
        3,
        keys.results,
        keys.done,
        keys.workers,
        result.key,
        JSON.stringify(result),
        id,
      )) as number;
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
  worker.on('error', (err) => {
    checkActive().then(
      () => {
        // Logged once, as the removal: an error a poisoned job causes is not logged again.
        // Only a refused job's own error names it; BullMQ's others (a SyntaxError or TypeError
        // for its options, "Missing lock" for the job it was finishing) are matched to a recent removal.
        const explained =
          err instanceof UnparsableJob
            ? removedIds.has(err.jobId)
            : ((err instanceof SyntaxError ||
                err instanceof TypeError ||
                err.message.startsWith('Missing lock for job')) &&
                Date.now() - lastRemovalAt < 10_000) ||
              // BullMQ finishing a job the processor removed as poisoned.
              [...removedIds].some((r) => err.message.startsWith(`Missing key for job ${r}.`));
        if (!explained) log(err.message);
      },
      (checkErr: Error) =>
        log(`${err.message} (and checking the active jobs failed: ${checkErr.message})`),
    );
  });
  await worker.waitUntilReady();
  return {
    id,
    stored: () => stored,
    close: async () => {
      await worker.close();
      await checking.catch(() => undefined);
      await janitor.close();
      workerConnection.disconnect();
      redis.disconnect();
    },
  };
}
