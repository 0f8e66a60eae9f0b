/**
 * Redirect-loop protection. A site that answers the upgraded https:// request with a redirect
 * back to http:// would be upgraded again, forever (or until the browser gives up). After
 * `threshold` such downgrades within one top-level request chain, the host is not upgraded
 * again for the rest of the session.
 *
 * Only evidence from the host itself counts: a top-level navigation's redirect from
 * `https://host/…` to `http://host/…`. A redirect from another host (an attacker's HTTPS site
 * sending the tab to the victim's HTTP URL), a subresource, or a page that starts the same
 * navigation again and again (new request ids) never adds up to a verdict. A loop through
 * another host ends in the browser's own "too many redirects", still on HTTPS.
 */
export const DEFAULT_LOOP_THRESHOLD = 3;
/** Handoff rounds (Chromium) count within this window, per tab and host. */
export const TAB_DOWNGRADE_WINDOW_MS = 20_000;

export interface RedirectDetails {
  requestId: string;
  tabId: number;
  type: string;
  url: string;
  redirectUrl: string;
}

function hostOf(url: string, protocol: string): string | null {
  try {
    const u = new URL(url);
    const host = u.hostname.replace(/\.+$/, '');
    return u.protocol === protocol && host !== '' ? host : null;
  } catch {
    return null;
  }
}

export class LoopGuard {
  private readonly downgrades = new Map<string, number>();
  private readonly hosts = new Set<string>();
  /** `tabId fromHost toUrl` -> times an HTTPS answer of fromHost sent that tab's page to toUrl. */
  private readonly tabDowngrades = new Map<string, number[]>();

  constructor(
    private readonly threshold = DEFAULT_LOOP_THRESHOLD,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Records one redirect of a request chain. Returns the host to stop upgrading when this
   * redirect completes a loop (only the first time for a host), else null. Only a downgrade
   * `https://H/… -> http://H/…` of a tab's top-level page counts towards H's verdict; every
   * downgrade is remembered per tab for the handoff page (`recentTabDowngrades`).
   */
  noteRedirect(d: RedirectDetails): string | null {
    if (d.type !== 'main_frame' || d.tabId < 0) return null;
    const from = hostOf(d.url, 'https:');
    const to = hostOf(d.redirectUrl, 'http:');
    if (from === null || to === null) return null;
    this.noteTabDowngrade(d.tabId, from, d.redirectUrl);
    // Another host's HTTPS answer says nothing about whether `to` loops (it may be an attacker's).
    if (from !== to) return null;
    const key = `${d.requestId} ${to}`;
    const count = (this.downgrades.get(key) ?? 0) + 1;
    this.downgrades.set(key, count);
    if (count < this.threshold || this.hosts.has(to)) return null;
    this.hosts.add(to);
    return to;
  }

  private noteTabDowngrade(tabId: number, from: string, toUrl: string): void {
    if (toUrl.length > 8192) return;
    const key = `${tabId} ${from} ${toUrl}`;
    const now = this.now();
    const times = (this.tabDowngrades.get(key) ?? []).filter((t) => now - t < TAB_DOWNGRADE_WINDOW_MS);
    times.push(now);
    this.tabDowngrades.delete(key);
    this.tabDowngrades.set(key, times);
    // Oldest first (insertion order): a bounded memory of recent rounds.
    while (this.tabDowngrades.size > 200) this.tabDowngrades.delete(this.tabDowngrades.keys().next().value as string);
  }

  /**
   * How often, lately, an HTTPS answer of `fromHost` sent this tab's top-level page to exactly
   * `toUrl` (Chromium's handoff page: each round is a new request, so chains do not add up
   * there; the page asks about the host it sent the tab to and the URL it came back with).
   */
  recentTabDowngrades(tabId: number, fromHost: string, toUrl: string): number {
    const now = this.now();
    const from = fromHost.replace(/\.+$/, '').toLowerCase();
    return (this.tabDowngrades.get(`${tabId} ${from} ${toUrl}`) ?? []).filter((t) => now - t < TAB_DOWNGRADE_WINDOW_MS).length;
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
    for (const h of hosts) if (typeof h === 'string' && /^[a-z0-9.:[\]-]+$/.test(h)) this.hosts.add(h);
  }

  /** The user asked to try HTTPS on the host again (the popup's retry). */
  forget(host: string): void {
    const h = host.replace(/^\.+/, '').toLowerCase();
    this.hosts.delete(h);
    for (const key of this.tabDowngrades.keys()) if (key.split(' ')[1] === h) this.tabDowngrades.delete(key);
  }

  clear(): void {
    this.hosts.clear();
    this.downgrades.clear();
    this.tabDowngrades.clear();
  }
}
