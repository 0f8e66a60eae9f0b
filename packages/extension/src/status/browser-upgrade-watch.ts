/**
 * Who moved a tab's page from http:// to https://, per navigation: the browser itself (Chrome's
 * HTTPS-Upgrades or "Always use secure connections", Firefox's HTTPS-Only or HTTPS-First, or
 * HSTS), the site (a redirect it sent), or nobody. Listens only. Measured in Chromium 156 and
 * Firefox ESR 153 (docs/browser-upgrades.md):
 *  - Chromium's own upgrade is invisible to webRequest: the navigation starts at http:// and the
 *    first request it shows is already https://. HSTS and our DNR upgrade show as a
 *    "307 Internal Redirect"; a site's redirect shows with its own status (301, 302, ...).
 *  - Firefox's HTTPS-Only upgrade and HSTS show as a redirect with status 0.
 * Our own upgrades are told apart by the tab record (tab-activity.ts), which the popup checks
 * first; this watch only says that the page did not get to HTTPS through the site.
 */

export type MovedBy = 'browser' | 'site';

interface Navigation {
  /** Where the navigation started. */
  start: string;
  /** A site's own redirect from http:// to https:// happened on the way. */
  siteRedirect: boolean;
  /** A request of this navigation went out over plain HTTP and came back to HTTPS internally. */
  internal: boolean;
}

/** How long an answer is kept per tab: the committed page only. */
export class BrowserUpgradeWatch {
  private readonly pending = new Map<number, Navigation>();
  private readonly committed = new Map<number, { url: string; movedBy: MovedBy | null }>();

  /** webNavigation.onBeforeNavigate, top frame. */
  started(tabId: number, url: string): void {
    this.pending.set(tabId, { start: url, siteRedirect: false, internal: false });
  }

  /** webRequest.onBeforeRedirect of a main frame. */
  redirected(
    tabId: number,
    from: string,
    to: string,
    statusCode: number,
    statusLine: string | undefined,
  ): void {
    const nav = this.pending.get(tabId);
    if (nav === undefined || !from.startsWith('http:')) return;
    // To an extension page (Chromium's handoff, which the worker may answer with a redirect on
    // to https://): where the navigation goes from there is ours, not the browser's upgrade.
    if (!/^https?:/i.test(to)) this.pending.delete(tabId);
    if (!to.startsWith('https:')) return;
    // Chromium: HSTS and extension rules are "Internal Redirect"s; Firefox gives them status 0.
    const internal = statusCode === 0 || (statusLine ?? '').includes('Internal Redirect');
    if (internal) nav.internal = true;
    else nav.siteRedirect = true;
  }

  /** webNavigation.onCommitted, top frame: the answer for the page now in the tab. */
  committedPage(tabId: number, url: string): void {
    const nav = this.pending.get(tabId);
    this.pending.delete(tabId);
    this.committed.set(tabId, { url, movedBy: nav === undefined ? null : movedBy(nav, url) });
  }

  /** Who moved the page at `url` (the tab's current page) to HTTPS, if anybody. */
  movedBy(tabId: number, url: string | undefined): MovedBy | null {
    const c = this.committed.get(tabId);
    return c !== undefined && c.url === url ? c.movedBy : null;
  }

  tabClosed(tabId: number): void {
    this.pending.delete(tabId);
    this.committed.delete(tabId);
  }
}

/** The same host (and port, as the browser keeps it) over http:// first and https:// now. */
function movedBy(nav: Navigation, committed: string): MovedBy | null {
  let from: URL;
  let to: URL;
  try {
    from = new URL(nav.start);
    to = new URL(committed);
  } catch {
    return null;
  }
  if (from.protocol !== 'http:' || to.protocol !== 'https:') return null;
  if (nav.siteRedirect) return 'site';
  // A different host without a redirect we saw is not the browser's scheme upgrade.
  return from.hostname === to.hostname ? 'browser' : null;
}
