import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from '../fetch-test/resolve-option.js';

interface Entry {
  at: number;
  err: NodeJS.ErrnoException | null;
  addresses: LookupAddress[];
}

/**
 * Remembers answers (failures too, for less time) so the sweep asks the resolver once per host
 * rather than once per request; concurrent asks for one name share the first answer. The cache
 * holds at most `maxEntries` names, dropping the oldest first.
 */
export function cachedLookup(
  base: LookupFunction,
  options: { ttlMs?: number; negativeTtlMs?: number; maxEntries?: number } = {},
): LookupFunction {
  const ttl = options.ttlMs ?? 300_000;
  const negativeTtl = options.negativeTtlMs ?? 30_000;
  const max = options.maxEntries ?? 10_000;
  const cache = new Map<string, Entry>();
  const inFlight = new Map<string, ((e: Entry) => void)[]>();
  const answer = (
    entry: Entry,
    options: { all?: boolean },
    callback: Parameters<LookupFunction>[2],
  ): void => {
    if (entry.err !== null) callback(entry.err, '');
    else if (options.all === true) callback(null, entry.addresses);
    else callback(null, entry.addresses[0]?.address ?? '', entry.addresses[0]?.family ?? 4);
  };
  return (hostname, opts, callback) => {
    const name = hostname.toLowerCase();
    const hit = cache.get(name);
    if (hit !== undefined && Date.now() - hit.at < (hit.err === null ? ttl : negativeTtl)) {
      process.nextTick(() => answer(hit, opts, callback));
      return;
    }
    const waiters = inFlight.get(name);
    if (waiters !== undefined) {
      waiters.push((e) => answer(e, opts, callback));
      return;
    }
    inFlight.set(name, [(e) => answer(e, opts, callback)]);
    base(name, { all: true }, (err, addresses) => {
      const entry: Entry = {
        at: Date.now(),
        err,
        addresses: err === null && Array.isArray(addresses) ? addresses : [],
      };
      cache.delete(name);
      cache.set(name, entry);
      if (cache.size > max) cache.delete(cache.keys().next().value as string);
      const all = inFlight.get(name) ?? [];
      inFlight.delete(name);
      for (const w of all) w(entry);
    });
  };
}
