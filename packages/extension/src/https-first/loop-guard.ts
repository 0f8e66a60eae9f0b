/**
 * Redirect-loop protection. A site whose HTTPS answer redirects back to the very http:// URL we
 * upgraded would be upgraded again, forever (or until the browser gives up). The guard takes
 * only a cycle as a loop: within one request chain of a tab, the http:// URL R was upgraded to
 * T, and T's own answer redirected back to exactly R, `threshold` times. The verdict is as
 * narrow as that evidence: R may load over HTTP in that tab, for LOOP_VERDICT_MS, as what it
 * looped as: the tab's top-level page (`navigation`) or anything that page loads
 * (`subresource`). Never the host, never another tab, never the other kind.
 *
 * Why a page cannot manufacture it: T is the extension's upgrade of R, and T redirecting to
 * exactly R is the site's own answer for that one URL. An open redirect
 * (`https://H/go?to=http://H/x`) sends to a URL other than its own (the target is inside the
 * request URL, so it can never equal it); another host's HTTPS answer is not T; a page starting
 * the same request again starts a new chain. A page of host A can make the browser fetch B's
 * URL, but only B's server can answer B's https:// URL with a redirect to B's http:// URL.
 * HTTPS Everywhere counted redirects per request and gave up on the host for the session;
 * Chrome's HTTPS-Upgrades falls back for the one navigation. This is Chrome's scope with a
 * cycle as evidence.
 *
 * Subresources: a redirect from https:// is all the guard hears of them (an upgraded
 * subresource's own http:// -> https:// step would be one more event per upgraded request). That
 * T is our upgrade of R is asked of decide() at the moment (`upgradeOf`), which is what the
 * browser enforces; that R was in fact turned into T again in between is the chain coming back
 * to T after each redirect to R, within one request.
 */
export const DEFAULT_LOOP_THRESHOLD = 3;
/** How long a verdict lets its URL load over HTTP in its tab. */
export const LOOP_VERDICT_MS = 10 * 60_000;
/** Handoff rounds (Chromium) count within this window, per tab and exact URL pair. */
export const TAB_DOWNGRADE_WINDOW_MS = 20_000;
/** Longer URLs get no verdict (their exact-URL rule would not fit DNR's regex limits). */
export const MAX_VERDICT_URL = 1500;
/**
 * Verdicts are few: each is a regex rule on Chromium, from a budget every layer shares, and a
 * site (not the user) chooses how many it causes. The layer's room is held in reserve
 * (dnr/rule-writer.ts) at LOOP_RULES_MAX, so verdicts never take a rule from the user's own
 * rules or settings. Pages' and subresources' verdicts are bounded apart, per tab and in all,
 * so that a site answering many URLs with loops pushes out its own tab's first, and never a
 * page's verdict with its images'. A verdict pushed out only means the loop is seen again.
 */
const MAX_VERDICTS = 16;
const MAX_VERDICTS_PER_TAB = 8;
const MAX_SUBRESOURCE_VERDICTS = 8;
const MAX_SUBRESOURCE_VERDICTS_PER_TAB = 4;
/** The most verdicts live at once: the loops layer's rules (one each). */
export const LOOP_RULES_MAX = MAX_VERDICTS + MAX_SUBRESOURCE_VERDICTS;
const MAX_CHAINS = 500;

/** What a verdict lets load over HTTP: the tab's page, or what the tab's pages load. */
export type LoopKind = 'navigation' | 'subresource';

export interface RedirectDetails {
  requestId: string;
  tabId: number;
  type: string;
  url: string;
  redirectUrl: string;
}

/**
 * One verdict: the http:// URL (no fragment) that loads over HTTP in `tabId` until `until`, as
 * the tab's page or as a subresource (`kind`).
 */
export interface LoopVerdict {
  kind: LoopKind;
  tabId: number;
  url: string;
  until: number;
}

/** The URL as the network sees it (WHATWG-serialised, no fragment), or null. */
export function requestUrl(url: string): URL | null {
  if (url.length > MAX_VERDICT_URL) return null;
  try {
    const u = new URL(url);
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') return null;
    u.hash = '';
    return u;
  } catch {
    return null;
  }
}

const normHost = (host: string): string => host.toLowerCase().replace(/^\.+|\.+$/g, '');

interface Chain {
  /** http:// URL -> the https:// URL this chain was sent to from it. */
  upgrades: Map<string, string>;
  /** http:// URL -> times its upgrade answered with a redirect back to it. */
  returns: Map<string, number>;
  verdict?: LoopVerdict;
}

export class LoopGuard {
  private readonly chains = new Map<string, Chain>();
  /** `requestId url` -> times a subresource's https:// answer sent it back to this http:// URL. */
  private readonly subresourceReturns = new Map<string, number>();
  /** `kind tabId url` -> verdict; Map order is insertion order (oldest first). */
  private readonly verdicts = new Map<string, LoopVerdict>();
  /** `tabId fromUrl toUrl` -> times an https:// URL sent that tab's page to the http:// URL. */
  private readonly tabDowngrades = new Map<string, number[]>();

  constructor(
    private readonly threshold = DEFAULT_LOOP_THRESHOLD,
    private readonly now: () => number = Date.now,
    private readonly verdictMs = LOOP_VERDICT_MS,
  ) {}

  /**
   * Records one redirect of a request chain. Returns the verdict when this redirect completes a
   * loop (once per tab and URL while it lasts), else null.
   */
  noteRedirect(d: RedirectDetails): LoopVerdict | null {
    if (d.type !== 'main_frame' || d.tabId < 0) return null;
    const from = requestUrl(d.url);
    const to = requestUrl(d.redirectUrl);
    if (from === null || to === null) return null;
    if (from.protocol === 'http:' && to.protocol === 'https:') {
      this.chain(d.requestId).upgrades.set(from.href, to.href);
      return null;
    }
    if (from.protocol !== 'https:' || to.protocol !== 'http:') return null;
    this.noteTabDowngrade(d.tabId, from.href, to.href);
    const chain = this.chains.get(d.requestId);
    // A cycle: this chain upgraded exactly `to` to exactly `from`, and `from` sent it back.
    if (chain === undefined || chain.upgrades.get(to.href) !== from.href) return null;
    const count = (chain.returns.get(to.href) ?? 0) + 1;
    chain.returns.set(to.href, count);
    if (count < this.threshold || this.allows(to.href, d.tabId)) return null;
    const verdict = this.verdict('navigation', d.tabId, to.href);
    this.add(verdict);
    chain.verdict = verdict;
    return verdict;
  }

  /**
   * Records one redirect of a subresource's request from an https:// URL. `upgradeOf(R)`: where
   * the extension's decision sends the http:// URL R for this request now (null: it leaves R
   * alone). Returns the verdict when this redirect completes a loop, else null.
   */
  noteSubresourceRedirect(
    d: RedirectDetails,
    upgradeOf: (httpUrl: string) => string | null,
  ): LoopVerdict | null {
    if (d.type === 'main_frame' || d.tabId < 0) return null;
    const from = requestUrl(d.url);
    const to = requestUrl(d.redirectUrl);
    if (from === null || to === null || from.protocol !== 'https:' || to.protocol !== 'http:')
      return null;
    const key = `${d.requestId} ${to.href}`;
    const count = (this.subresourceReturns.get(key) ?? 0) + 1;
    this.subresourceReturns.delete(key);
    this.subresourceReturns.set(key, count);
    // Requests end unheard (the guard takes no completion events for subresources): the
    // oldest counts go first.
    while (this.subresourceReturns.size > MAX_CHAINS)
      this.subresourceReturns.delete(this.subresourceReturns.keys().next().value as string);
    if (count < this.threshold || this.allows(to.href, d.tabId, 'subresource')) return null;
    // The cycle is ours only if our decision sends exactly R to exactly T.
    const target = upgradeOf(to.href);
    if (target === null || requestUrl(target)?.href !== from.href) return null;
    this.subresourceReturns.delete(key);
    const verdict = this.verdict('subresource', d.tabId, to.href);
    this.add(verdict);
    return verdict;
  }

  private verdict(kind: LoopKind, tabId: number, url: string): LoopVerdict {
    return { kind, tabId, url, until: this.now() + this.verdictMs };
  }

  private chain(requestId: string): Chain {
    let c = this.chains.get(requestId);
    if (c === undefined) {
      c = { upgrades: new Map(), returns: new Map() };
      this.chains.set(requestId, c);
      // Chains whose end we never heard of (the worker missed it) do not pile up.
      while (this.chains.size > MAX_CHAINS)
        this.chains.delete(this.chains.keys().next().value as string);
    }
    return c;
  }

  private add(v: LoopVerdict): void {
    const key = `${v.kind} ${v.tabId} ${v.url}`;
    this.verdicts.delete(key);
    this.verdicts.set(key, v);
    this.prune();
    if (v.kind === 'navigation') {
      this.bound((o) => o.kind === 'navigation' && o.tabId === v.tabId, MAX_VERDICTS_PER_TAB);
      this.boundAcrossTabs((o) => o.kind === 'navigation', MAX_VERDICTS, v.tabId);
    } else {
      this.bound(
        (o) => o.kind === 'subresource' && o.tabId === v.tabId,
        MAX_SUBRESOURCE_VERDICTS_PER_TAB,
      );
      this.boundAcrossTabs((o) => o.kind === 'subresource', MAX_SUBRESOURCE_VERDICTS, v.tabId);
    }
  }

  /**
   * Drops verdicts among those `among` picks until at most `max` are left: each time the oldest
   * of the tab that holds the most (`adding`, the tab of the verdict just added, when it is one
   * of them), so that a site flooding its own tabs pushes out its own verdicts, not another's.
   */
  private boundAcrossTabs(among: (v: LoopVerdict) => boolean, max: number, adding: number): void {
    for (;;) {
      const picked = [...this.verdicts].filter(([, v]) => among(v));
      if (picked.length <= max) return;
      const perTab = new Map<number, number>();
      for (const [, v] of picked) perTab.set(v.tabId, (perTab.get(v.tabId) ?? 0) + 1);
      const most = [...perTab.values()].reduce((a, b) => Math.max(a, b), 0);
      const tab = perTab.get(adding) === most ? adding : null;
      const [key] = picked.find(
        ([, v]) => (tab === null || v.tabId === tab) && perTab.get(v.tabId) === most,
      ) as [string, LoopVerdict];
      this.verdicts.delete(key);
    }
  }

  /** Drops the oldest verdicts among those `among` picks until at most `max` are left. */
  private bound(among: (v: LoopVerdict) => boolean, max: number): void {
    const picked = [...this.verdicts].filter(([, v]) => among(v));
    for (const [key] of picked.slice(0, Math.max(0, picked.length - max)))
      this.verdicts.delete(key);
  }

  private noteTabDowngrade(tabId: number, from: string, to: string): void {
    const key = `${tabId} ${from} ${to}`;
    const now = this.now();
    const times = (this.tabDowngrades.get(key) ?? []).filter(
      (t) => now - t < TAB_DOWNGRADE_WINDOW_MS,
    );
    times.push(now);
    this.tabDowngrades.delete(key);
    this.tabDowngrades.set(key, times);
    // Oldest first (insertion order): a bounded memory of recent rounds.
    while (this.tabDowngrades.size > 200)
      this.tabDowngrades.delete(this.tabDowngrades.keys().next().value as string);
  }

  /**
   * How often, lately, exactly `fromUrl` (https://) answered this tab's top-level page with a
   * redirect to exactly `toUrl` (Chromium's handoff page: each round is a new request, so chains
   * do not add up there; the page asks about the URL it sent the tab to and the one it came back
   * with).
   */
  recentTabDowngrades(tabId: number, fromUrl: string, toUrl: string): number {
    const from = requestUrl(fromUrl);
    const to = requestUrl(toUrl);
    if (from === null || to === null) return 0;
    const now = this.now();
    return (this.tabDowngrades.get(`${tabId} ${from.href} ${to.href}`) ?? []).filter(
      (t) => now - t < TAB_DOWNGRADE_WINDOW_MS,
    ).length;
  }

  /** The chain's verdict, if it reached one (read before `finish`). */
  verdictOf(requestId: string): LoopVerdict | undefined {
    return this.chains.get(requestId)?.verdict;
  }

  /** The chain ended (completed or failed): forget its counters. */
  finish(requestId: string): void {
    this.chains.delete(requestId);
  }

  /**
   * Whether a live verdict lets this http:// URL load over HTTP in `tabId`, as the tab's page
   * (`navigation`) or as what its pages load (`subresource`).
   */
  allows(url: string, tabId: number, kind: LoopKind = 'navigation'): boolean {
    const u = requestUrl(url);
    if (u === null || u.protocol !== 'http:') return false;
    const v = this.verdicts.get(`${kind} ${tabId} ${u.href}`);
    return v !== undefined && v.until > this.now();
  }

  /** Whether any live verdict is for a URL of this host (cookies of such a host stay as they are). */
  isHostBlocked(host: string): boolean {
    const h = normHost(host);
    return this.live().some((v) => new URL(v.url).hostname === h);
  }

  /** Live verdicts, oldest first. */
  live(): LoopVerdict[] {
    const now = this.now();
    return [...this.verdicts.values()].filter((v) => v.until > now);
  }

  /** Hosts with a live verdict (the popup and the options page show them). */
  blockedHosts(): string[] {
    return [...new Set(this.live().map((v) => new URL(v.url).hostname))].sort();
  }

  /** When the next verdict ends (ms since epoch), or null. */
  nextExpiry(): number | null {
    return this.live().reduce<number | null>(
      (min, v) => (min === null || v.until < min ? v.until : min),
      null,
    );
  }

  /** Drops ended verdicts; returns whether any went. */
  prune(): boolean {
    const now = this.now();
    let changed = false;
    for (const [k, v] of this.verdicts) {
      if (v.until <= now) {
        this.verdicts.delete(k);
        changed = true;
      }
    }
    return changed;
  }

  /**
   * Restores verdicts recorded earlier in the session (the service worker may have restarted).
   * Storage is read as untrusted: only well-formed, live, not-too-long http:// verdicts return.
   */
  restore(stored: unknown): void {
    if (!Array.isArray(stored)) return;
    const now = this.now();
    for (const item of stored) {
      const v = item as Partial<LoopVerdict> | null;
      // Verdicts stored before subresources had any are navigations.
      const kind = v?.kind ?? 'navigation';
      if (kind !== 'navigation' && kind !== 'subresource') continue;
      if (typeof v?.tabId !== 'number' || !Number.isInteger(v.tabId) || v.tabId < 0) continue;
      if (typeof v.until !== 'number' || v.until <= now || v.until > now + this.verdictMs) continue;
      const u = typeof v.url === 'string' ? requestUrl(v.url) : null;
      if (u === null || u.protocol !== 'http:' || u.href !== v.url) continue;
      this.add({ kind, tabId: v.tabId, url: u.href, until: v.until });
    }
  }

  /** The tab closed: its verdicts go with it. Returns whether any went. */
  tabClosed(tabId: number): boolean {
    let changed = false;
    for (const [k, v] of this.verdicts) {
      if (v.tabId === tabId) {
        this.verdicts.delete(k);
        changed = true;
      }
    }
    for (const key of this.tabDowngrades.keys())
      if (key.startsWith(`${tabId} `)) this.tabDowngrades.delete(key);
    return changed;
  }

  /** The user asked to try HTTPS on the host again (the popup's retry). */
  forget(host: string): void {
    const h = normHost(host);
    for (const [k, v] of this.verdicts) if (new URL(v.url).hostname === h) this.verdicts.delete(k);
    for (const key of this.tabDowngrades.keys()) {
      const from = requestUrl(key.split(' ')[1] ?? '');
      if (from?.hostname === h) this.tabDowngrades.delete(key);
    }
  }

  clear(): void {
    this.verdicts.clear();
    this.chains.clear();
    this.subresourceReturns.clear();
    this.tabDowngrades.clear();
  }
}
