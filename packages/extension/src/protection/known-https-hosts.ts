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

/**
 * Hosts seen only as third-party subresources (never as a page the user opened, nor the page's
 * own host): at most this many. They make room for each other, never for visited hosts, so no
 * page can flush what the user's own browsing taught.
 */
export const MAX_THIRD_PARTY_HOSTS = 500;

export interface StoredKnownHosts {
  v: 1;
  /**
   * [host, last seen over HTTPS (ms since epoch), 1 when seen as a page the user visited],
   * oldest first. Entries of older builds have no third field: they are kept as visited.
   */
  hosts: ([string, number] | [string, number, 0 | 1])[];
}

const norm = (host: string): string => host.toLowerCase().replace(/\.+$/, '');

export class KnownHttpsHosts {
  /** Host -> last seen; Map order is insertion order, kept oldest first. Visited hosts. */
  private readonly visited = new Map<string, number>();
  /** The same for hosts seen only as third-party subresources. */
  private readonly third = new Map<string, number>();

  constructor(
    private readonly ttlMs = KNOWN_HTTPS_TTL_MS,
    private readonly max = MAX_KNOWN_HTTPS_HOSTS,
    private readonly maxThird = MAX_THIRD_PARTY_HOSTS,
  ) {}

  /**
   * Reads what storage holds. Storage is outside our control (older builds, manual edits), so
   * every entry is checked and the bad ones are counted, not trusted.
   */
  static parse(
    raw: unknown,
    now: number,
    ttlMs = KNOWN_HTTPS_TTL_MS,
    max = MAX_KNOWN_HTTPS_HOSTS,
  ): { store: KnownHttpsHosts; rejected: number } {
    const store = new KnownHttpsHosts(ttlMs, max);
    let rejected = 0;
    const list =
      typeof raw === 'object' && raw !== null && (raw as { v?: unknown }).v === 1
        ? (raw as { hosts?: unknown }).hosts
        : undefined;
    if (raw !== undefined && !Array.isArray(list)) return { store, rejected: 1 };
    const entries: [string, number, boolean][] = [];
    for (const item of (list as unknown[] | undefined) ?? []) {
      const [host, at, visited] = Array.isArray(item) ? item : [];
      if (
        typeof host !== 'string' ||
        !isLearnableHost(host) ||
        typeof at !== 'number' ||
        !Number.isFinite(at) ||
        at > now + ttlMs ||
        ![undefined, 0, 1].includes(visited)
      ) {
        rejected++;
        continue;
      }
      entries.push([host, at, visited !== 0]);
    }
    entries.sort((a, b) => a[1] - b[1]);
    for (const [host, at, visited] of entries) store.note(host, at, visited);
    store.prune(now);
    return { store, rejected };
  }

  /**
   * The host answered over HTTPS at `now`, as a page the user visited (or that page's own host)
   * or as a third-party subresource; returns whether the set of live hosts changed.
   */
  note(host: string, now: number, visited = true): boolean {
    const h = norm(host);
    if (!isLearnableHost(h)) return false;
    const wasLive = this.has(h, now);
    if (visited || this.visited.has(h)) {
      this.third.delete(h);
      this.visited.delete(h);
      this.visited.set(h, now);
    } else {
      this.third.delete(h);
      this.third.set(h, now);
      while (this.third.size > this.maxThird) this.dropOldest(this.third);
    }
    // Over the cap: third-party hosts go first; a visited host only makes room for another.
    while (this.size > this.max) this.dropOldest(this.third.size > 0 ? this.third : this.visited);
    return !wasLive && this.has(h, now);
  }

  private dropOldest(map: Map<string, number>): void {
    map.delete(map.keys().next().value as string);
  }

  has(host: string, now: number): boolean {
    const h = norm(host);
    const at = this.visited.get(h) ?? this.third.get(h);
    return at !== undefined && now - at < this.ttlMs;
  }

  /** Whether the host is stored as visited (not only third-party). */
  isVisited(host: string): boolean {
    return this.visited.has(norm(host));
  }

  /** Drops a host (its HTTPS failed, or the user left it on HTTP); returns whether it was there. */
  forget(host: string): boolean {
    const h = norm(host);
    const a = this.visited.delete(h);
    const b = this.third.delete(h);
    return a || b;
  }

  /** Drops expired entries; returns whether any went. */
  prune(now: number): boolean {
    let changed = false;
    for (const map of [this.visited, this.third]) {
      for (const [h, at] of map) {
        if (now - at >= this.ttlMs) {
          map.delete(h);
          changed = true;
        }
      }
    }
    return changed;
  }

  /** Live hosts, sorted (a stable input for rule building). */
  hosts(now: number): string[] {
    return [...this.visited, ...this.third]
      .filter(([, at]) => now - at < this.ttlMs)
      .map(([h]) => h)
      .sort();
  }

  /** When the next entry expires (ms since epoch), or null when empty. */
  nextExpiry(): number | null {
    let min: number | null = null;
    for (const map of [this.visited, this.third])
      for (const at of map.values()) if (min === null || at < min) min = at;
    return min === null ? null : min + this.ttlMs;
  }

  toStored(): StoredKnownHosts {
    const hosts: [string, number, 0 | 1][] = [
      ...[...this.visited].map(([h, at]): [string, number, 0 | 1] => [h, at, 1]),
      ...[...this.third].map(([h, at]): [string, number, 0 | 1] => [h, at, 0]),
    ];
    return { v: 1, hosts: hosts.sort((a, b) => a[1] - b[1]) };
  }

  get size(): number {
    return this.visited.size + this.third.size;
  }

  /** How many hosts are stored as third-party only. */
  get thirdPartySize(): number {
    return this.third.size;
  }
}
