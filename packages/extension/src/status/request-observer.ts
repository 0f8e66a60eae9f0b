/**
 * What the background sees of each tab's requests, for the popup, the badge and the statistics:
 * which rulesets could apply, what was upgraded, and which navigations HTTPS-first upgraded
 * (handed to the fallback to follow). Listens only; never changes a request.
 */
import type { Decision } from '../decision/decide.js';
import type { HttpsFirstFallback } from '../https-first/fallback.js';
import type { RequestDecider } from '../decision/request-decider.js';
import type { ProtectionSnapshot } from '../decision/snapshot.js';
import { siteOf } from '../site-rules/site-pattern.js';
import { pageStarter, type PageStarter } from '../protection/navigation-starter.js';
import type { Statistics } from './statistics.js';
import type { TabActivity } from './tab-activity.js';

/** What the observer reads of the settings controller: the decision's state, ruleset names. */
export interface ObservedSettings {
  readonly snapshot: ProtectionSnapshot;
  rulesetNamesForHost(host: string): string[];
}

export interface ObserverDeps {
  /** The settings controller once it is ready, and the promise of it. */
  controller(): ObservedSettings | null;
  ready: Promise<ObservedSettings>;
  decider: RequestDecider;
  fallback: HttpsFirstFallback;
  activity: TabActivity;
  stats: Statistics;
  /** A tab's record changed: keep it for the session. */
  activityChanged(): void;
  /** The tab's icon and badge may need to change (`url`: its page). */
  refreshIcon(tabId: number, url: string | undefined): void;
  /** The extension's base URL: navigations its own pages start are the user's. */
  ownOrigin: string;
}

/** Requests that arrive while the background starts and wait for it (at most this many). */
const EARLY_LIMIT = 500;
/** Decisions kept for a redirect of the same request still to come (at most this many). */
const DECISIONS_LIMIT = 500;

type RequestDetailsWithId = Parameters<RequestDecider['decide']>[1] & { requestId: string };

export class RequestObserver {
  /*
   * Chromium stops an idle service worker; the request that wakes it arrives before the engine
   * has loaded. Those requests wait here instead of going uncounted (statistics stayed at 0).
   */
  private early: [chrome.webRequest.OnBeforeRequestDetails, Decision | undefined][] | null = null;
  /*
   * Each request is decided once (issue 39): what `observe` decided for a request's http:// URL
   * is what `observeRedirect` reads when that URL redirects. Until the request's leg ends
   * (`ended`); the oldest go first beyond DECISIONS_LIMIT.
   */
  private readonly decisions = new Map<string, { url: string; decision: Decision }>();
  /*
   * Chromium applies DNR rules before webRequest listeners run: an http:// request a rule
   * upgrades never reaches `observe`, only its redirect does. It counts when it took the URL
   * where our rules take it (a site's own redirect to HTTPS goes elsewhere, or comes after ours).
   */
  private readonly upgradedMainFrames = new Map<number, string>();
  private readonly httpsFirstMainFrames = new Set<number>();
  private readonly counted = new Set<string>();
  /** The last http:// page `observe` counted per tab (it may see the request the handoff takes over). */
  private readonly countedMainFrames = new Map<number, string>();
  /**
   * Per tab: the navigation sent to the handoff page, and the web page that started it (null:
   * the user). The handoff page's own navigation onwards is started by us, so this is the only
   * place that knows. It vouches only for that one request: the http:// URL it took over and
   * the target the page then sends the tab to, once; any other page load in the tab ends it
   * (the page is web-accessible: a later page may open it with any address).
   */
  private readonly handoffs = new Map<
    number,
    { url: string; starter: PageStarter | null; target?: string }
  >();

  constructor(private readonly deps: ObserverDeps) {}

  /**
   * `webRequest.onBeforeRequest` (both browsers). `decided`: the decision the door that
   * enforced it made (Firefox's blocking listener); without one, the observer decides.
   */
  observe(d: chrome.webRequest.OnBeforeRequestDetails, decided?: Decision): undefined {
    const { deps } = this;
    const c = deps.controller();
    if (d.tabId < 0) return undefined;
    if (c === null) {
      if (this.early === null) {
        this.early = [];
        void deps.ready.then(() => {
          const waiting = this.early ?? [];
          this.early = null;
          for (const [e, decision] of waiting) this.observe(e, decision);
        });
      }
      if (this.early.length < EARLY_LIMIT) this.early.push([d, decided]);
      return undefined;
    }
    const url = d.url;
    if (!url.startsWith('http:') && !url.startsWith('https:')) return undefined;
    if (d.type === 'main_frame') {
      deps.fallback.navigated(d.tabId, d.requestId, url);
      const h = this.handoffs.get(d.tabId);
      if (h !== undefined && url !== h.url && url !== h.target) this.handoffs.delete(d.tabId);
    }
    const site = siteOf(url);
    const names = site === null ? [] : c.rulesetNamesForHost(site.host);
    let upgraded = false;
    let first = false;
    let upgradedTo: string | undefined;
    const top = deps.decider.pageOf(d) ?? url;
    // Chromium: DNR moved this request before any listener saw it (see observeRedirect).
    if (d.type === 'main_frame' && this.upgradedMainFrames.get(d.tabId) === url) {
      this.upgradedMainFrames.delete(d.tabId);
      upgraded = true;
      first = this.httpsFirstMainFrames.delete(d.tabId);
    } else if (url.startsWith('http:')) {
      const decision = decided ?? this.decisionFor(c, d);
      if (decision.action === 'upgrade' && decision.url.startsWith('https:')) {
        upgraded = true;
        // The known hosts' upgrade is the same URL over HTTPS; the tab's record says so already.
        if (decision.reason !== 'known-host') upgradedTo = decision.url;
        if (decision.reason === 'https-first') {
          first = true;
          deps.fallback.upgrading(
            d.requestId,
            d.tabId,
            url,
            pageStarter(d, deps.ownOrigin) === null,
          );
        }
      }
    }
    if (upgraded) {
      this.counted.add(d.requestId);
      if (d.type === 'main_frame') this.countedMainFrames.set(d.tabId, url);
      deps.stats.upgraded();
    }
    if (
      deps.activity.note({
        tabId: d.tabId,
        type: d.type,
        url,
        rulesets: names,
        upgraded,
        httpsFirst: first,
        upgradedTo,
      })
    ) {
      deps.activityChanged();
      if (upgraded || d.type === 'main_frame') deps.refreshIcon(d.tabId, top);
    }
    return undefined;
  }

  /**
   * Who started the navigation the handoff page took over in this tab: a web page, null for the
   * user, undefined when no handoff was seen (Chromium).
   */
  handoffStarter(tabId: number, url: string): PageStarter | null | undefined {
    const h = this.handoffs.get(tabId);
    if (h === undefined || h.target === undefined || url !== h.target) return undefined;
    this.handoffs.delete(tabId);
    return h.starter;
  }

  tabClosed(tabId: number): void {
    this.handoffs.delete(tabId);
  }

  /** The request completed or failed: its decision is spent. */
  ended(requestId: string): void {
    this.decisions.delete(requestId);
  }

  /** The decision for the request's URL: the one already made for it, else made once now. */
  private decisionFor(c: ObservedSettings, d: RequestDetailsWithId): Decision {
    const kept = this.decisions.get(d.requestId);
    if (kept !== undefined && kept.url === d.url) return kept.decision;
    const decision = this.deps.decider.decide(c.snapshot, d);
    this.decisions.delete(d.requestId);
    this.decisions.set(d.requestId, { url: d.url, decision });
    for (const oldest of this.decisions.keys()) {
      if (this.decisions.size <= DECISIONS_LIMIT) break;
      this.decisions.delete(oldest);
    }
    return decision;
  }

  /** `webRequest.onBeforeRedirect` for http:// requests (Chromium: DNR's redirects). */
  observeRedirect(d: chrome.webRequest.OnBeforeRedirectDetails): void {
    const c = this.deps.controller();
    if (c === null) {
      void this.deps.ready.then(() => this.observeRedirect(d));
      return;
    }
    if (d.tabId < 0) return;
    // Chromium sends main frames DNR cannot rewrite to the handoff page: who started them is
    // known only here (the page's own navigation onwards is ours). Also when `observe` already
    // counted the request.
    if (
      d.type === 'main_frame' &&
      d.url.startsWith('http:') &&
      d.redirectUrl.startsWith(this.deps.ownOrigin)
    ) {
      this.handoffs.set(d.tabId, { url: d.url, starter: pageStarter(d, this.deps.ownOrigin) });
    }
    if (this.counted.delete(d.requestId)) return;
    if (!d.url.startsWith('http:') || !d.redirectUrl.startsWith('https:')) return;
    // DNR enforced, or the site redirected what `observe` saw: one decision for this URL.
    const decision = this.decisionFor(c, d);
    // Counted when our rules took it there (known hosts' subresources are not counted here).
    if (
      decision.action !== 'upgrade' ||
      decision.url !== d.redirectUrl ||
      decision.reason === 'known-host'
    )
      return;
    const byHttpsFirst = decision.reason === 'https-first';
    if (byHttpsFirst)
      this.deps.fallback.upgrading(
        d.requestId,
        d.tabId,
        d.url,
        pageStarter(d, this.deps.ownOrigin) === null,
      );
    this.noteUpgrade(d.tabId, d.type, d.url, d.redirectUrl, byHttpsFirst);
  }

  /**
   * Chromium: the main-frame handoff page sends the tab to `target` (from the http:// `url`), as
   * `decision` (the handoff's, not made again here) says. Counted as the upgrade DNR would
   * have been.
   */
  handedOff(tabId: number, url: string, target: string, decision: Decision): void {
    if (!target.startsWith('https:')) return;
    this.noteUpgrade(tabId, 'main_frame', url, target, false);
    // The user's own navigation only when the page answers for the request it took over.
    const h = this.handoffs.get(tabId);
    const ours = h !== undefined && h.url === url && h.target === undefined;
    const byUser = ours && h.starter === null;
    if (ours) h.target = target;
    else this.handoffs.delete(tabId);
    // HTTPS-first's upgrade: its failure falls back like any other (trailing-dot hosts).
    if (decision.reason === 'https-first') this.deps.fallback.handedOff(tabId, url, target, byUser);
  }

  private noteUpgrade(
    tabId: number,
    type: string,
    url: string,
    target: string,
    byHttpsFirst: boolean,
  ): void {
    if (type === 'main_frame') {
      // Counted when the page's own request shows up, with the tab's new record.
      if (this.countedMainFrames.get(tabId) === url) {
        this.countedMainFrames.delete(tabId);
        return;
      }
      this.upgradedMainFrames.set(tabId, target);
      if (byHttpsFirst) this.httpsFirstMainFrames.add(tabId);
      else this.httpsFirstMainFrames.delete(tabId);
      return;
    }
    this.deps.stats.upgraded();
    const c = this.deps.controller();
    const site = siteOf(url);
    const names = c === null || site === null ? [] : c.rulesetNamesForHost(site.host);
    if (this.deps.activity.note({ tabId, type, url, rulesets: names, upgraded: true })) {
      this.deps.activityChanged();
      this.deps.refreshIcon(tabId, this.deps.decider.topUrl(tabId));
    }
  }
}
