import { isHttpsFirstExempt, parseIpv4 } from '../site-rules/exempt.js';

/**
 * Hosts that have answered over HTTPS in this profile: their subresource requests are upgraded
 * even on plain-HTTP pages (browsers upgrade navigations only). The store is bounded and every
 * entry expires, so a host that stopped serving HTTPS is tried over HTTP again eventually and
 * the list never becomes a browsing history of unbounded age. It lives in storage.local only:
 * never synced, never exported.
 */
export const KNOWN_HTTPS_STORAGE_KEY = 'knownHttpsHosts';
/** An entry lives this long after the host last answered over HTTPS. */
export const KNOWN_HTTPS_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** Most hosts kept (the least recently seen go first); also bounds the DNR rule's size. */
export const MAX_KNOWN_HTTPS_HOSTS = 2000;

const HOST_CHARS = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;

/** Whether a host may be stored: a public DNS name (no IP literal, no local-only name). */
export function isLearnableHost(host: string): boolean {
  if (host.length > 253 || !HOST_CHARS.test(host)) return false;
  if (parseIpv4(host) !== null || /^[0-9.]+$/.test(host)) return false;
  return !isHttpsFirstExempt(host);
}

export interface StoredKnownHosts {
  v: 1;
  /** [host, last seen over HTTPS (ms since epoch)], oldest first. */
  hosts: [string, number][];
}

export class KnownHttpsHosts {
  /** Host -> last seen; Map order is insertion order, kept oldest first. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly ttlMs = KNOWN_HTTPS_TTL_MS,
    private readonly max = MAX_KNOWN_HTTPS_HOSTS,
  ) {}

  /**
   * Reads what storage holds. Storage is outside our control (older builds, manual edits), so
   * every entry is checked and the bad ones are counted, not trusted.
   */
  static parse(raw: unknown, now: number, ttlMs = KNOWN_HTTPS_TTL_MS, max = MAX_KNOWN_HTTPS_HOSTS): { store: KnownHttpsHosts; rejected: number } {
    const store = new KnownHttpsHosts(ttlMs, max);
    let rejected = 0;
    const list = typeof raw === 'object' && raw !== null && (raw as { v?: unknown }).v === 1 ? (raw as { hosts?: unknown }).hosts : undefined;
    if (raw !== undefined && !Array.isArray(list)) return { store, rejected: 1 };
    const entries: [string, number][] = [];
    for (const item of (list as unknown[] | undefined) ?? []) {
      const [host, at] = Array.isArray(item) ? item : [];
      if (typeof host !== 'string' || !isLearnableHost(host) || typeof at !== 'number' || !Number.isFinite(at) || at > now + ttlMs) {
        rejected++;
        continue;
      }
      entries.push([host, at]);
    }
    entries.sort((a, b) => a[1] - b[1]);
    for (const [host, at] of entries) store.note(host, at);
    store.prune(now);
    return { store, rejected };
  }

  /** The host answered over HTTPS at `now`; returns whether the set of live hosts changed. */
  note(host: string, now: number): boolean {
    const h = host.toLowerCase().replace(/\.+$/, '');
    if (!isLearnableHost(h)) return false;
    const wasLive = this.has(h, now);
    this.seen.delete(h);
    this.seen.set(h, now);
    while (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value as string);
    return !wasLive;
  }

  has(host: string, now: number): boolean {
    const at = this.seen.get(host.toLowerCase().replace(/\.+$/, ''));
    return at !== undefined && now - at < this.ttlMs;
  }

  /** Drops a host (its HTTPS failed, or the user left it on HTTP); returns whether it was there. */
  forget(host: string): boolean {
    return this.seen.delete(host.toLowerCase().replace(/\.+$/, ''));
  }

  /** Drops expired entries; returns whether any went. */
  prune(now: number): boolean {
    let changed = false;
    for (const [h, at] of this.seen) {
      if (now - at >= this.ttlMs) {
        this.seen.delete(h);
        changed = true;
      }
    }
    return changed;
  }

  /** Live hosts, sorted (a stable input for rule building). */
  hosts(now: number): string[] {
    return [...this.seen]
      .filter(([, at]) => now - at < this.ttlMs)
      .map(([h]) => h)
      .sort();
  }

  /** When the next entry expires (ms since epoch), or null when empty. */
  nextExpiry(): number | null {
    let min: number | null = null;
    for (const at of this.seen.values()) if (min === null || at < min) min = at;
    return min === null ? null : min + this.ttlMs;
  }

  toStored(): StoredKnownHosts {
    return { v: 1, hosts: [...this.seen] };
  }

  get size(): number {
    return this.seen.size;
  }
}
