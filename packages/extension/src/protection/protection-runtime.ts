/**
 * The protection mode's background state, shared by both browsers: the store of hosts known to
 * answer over HTTPS (learned, persisted, expired), the Chromium rules that upgrade their
 * subresources, Firefox's decision for the same, the harder-trying fallback, and the periodic
 * re-check of sites left on HTTP.
 */
import type { StorageArea } from '../platform/browser-api.js';
import { type DecisionState, upgradesAsKnownHost } from '../decision/decide.js';
import { snapshotState, type ProtectionSnapshot } from '../decision/snapshot.js';
import { siteOf } from '../site-rules/site-pattern.js';
import type { FallbackPlan } from '../https-first/fallback.js';
import type { Attempt } from '../https-first/fallback-address.js';
import { httpsAlternatives, originOnly, probe } from './https-alternatives.js';
import { KNOWN_HTTPS_STORAGE_KEY, KnownHttpsHosts } from './known-https-hosts.js';
import { LearnBudget } from './learn-budget.js';
import { pageStarter, type NavigationDetails, type PageStarter } from './navigation-starter.js';
import { commitsDocument } from '../decision/request-decider.js';
import { knownHttpsRules } from './protection-dnr.js';
import type { RuleBody } from '../dnr/rules.js';
import {
  dueForRecheck,
  RECHECK_STORAGE_KEY,
  type RecheckState,
  parseRecheckState,
  recordRecheck,
} from './recheck.js';

/** The alarm that prunes expired hosts and re-checks sites left on HTTP. */
export const PROTECTION_ALARM = 'httpsify-protection';
export const PROTECTION_ALARM_MINUTES = 60;
const PERSIST_MS = 2000;
const RULES_SYNC_MS = 250;
/** A host whose alternatives were tried is not tried again this soon (no ping-pong between twins). */
const ALTERNATIVES_QUIET_MS = 60_000;

/** A completed response as webRequest.onCompleted reports it (both browsers). */
export interface LearnDetails extends NavigationDetails {
  url: string;
  tabId: number;
  type: string;
  statusCode?: number;
}

/** What the runtime reads from the UI controller (kept narrow: the controller is shared). */
export interface ProtectionDeps {
  storage: Pick<StorageArea, 'get' | 'set'>;
  /** Chromium only: declares the known hosts' rules (the rule writer's "protection" layer). */
  writeRules?(rules: RuleBody[]): Promise<void>;
  now?: () => number;
  fetch?: typeof fetch;
  probeTimeoutMs?: number;
  /**
   * Chromium: known hosts that get no subresource rule, as DNR may miss a ruleset's exclusion
   * there (`exclusionsMayBeMissed`); null until that is known (the defaults and the handoff
   * scope read): the rules wait, as a start that wrote them first wrote each host's rule twice.
   */
  dnrKeepOut?(host: string): boolean | null;
  /** A host became known (its first response's cookies were set before we knew). */
  learned?(host: string): void;
}

export class ProtectionRuntime {
  known = new KnownHttpsHosts();
  /** What each page and site may still teach the store (this session). */
  readonly budget = new LearnBudget();
  private readonly now: () => number;
  private persistTimer: ReturnType<typeof setTimeout> | null = null;
  private rulesTimer: ReturnType<typeof setTimeout> | null = null;
  private view: ProtectionSnapshot | null = null;
  private readonly alternativesTried = new Map<string, number>();
  /** JSON of what we last wrote, to tell our own writes from others' in storage.onChanged. */
  private lastWritten: string | null = null;
  /** The last rules sync (tests and callers wait on it). */
  synced: Promise<void> = Promise.resolve();

  constructor(private readonly deps: ProtectionDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Reads the store (at startup, and when a test or another window rewrote it). */
  async load(): Promise<void> {
    const raw = (await this.deps.storage.get(KNOWN_HTTPS_STORAGE_KEY))[KNOWN_HTTPS_STORAGE_KEY];
    const { store, rejected } = KnownHttpsHosts.parse(raw, this.now());
    this.known = store;
    if (rejected > 0)
      console.warn(`httpsify: ${rejected} damaged entries dropped from the known HTTPS hosts`);
    // Write back what survived the checks and the expiry.
    if (
      rejected > 0 ||
      (raw !== undefined && JSON.stringify(raw) !== JSON.stringify(store.toStored()))
    )
      this.schedulePersist();
  }

  /** The mode is on. */
  active(v: ProtectionSnapshot): boolean {
    return v.globalEnabled && v.httpsFirst;
  }

  /** A site setting ("off" or "rulesets only") or "open over HTTP this time" covers the host. */
  private excluded(v: ProtectionSnapshot, host: string, port = ''): boolean {
    return (
      v.disabled.matchHost(host, port) !== null ||
      v.httpAllowed.matchHost(host, port) !== null ||
      v.httpOnce.has(host)
    );
  }

  /** The decision's state (decision/decide.ts): the snapshot, and the store as it holds now. */
  private decisionState(v: ProtectionSnapshot): DecisionState {
    const now = this.now();
    return snapshotState(v, (host) => this.known.has(host, now));
  }

  /** Whether requests to `host` are upgraded as a known HTTPS host now: decide()'s step 13. */
  upgradesHost(v: ProtectionSnapshot, host: string, port = ''): boolean {
    return upgradesAsKnownHost(this.decisionState(v), host, port);
  }

  /** Live hosts the rules cover: the known hosts decide() upgrades as such (rulesets aside). */
  liveHosts(v: ProtectionSnapshot): string[] {
    if (!this.active(v)) return [];
    const state = this.decisionState(v);
    return this.known.hosts(this.now()).filter((h) => upgradesAsKnownHost(state, h));
  }

  /**
   * A response arrived over HTTPS (webRequest.onCompleted). `topUrl` is the request's top-level
   * page (its own word, else the tab's committed document). A host is "visited" only when a
   * top-level document of it committed (a success status that makes a document: no 204, no
   * redirect hop) from a navigation the user or the site itself started. Everything else is
   * third-party (a subresource too; the page's own host is taught by its navigation alone: a
   * page another page sent the tab to would otherwise teach itself through its own scripts), and each page and site may
   * teach only a few new ones (learn-budget.ts); a navigation another page started counts
   * against *that* page.
   */
  learn(
    d: LearnDetails,
    topUrl: string | undefined,
    ownOrigin = '',
    handoffStarter?: PageStarter | null,
  ): void {
    if (d.tabId < 0 || !d.url.startsWith('https:')) return;
    const status = d.statusCode ?? 0;
    const navigation = d.type === 'main_frame';
    // An error page over HTTPS (a default vhost's 403, a 5xx) says nothing about the site; a
    // 204 or 205 leaves the page where it was.
    if (
      !((status >= 200 && status < 300) || (status === 304 && !navigation)) ||
      (navigation && !commitsDocument(status))
    )
      return;
    const site = siteOf(d.url);
    if (site === null) return;
    const now = this.now();
    let visited = false;
    let page: string;
    let pageHost: string;
    if (navigation) {
      // Chromium's handoff page navigates for the request it took over: that request's starter.
      const byUs =
        ownOrigin !== '' &&
        (d.initiator ?? d.originUrl ?? '').startsWith(ownOrigin.replace(/\/+$/, ''));
      // Only a starter recorded as the user's makes it a visit; unknown counts as a page's.
      const handed = handoffStarter === undefined ? { page: ownOrigin, host: '' } : handoffStarter;
      const starter = byUs ? handed : pageStarter(d, ownOrigin);
      // The user's own navigation (no page started it) is a visit. A page of the same host
      // navigating the tab is not new evidence: any page can navigate itself, so that keeps
      // the host as it stands (a visit stays a visit) and otherwise spends the page's budget;
      // else a chain of self-navigating hosts would be stored as visited and push out the
      // user's (attack report, issue 38).
      const sameHost = starter !== null && starter.host !== '' && starter.host === site.host;
      visited = starter === null || (sameHost && this.known.isVisited(site.host));
      page = starter?.page ?? d.url;
      pageHost = starter?.host ?? site.host;
    } else {
      page = topUrl ?? '';
      pageHost = (topUrl === undefined ? null : siteOf(topUrl))?.host ?? '';
      // The page's own host is taught by its navigation alone (which may have been refused).
      if (pageHost === site.host && !this.known.has(site.host, now)) return;
    }
    if (!visited && !this.known.has(site.host, now) && !this.budget.take(d.tabId, page, pageHost))
      return;
    if (this.known.note(site.host, now, visited)) {
      this.scheduleRules();
      this.deps.learned?.(site.host);
    }
    this.schedulePersist();
  }

  /** The user left the host on HTTP, or its HTTPS failed for the user: stop treating it as known. */
  forget(host: string): void {
    if (!this.known.forget(host)) return;
    this.scheduleRules();
    this.schedulePersist();
  }

  /** Hourly: drop expired hosts (their rules go with them). */
  prune(): void {
    if (!this.known.prune(this.now())) return;
    this.scheduleRules();
    this.schedulePersist();
  }

  /** Site settings, the mode or the portal state changed. */
  viewChanged(v: ProtectionSnapshot): Promise<void> {
    this.view = v;
    return this.syncRules();
  }

  // ---- Chromium: the known hosts' dynamic rules ---------------------------------------------
  /** The known hosts' rules; null while what to leave out is not known yet. */
  rules(v: ProtectionSnapshot): RuleBody[] | null {
    const keepOut = this.deps.dnrKeepOut;
    const hosts: string[] = [];
    for (const h of this.liveHosts(v)) {
      const out = keepOut === undefined ? false : keepOut(h);
      if (out === null) return null;
      if (!out) hosts.push(h);
    }
    return knownHttpsRules(hosts);
  }

  private scheduleRules(): void {
    if (this.deps.writeRules === undefined || this.rulesTimer !== null) return;
    this.rulesTimer = setTimeout(() => {
      this.rulesTimer = null;
      void this.syncRules();
    }, RULES_SYNC_MS);
  }

  syncRules(): Promise<void> {
    const run = this.synced.then(() => this.applyRules());
    this.synced = run.catch((e: unknown) =>
      console.error('httpsify: known HTTPS hosts rules failed', e),
    );
    return this.synced;
  }

  private async applyRules(): Promise<void> {
    const write = this.deps.writeRules;
    const v = this.view;
    if (write === undefined || v === null) return;
    // The writer diffs: an unchanged list writes nothing. Not known yet: the rules from before
    // the worker's restart stand until the start syncs them again.
    const rules = this.rules(v);
    if (rules !== null) await write(rules);
  }

  private schedulePersist(): void {
    if (this.persistTimer !== null) return;
    this.persistTimer = setTimeout(() => {
      this.persistTimer = null;
      void this.write();
    }, PERSIST_MS);
  }

  private async write(): Promise<void> {
    const stored = this.known.toStored();
    this.lastWritten = JSON.stringify(stored);
    await this.deps.storage.set({ [KNOWN_HTTPS_STORAGE_KEY]: stored });
  }

  /**
   * storage.onChanged saw the store change: if someone else wrote it (another window of this
   * profile, a restore), read it again and rebuild the rules.
   */
  async storedChanged(newValue: unknown): Promise<void> {
    if (JSON.stringify(newValue) === this.lastWritten) return;
    await this.load();
    await this.syncRules();
  }

  /** Writes the store now (tests; before the worker may stop). */
  async flush(): Promise<void> {
    if (this.persistTimer !== null) clearTimeout(this.persistTimer);
    this.persistTimer = null;
    await this.write();
  }

  // ---- the fallback ---------------------------------------------------------------------------
  /**
   * An upgraded navigation failed. Tries the HTTPS alternatives (origin-only probes); the first
   * that answers with a success status is offered on the fallback page. Then asks `http://host/`
   * (scheme and host only) whether the site answers over HTTP at all.
   *
   * The failed origin is forgotten only when the evidence is about exactly what the store holds:
   * the user's own navigation (`byUser`, no web page started it) to the host's default-port
   * origin. A page that sends a tab to `http://known-host:closed-port/`, or to a URL of the host
   * that it then abandons, changes nothing that was learned.
   */
  async planFallback(
    v: ProtectionSnapshot,
    httpUrl: string,
    reason: string,
    byUser = false,
  ): Promise<FallbackPlan> {
    const site = siteOf(httpUrl);
    const tried: Attempt[] = [{ url: originOnly(httpUrl, 'https'), result: reason }];
    if (site === null) return { tried, twin: null, http: 'not tried' };
    if (byUser && site.port === '') this.forget(site.host);
    const fetchFn = this.deps.fetch ?? fetch;
    const last = this.alternativesTried.get(site.host);
    const quiet = last !== undefined && this.now() - last < ALTERNATIVES_QUIET_MS;
    let twin: string | null = null;
    if (!quiet) {
      this.alternativesTried.set(site.host, this.now());
      for (const alt of httpsAlternatives(httpUrl, (u) => v.rulesets.rewrite(u))) {
        if (this.excluded(v, alt.host)) continue;
        const asked = originOnly(alt.url, 'https');
        const result = await probe(asked, fetchFn, this.deps.probeTimeoutMs, true);
        tried.push({ url: asked, result });
        if (result === 'ok') {
          this.alternativesTried.set(alt.host, this.now());
          twin = alt.url;
          break;
        }
      }
    }
    const http = await probe(originOnly(httpUrl, 'http'), fetchFn, this.deps.probeTimeoutMs);
    return { tried, twin, http };
  }

  // ---- re-check of sites left on HTTP ---------------------------------------------------------
  /**
   * Probes `https://host/` for every exact "rulesets only" entry whose period has passed. Returns
   * the entries that now answer over HTTPS (the caller takes them off the list).
   */
  async recheck(entries: readonly string[]): Promise<string[]> {
    const raw = (await this.deps.storage.get(RECHECK_STORAGE_KEY))[RECHECK_STORAGE_KEY];
    let state: RecheckState = parseRecheckState(raw);
    const now = this.now();
    const { due, state: started } = dueForRecheck(state, entries, now);
    state = started;
    const restored: string[] = [];
    for (const entry of due) {
      const result = await probe(
        `https://${entry}/`,
        this.deps.fetch ?? fetch,
        this.deps.probeTimeoutMs,
        true,
      );
      state = recordRecheck(state, entry, result === 'ok', now);
      if (result === 'ok') restored.push(entry);
    }
    await this.deps.storage.set({ [RECHECK_STORAGE_KEY]: state });
    return restored;
  }
}
