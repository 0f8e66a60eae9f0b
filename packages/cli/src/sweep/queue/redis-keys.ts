import { Redis } from 'ioredis';

/** The Redis keys of one named sweep (besides BullMQ's own `bull:NAME:*`). */
export interface SweepKeys {
  /** Hash: job key -> result JSON; the single source of "this URL is done". */
  results: string;
  /** List of job keys whose result was just stored, for the coordinator to journal. */
  done: string;
  /** Hash: worker id -> results it stored first (progress per worker). */
  workers: string;
  /** The id of the run these keys belong to. */
  run: string;
}

export function sweepKeys(name: string): SweepKeys {
  const p = `httpsify-sweep:${name}`;
  return { results: `${p}:results`, done: `${p}:done`, workers: `${p}:workers`, run: `${p}:run` };
}

/** Queue names become Redis key parts; keep them to a safe alphabet. */
export function checkQueueName(name: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
    throw new Error(
      `--queue-name ${JSON.stringify(name)}: use letters, digits, - and _ (at most 64)`,
    );
  return name;
}

/**
 * A connection for BullMQ and our own keys, once it answers: an unusable URL or an unreachable
 * server is an error that names it, not endless reconnect messages.
 */
export async function connect(url: string): Promise<Redis> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--queue ${JSON.stringify(url)}: not a URL; expected redis://HOST:PORT`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new Error(`--queue ${JSON.stringify(url)}: expected a redis:// or rediss:// URL`);
  // BullMQ's blocking commands need no per-request retry limit.
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    lazyConnect: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  let lastError = '';
  redis.on('error', (err: Error) => (lastError = err.message));
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new Error(
      `--queue ${parsed.host}: cannot reach Redis (${lastError !== '' ? lastError : (err as Error).message})`,
    );
  }
  return redis;
}

/**
 * Stores a result only if its key has none yet, and only then queues the key for the
 * coordinator and counts it for the worker: atomic, so a job delivered twice (a worker killed
 * after storing, before acknowledging) still makes exactly one result.
 */
export const STORE_ONCE = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
  return 1
end
return 0`;
