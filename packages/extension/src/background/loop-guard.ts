/**
 * Redirect-loop protection. A site that answers the upgraded https:// request with a redirect
 * back to http:// would be upgraded again, forever (or until the browser gives up). After
 * `threshold` such downgrades within one request chain, the host is not upgraded again for
 * the rest of the session.
 */
export const DEFAULT_LOOP_THRESHOLD = 3;

export class LoopGuard {
  private readonly downgrades = new Map<string, number>();
  private readonly hosts = new Set<string>();

  constructor(private readonly threshold = DEFAULT_LOOP_THRESHOLD) {}

  /**
   * Records one redirect of a request chain. Returns the host to stop upgrading when this
   * redirect completes a loop (only the first time for a host), else null.
   */
  noteRedirect(requestId: string, fromUrl: string, toUrl: string): string | null {
    if (!fromUrl.startsWith('https:') || !toUrl.startsWith('http:')) return null;
    let host: string;
    try {
      host = new URL(toUrl).hostname;
    } catch {
      return null;
    }
    const key = `${requestId} ${host}`;
    const count = (this.downgrades.get(key) ?? 0) + 1;
    this.downgrades.set(key, count);
    if (count < this.threshold || this.hosts.has(host)) return null;
    this.hosts.add(host);
    return host;
  }

  /** The chain ended (completed or failed): forget its counters. */
  finish(requestId: string): void {
    for (const key of this.downgrades.keys()) if (key.startsWith(`${requestId} `)) this.downgrades.delete(key);
  }

  isHostBlocked(host: string): boolean {
    return this.hosts.has(host.replace(/^\.+/, '').toLowerCase());
  }

  isUrlBlocked(url: string): boolean {
    try {
      return this.hosts.has(new URL(url).hostname);
    } catch {
      return false;
    }
  }

  blockedHosts(): string[] {
    return [...this.hosts].sort();
  }

  /** Restores hosts recorded earlier in the session (the service worker may have restarted). */
  restore(hosts: Iterable<string>): void {
    for (const h of hosts) this.hosts.add(h);
  }

  /** The user asked to try HTTPS on the host again (the popup's retry). */
  forget(host: string): void {
    this.hosts.delete(host.replace(/^\.+/, '').toLowerCase());
  }

  clear(): void {
    this.hosts.clear();
    this.downgrades.clear();
  }
}
