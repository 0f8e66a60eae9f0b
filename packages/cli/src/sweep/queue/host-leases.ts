import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { PolitenessLimits, SharedHostLimits } from '../host-gate.js';

/**
 * One host's politeness across every worker of a queued sweep, in one atomic script on Redis's
 * own clock: a request may start when fewer than `limit` leases on the host are held and the
 * last start on it is `delay` ms old; it then takes a lease and becomes the last start. With
 * --queue a connection carries one request and is closed after it, so leases held are the
 * connections the host sees. A lease expires after `ttl` ms unless renewed (a killed worker's
 * leases free themselves). Returns 0 when granted, else how long to wait.
 */
export const ACQUIRE_HOST_LEASE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[2])
local delay = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local wait = 0
if held >= limit then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  wait = math.max(1, tonumber(first[2]) - now)
end
if last + delay > now then wait = math.max(wait, last + delay - now) end
if wait > 0 then return wait end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('SET', KEYS[2], now, 'PX', delay + 60000)
return 0`;

/** Keeps a held lease alive (Redis's clock); 0 when it had already expired. */
export const RENEW_HOST_LEASE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return n`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Redis keys of one host's leases and last start, under the sweep's queue name. */
export function hostLeaseKeys(queueName: string, host: string): [string, string] {
  const p = `httpsify-sweep:${queueName}:host:${host}`;
  return [`${p}:leases`, `${p}:start`];
}

/**
 * Per-host limits shared by all processes on one Redis: `acquire` polls the lease script (at
 * most every `maxPollMs`, less when the script says the wait is shorter) and renews the leases
 * it holds every third of their lifetime. `close` stops renewing.
 */
export function sharedHostLimits(
  redis: Redis,
  queueName: string,
  limits: Pick<PolitenessLimits, 'perHostConnections' | 'perHostDelayMs'>,
  options: { leaseMs: number; maxPollMs?: number },
): SharedHostLimits & { close(): void } {
  const owner = randomUUID();
  let n = 0;
  const held = new Map<string, string>();
  const renew = setInterval(
    () => {
      for (const [member, key] of held)
        void redis.eval(RENEW_HOST_LEASE, 1, key, member, options.leaseMs).catch(() => undefined);
    },
    Math.max(250, Math.floor(options.leaseMs / 3)),
  );
  renew.unref();
  const maxPoll = options.maxPollMs ?? 250;
  return {
    async acquire(host) {
      const [leases, start] = hostLeaseKeys(queueName, host);
      const member = `${owner}:${n++}`;
      for (;;) {
        const args = [member, limits.perHostConnections, limits.perHostDelayMs, options.leaseMs];
        const wait = Number(await redis.eval(ACQUIRE_HOST_LEASE, 2, leases, start, ...args));
        if (wait === 0) break;
        // A little jitter, so processes waiting on one host do not ask in lockstep.
        await sleep(Math.min(maxPoll, wait) + Math.random() * 10);
      }
      held.set(member, leases);
      return () => {
        if (!held.delete(member)) return;
        void redis.zrem(leases, member).catch(() => undefined);
      };
    },
    close: () => clearInterval(renew),
  };
}

/**
 * Stores the politeness settings of a queued sweep if none are, and keeps them alive while they
 * match; returns what is stored. KEYS[1] the settings key; ARGV[1] this process's settings;
 * ARGV[2] how long they outlive the last process that keeps them.
 */
export const AGREE_POLITENESS = `
local stored = redis.call('GET', KEYS[1])
if not stored then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
  return ARGV[1]
end
if stored == ARGV[1] then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
return stored`;

/** The stored settings outlive the last process of a sweep by this long. */
export const POLITENESS_TTL_MS = 60_000;

/** A sweep's per-host settings as flags, for messages; stored text is shown only if it parses. */
function settingsWords(json: string): string {
  if (json.length > 200) return 'settings that cannot be read';
  try {
    const v = JSON.parse(json) as Record<string, unknown>;
    const n = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
    if (n(v.perHostConnections) && n(v.perHostDelayMs))
      return `--per-host ${v.perHostConnections} --per-host-delay ${v.perHostDelayMs}`;
  } catch {
    // Shown as unreadable below.
  }
  return 'settings that cannot be read';
}

/**
 * Makes every process of a queued sweep (coordinator and workers) run with the same per-host
 * limits. The leases take each worker's own limit and delay, so one worker started with a
 * larger --per-host, or a shorter --per-host-delay, would take leases the others would not:
 * the host would see the most generous settings of any worker. So the first process stores its
 * settings in Redis, and a process whose settings differ refuses to start (rather than quietly
 * taking the stricter ones: the user learns which flags disagree). The settings are kept alive
 * while any matching process runs, and lapse POLITENESS_TTL_MS after the last one stops, so a
 * later sweep on the same queue name may choose others.
 */
export async function agreeOnPoliteness(
  redis: Redis,
  queueName: string,
  limits: Pick<PolitenessLimits, 'perHostConnections' | 'perHostDelayMs'>,
  options: { ttlMs?: number } = {},
): Promise<{ close(): void }> {
  const ttl = options.ttlMs ?? POLITENESS_TTL_MS;
  const key = `httpsify-sweep:${queueName}:politeness`;
  const own = JSON.stringify({
    perHostConnections: limits.perHostConnections,
    perHostDelayMs: limits.perHostDelayMs,
  });
  const stored = String(await redis.eval(AGREE_POLITENESS, 1, key, own, ttl));
  if (stored !== own) {
    throw new Error(
      `--queue-name ${queueName}: this process has ${settingsWords(own)}, but the sweep on this queue runs with ` +
        `${settingsWords(stored)} (set by its first process); give all its processes the same --per-host and ` +
        `--per-host-delay, or use another --queue-name (the stored settings lapse ${Math.round(ttl / 1000)} s after its last process stops)`,
    );
  }
  const keep = setInterval(
    () => void redis.eval(AGREE_POLITENESS, 1, key, own, ttl).catch(() => undefined),
    Math.max(250, Math.floor(ttl / 3)),
  );
  keep.unref();
  return { close: () => clearInterval(keep) };
}
