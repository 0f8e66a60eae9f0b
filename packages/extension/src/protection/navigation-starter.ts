/**
 * Who started a top-level navigation, as the browser reports it: Chromium's `initiator` (the
 * origin of the page that started it), Firefox's `originUrl` (that page's address). Neither is
 * set when the user typed the address, chose a bookmark or a tab of ours was moved by the
 * background. What a navigation may teach or make the extension forget depends on it: a web page
 * can start navigations to any site, so its navigations are not evidence about those sites.
 */

export interface NavigationDetails {
  /** Chromium: the origin that started the request ("null" for an opaque one). */
  initiator?: string;
  /** Firefox: the document (or worker) that started the request. */
  originUrl?: string;
}

export interface PageStarter {
  /** The starting page, as reported (an origin on Chromium, an address on Firefox). */
  page: string;
  /** Its host ("" when it has none: an opaque origin, a data: page). */
  host: string;
}

/**
 * The web page that started the navigation, or null when the user did (or one of this
 * extension's own pages, which act only on the user's clicks). `ownOrigin` is the extension's
 * base URL (`chrome-extension://<id>/`, `moz-extension://<uuid>/`).
 */
export function pageStarter(d: NavigationDetails, ownOrigin: string): PageStarter | null {
  const raw = d.originUrl ?? d.initiator;
  if (raw === undefined || raw === '') return null;
  const own = ownOrigin.replace(/\/+$/, '');
  if (own !== '' && (raw === own || raw.startsWith(`${own}/`))) return null;
  let host = '';
  try {
    host = new URL(raw).hostname.toLowerCase().replace(/\.+$/, '');
  } catch {
    // An opaque origin ("null"): a page all the same, with no host.
  }
  return { page: raw, host };
}
