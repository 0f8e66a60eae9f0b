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
      for (const [member, key] of held) void redis.eval(RENEW_HOST_LEASE, 1, key, member, options.leaseMs).catch(() => undefined);
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
