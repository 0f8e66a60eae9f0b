import { siteOf } from '../site-rules/site-pattern.js';

/** How long an upgraded navigation may take to get a response before we fall back (as Firefox and Chrome do). */
export const HTTPS_FIRST_TIMEOUT_MS = 3000;

/**
 * Network errors that mean "this host does not do HTTPS (properly)": TLS failures, refused or
 * broken connections, no page at all, and a name that does not resolve (the HTTPS host may be
 * gone while HTTP is served elsewhere, or the name may be a typo: the fallback page's HTTP probe
 * tells), in Chromium (`net::ERR_*`) and Firefox (`NS_ERROR_*`) spelling. `net::ERR_ABORTED`
 * is not among them: it also ends requests the user or we cancelled.
 */
const FALLBACK_ERRORS = [
  /^net::ERR_SSL_/,
  /^net::ERR_CERT_/,
  /^net::ERR_BAD_SSL_CLIENT_AUTH_CERT$/,
  /^net::ERR_CONNECTION_(CLOSED|RESET|REFUSED|FAILED|TIMED_OUT)$/,
  /^net::ERR_EMPTY_RESPONSE$/,
  /^net::ERR_TIMED_OUT$/,
  /^net::ERR_ADDRESS_UNREACHABLE$/,
  /^net::ERR_TUNNEL_CONNECTION_FAILED$/,
  /^net::ERR_NAME_NOT_RESOLVED$/,
  /^net::ERR_NAME_RESOLUTION_FAILED$/,
  /^net::ERR_INVALID_RESPONSE$/,
  /^net::ERR_INVALID_HTTP_RESPONSE$/,
  /^net::ERR_HTTP2_PROTOCOL_ERROR$/,
  /^net::ERR_QUIC_PROTOCOL_ERROR$/,
  /^NS_ERROR_UNKNOWN_HOST$/,
  /^NS_ERROR_NET_EMPTY_RESPONSE$/,
  /^NS_ERROR_NET_PARTIAL_TRANSFER$/,
  /^NS_ERROR_CONNECTION_REFUSED$/,
  /^NS_ERROR_NET_TIMEOUT$/,
  /^NS_ERROR_NET_RESET$/,
  /^NS_ERROR_NET_INTERRUPT$/,
  /^NS_ERROR_NET_ON_TLS_HANDSHAKE_ENDED$/,
  /^NS_ERROR_GENERATE_FAILURE\(NS_ERROR_MODULE_SECURITY/,
  /^SEC_ERROR_/,
  /^SSL_ERROR_/,
  /^MOZILLA_PKIX_ERROR_/,
];

/**
 * Firefox's webRequest names every failure (`NS_ERROR_…`, `NS_BINDING_ABORTED`) except TLS and
 * certificate ones, which it reports as NSS's localized message ("SSL received a record that
 * exceeded the maximum permissible length."). So any text that is not an error name is one.
 */
const ERROR_NAME = /^(net::)?[A-Z][A-Z0-9_]*(\(.*\))?$/;

export function isFallbackError(error: string): boolean {
  return FALLBACK_ERRORS.some((re) => re.test(error)) || (error !== '' && !ERROR_NAME.test(error));
}

export function httpsVersion(url: string): string {
  return url.replace(/^http:/i, 'https:');
}

export function httpVersion(url: string): string {
  return url.replace(/^https:/i, 'http:');
}

export interface FallbackEvent {
  tabId: number;
  /** The http:// URL the user asked for. */
  url: string;
  /** The https:// address that failed last (after any redirects). */
  attempt: string;
  reason: string;
  /**
   * The user's own navigation (typed, a bookmark, one of our pages acting on a click), not one a
   * web page started: only such a failure may change what the extension has learned.
   */
  byUser: boolean;
}

interface Pending {
  tabId: number;
  url: string;
  attempt: string;
  byUser: boolean;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Where an upgraded navigation may be redirected and still be ours to follow: web pages. A
 * redirect elsewhere (Chromium's handoff page, any extension page) ends our part: the page that
 * loads there is not the upgrade that may fail.
 */
const WEB_PAGE = /^https?:/i;

/**
 * Follows top-level navigations HTTPS-first upgraded, by request id, and reports the ones that
 * failed (a fallback error, or no response within the timeout) so the tab can be sent to the
 * fallback. A navigation is reported at most once.
 */
export class HttpsFirstTracker {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly onFallback: (event: FallbackEvent) => void,
    private readonly timeoutMs = HTTPS_FIRST_TIMEOUT_MS,
  ) {}

  /** An http:// navigation HTTPS-first is upgrading (`byUser`: see FallbackEvent). */
  started(requestId: string, tabId: number, httpUrl: string, byUser = false): void {
    this.clear(requestId);
    const timer = setTimeout(() => this.fail(requestId, 'timeout'), this.timeoutMs);
    this.pending.set(requestId, {
      tabId,
      url: httpUrl,
      attempt: httpsVersion(httpUrl),
      byUser,
      timer,
    });
  }

  /** The request was redirected to `to`: a redirect away from the web ends the wait. */
  redirected(requestId: string, to: string): void {
    const p = this.pending.get(requestId);
    if (p === undefined) return;
    if (!WEB_PAGE.test(to)) {
      this.clear(requestId);
      return;
    }
    p.attempt = to;
    // The host answered over HTTPS (with a redirect): a failure further on is another host's,
    // whoever typed the address, so it is no reason to forget this one (byUser, FallbackEvent).
    if (siteOf(to)?.host !== siteOf(p.url)?.host) p.byUser = false;
  }

  /**
   * Another top-level request started in the tab: the one we followed is no longer what the tab
   * shows, so its timer must not send the tab anywhere.
   */
  superseded(tabId: number, requestId: string): void {
    for (const [id, p] of this.pending) if (p.tabId === tabId && id !== requestId) this.clear(id);
  }

  /** Headers arrived (or the navigation finished): HTTPS works for it. */
  responded(requestId: string): void {
    this.clear(requestId);
  }

  /** The request failed; falls back when the error says HTTPS is not available. */
  errored(requestId: string, error: string): void {
    if (!this.pending.has(requestId)) return;
    if (isFallbackError(error)) this.fail(requestId, error);
    else this.clear(requestId);
  }

  isPending(requestId: string): boolean {
    return this.pending.has(requestId);
  }

  private fail(requestId: string, reason: string): void {
    const p = this.pending.get(requestId);
    if (p === undefined) return;
    this.clear(requestId);
    this.onFallback({ tabId: p.tabId, url: p.url, attempt: p.attempt, reason, byUser: p.byUser });
  }

  private clear(requestId: string): void {
    const p = this.pending.get(requestId);
    if (p !== undefined) clearTimeout(p.timer);
    this.pending.delete(requestId);
  }
}
