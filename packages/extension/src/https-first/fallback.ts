/**
 * The HTTPS-first fallback: follows every navigation HTTPS-first upgraded (tracker.ts) and, when
 * one fails, sends its tab to the fallback page, unless the tab has moved on since. The page's
 * address carries what was tried, what it may offer and a ticket for its buttons.
 */
import { ext } from '../platform/browser-api.js';
import { FALLBACK_PAGE } from '../platform/packaged-files.js';
import { CAPTIVE_PORTAL_REASON, probeCaptivePortal } from './captive-portal.js';
import type { PageTickets } from './page-tickets.js';
import { fallbackPageUrl, type Attempt } from './fallback-address.js';
import { HttpsFirstTracker, type FallbackEvent } from './tracker.js';

/**
 * What the fallback page offers (protection/ works it out): every attempt, the www. twin when
 * it answered with a success (a link for the user, never followed on their behalf), and whether
 * HTTP answers.
 */
export interface FallbackPlan {
  tried: Attempt[];
  twin: string | null;
  http: string;
}

export interface FallbackDeps {
  /** Where to probe for a captive portal, read afresh (a change may be on its way). */
  portalProbeUrl(): Promise<string>;
  /**
   * What else to offer: the host's www. twin (or a ruleset's rewrite of it), and HTTP.
   * `byUser`: the failed navigation was the user's own (only then may the plan forget anything).
   */
  plan(httpUrl: string, reason: string, byUser: boolean): Promise<FallbackPlan>;
  tickets: PageTickets;
  /** A ticket was issued: keep them for the session (the background may be stopped). */
  ticketsChanged(): Promise<void>;
  /** A failure is being sent to the fallback page (statistics). */
  fellBack(): void;
}

export class HttpsFirstFallback {
  private readonly tracker = new HttpsFirstTracker((event) => void this.fallBack(event));
  /**
   * Top-level requests per tab (count, last URL): a fallback whose tab moved on to another
   * address since its failure is dropped. The browser's error page reloading the failed
   * address by itself (Chromium retries a refused connection) is not moving on.
   */
  private readonly navigations = new Map<number, { count: number; url: string }>();
  /** Chromium: the https:// page the handoff page opens for HTTPS-first, to be followed too. */
  private readonly handoffUpgrades = new Map<
    number,
    { target: string; url: string; byUser: boolean }
  >();
  /**
   * Tabs showing the fallback page, by id: its address (extensions without the "tabs"
   * permission cannot read the address of a tab showing one of their own pages).
   */
  private readonly fallbackTabs = new Map<number, string>();

  constructor(private readonly deps: FallbackDeps) {}

  /** A top-level request started in the tab: what was followed there before is over. */
  navigated(tabId: number, requestId: string, url: string): void {
    this.fallbackTabs.delete(tabId);
    this.tracker.superseded(tabId, requestId);
    this.navigations.set(tabId, { count: (this.navigations.get(tabId)?.count ?? 0) + 1, url });
    const handoff = this.handoffUpgrades.get(tabId);
    this.handoffUpgrades.delete(tabId);
    if (handoff !== undefined && handoff.target === url)
      this.tracker.started(requestId, tabId, handoff.url, handoff.byUser);
  }

  /**
   * HTTPS-first is upgrading this navigation to the http:// `url`: follow it. `byUser`: no web
   * page started it (FallbackEvent).
   */
  upgrading(requestId: string, tabId: number, url: string, byUser: boolean): void {
    this.tracker.started(requestId, tabId, url, byUser);
  }

  /** Chromium: the handoff page sends the tab to `target`, HTTPS-first's upgrade of `url`. */
  handedOff(tabId: number, url: string, target: string, byUser: boolean): void {
    this.handoffUpgrades.set(tabId, { target, url, byUser });
  }

  responded(requestId: string): void {
    this.tracker.responded(requestId);
  }

  errored(requestId: string, error: string): void {
    this.tracker.errored(requestId, error);
  }

  /** A followed navigation sent to an extension page (Chromium's handoff page) is no longer ours. */
  redirected(requestId: string, to: string): void {
    this.tracker.redirected(requestId, to);
  }

  /** The fallback page's address in a tab showing it. */
  pageIn(tabId: number): string | undefined {
    return this.fallbackTabs.get(tabId);
  }

  tabClosed(tabId: number): void {
    this.fallbackTabs.delete(tabId);
    this.navigations.delete(tabId);
    this.handoffUpgrades.delete(tabId);
  }

  private async fallBack(event: FallbackEvent): Promise<void> {
    const seen = this.navigations.get(event.tabId)?.count ?? 0;
    // Never replace what the tab shows now: the user (or a redirect) has gone on since.
    const movedOn = () => {
      const now = this.navigations.get(event.tabId);
      return (
        now !== undefined &&
        now.count !== seen &&
        now.url !== event.attempt &&
        now.url !== event.url
      );
    };
    this.deps.fellBack();
    // A network that asks to sign in first (hotel, airport) gets its own words on the fallback
    // page, but relaxes nothing by itself: whoever sits on the network can answer the probe.
    const portal = await probeCaptivePortal(await this.deps.portalProbeUrl());
    const reason =
      portal === 'captive' ? `${CAPTIVE_PORTAL_REASON}: ${event.reason}` : event.reason;
    const plan = await this.deps.plan(event.url, event.reason, event.byUser);
    if (movedOn()) return;
    const back = await historyToSkip(event);
    // The page's address carries a ticket: only with it may its buttons allow HTTP (ui-senders.ts).
    const ticket = this.deps.tickets.issue(event.tabId, event.url);
    await this.deps.ticketsChanged();
    const page = fallbackPageUrl(ext.runtime.getURL(FALLBACK_PAGE), event.url, reason, {
      tried: plan.tried,
      http: plan.http,
      twin: plan.twin,
      back,
      ticket,
    });
    if (movedOn()) return;
    this.fallbackTabs.set(event.tabId, page);
    await ext.tabs.update(event.tabId, { url: page });
  }
}

/**
 * How many history entries "Go back" skips: the fallback page, and the browser's error page
 * when the failure committed one (its address is the attempt). An error page commits just
 * after the error event, so the tab is given a moment to settle; a timeout is cut short by
 * the fallback before anything commits.
 */
async function historyToSkip(event: FallbackEvent): Promise<number> {
  if (event.reason === 'timeout') return 1;
  let tab: chrome.tabs.Tab | undefined;
  // Up to 5 s: on a busy machine the error page commits late, and reading the tab before it
  // does would leave "Go back" on the failed attempt.
  for (let i = 0; i < 50; i++) {
    tab = await ext.tabs.get(event.tabId).catch(() => undefined);
    if (tab === undefined || tab.status !== 'loading') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const shown = tab?.url ?? '';
  return shown === event.attempt || shown === event.url || shown.startsWith('chrome-error:')
    ? 2
    : 1;
}
