/**
 * The one decision of httpsify, for a request or a top-level navigation, shared by both
 * browsers: Firefox's blocking listener, Chromium's handoff page and statistics, and the popup's
 * status line all ask it. Pure: everything it reads is in its input, so the order below is the
 * order, tested row by row in test/decision.test.ts and drawn in docs/architecture.md.
 *
 *  1. not http://                                   -> leave      not-http
 *  2. the global switch is off                      -> leave      extension-off
 *  3. the tab's page is on a site switched "off"    -> leave      site-off
 *  4. a loop verdict for this URL in this tab, of    -> allowHttp loop-guard
 *     this kind (its page, or what its pages load)
 *  5. a user rule rewrites it                       -> upgrade    user-rule
 *  6. a ruleset (channels, library, defaults) does  -> upgrade    ruleset
 *  navigations:
 *  7. HTTPS-first: "open over HTTP this time"       -> allowHttp  http-once
 *  8.              site set to "rulesets only"      -> allowHttp  http-allowed
 *  9. a ruleset's exclusion matches                 -> leave      ruleset-excludes
 * 10. HTTPS-first is off                            -> leave      mode-off
 * 11. a local name or address                       -> leave      local-name
 * 12. otherwise                                     -> upgrade    https-first
 *  subresources:
 *  9. a ruleset's exclusion matches                 -> leave      ruleset-excludes
 * 13. a known HTTPS host the mode upgrades          -> upgrade    known-host
 * 14. otherwise                                     -> leave      no-rule
 *
 * What weakens protection (3, 4, 7, 8, and the known-hosts store behind 13) is created only by
 * the user's clicks or by evidence the extension saw itself for that host: see
 * docs/architecture.md, "Who can relax protection".
 */
import { isHttpsFirstExempt } from '../site-rules/exempt.js';
import { siteOf } from '../site-rules/site-pattern.js';

/** A top-level navigation, or anything a page loads (frames included). */
export type RequestKind = 'navigation' | 'subresource';

/** Settings and learned state, read at one moment (the controller gives a live view). */
export interface DecisionState {
  globalEnabled: boolean;
  httpsFirst: boolean;
  /** The "off" (disabledSites) entry covering the URL's host, or null. */
  siteOffBy(url: string): string | null;
  /** The "rulesets only" (httpAllowedSites) entry covering the URL's host, or null. */
  httpAllowedBy(url: string): string | null;
  /**
   * "Open over HTTP this time" holds for the host: in every tab (this session), or in `tabId`
   * only (chosen on a sign-in network's fallback page, for that tab).
   */
  httpOnce(host: string, tabId: number): boolean;
  /**
   * A live loop verdict lets exactly this http:// URL load over HTTP in `tabId`, as the tab's
   * top-level page or as a subresource, whichever `kind` it looped as
   * (https-first/loop-guard.ts): never a host, never another tab, never the other kind.
   */
  loopVerdict(url: string, tabId: number, kind: RequestKind): boolean;
  /** A user rule's rewrite, or null. */
  userRewrite(url: string): { rewritten: string; ruleset: string | null } | null;
  /** The rulesets' rewrite (user rules, channels within their scopes, library, defaults). */
  rewrite(url: string): { rewritten: string | null; ruleset: string | null };
  /** The active ruleset whose exclusion matches the URL, or null. */
  excludedBy(url: string): string | null;
  /** The host is in the known-HTTPS-hosts store (live entry). */
  knownHttps(host: string): boolean;
}

export interface DecisionInput {
  url: string;
  kind: RequestKind;
  /** The tab the request belongs to; `tabId` -1 when none. `topUrl` is its top-level page. */
  tab: { tabId: number; topUrl?: string };
  state: DecisionState;
}

export type Decision =
  /** Send the request to `url` (an https:// URL, or where a ruleset says). */
  | {
      action: 'upgrade';
      url: string;
      reason: 'user-rule' | 'ruleset' | 'https-first' | 'known-host';
      ruleset?: string | null;
      entry?: undefined;
    }
  /** Leave the request as it is: nothing of ours applies. */
  | {
      action: 'leave';
      reason:
        | 'not-http'
        | 'extension-off'
        | 'site-off'
        | 'ruleset-excludes'
        | 'mode-off'
        | 'local-name'
        | 'no-rule';
      entry?: string | null;
      ruleset?: string | null;
    }
  /** Kept on HTTP although we would upgrade it: a relaxation the user chose, or the loop guard. */
  | {
      action: 'allowHttp';
      reason: 'loop-guard' | 'http-once' | 'http-allowed';
      entry?: string | null;
      ruleset?: undefined;
    };

export function decide(input: DecisionInput): Decision {
  const { url, kind, tab, state: s } = input;
  const site = url.startsWith('http:') ? siteOf(url) : null;
  if (site === null) return { action: 'leave', reason: 'not-http' };
  if (!s.globalEnabled) return { action: 'leave', reason: 'extension-off' };
  if (tab.tabId >= 0 || kind === 'navigation') {
    const top = kind === 'navigation' ? url : (tab.topUrl ?? url);
    const off = s.siteOffBy(top);
    if (off !== null) return { action: 'leave', reason: 'site-off', entry: off };
  }
  if (s.loopVerdict(url, tab.tabId, kind)) return { action: 'allowHttp', reason: 'loop-guard' };
  const user = s.userRewrite(url);
  if (user !== null && user.rewritten !== url)
    return { action: 'upgrade', url: user.rewritten, reason: 'user-rule', ruleset: user.ruleset };
  const rules = s.rewrite(url);
  if (rules.rewritten !== null && rules.rewritten !== url)
    return { action: 'upgrade', url: rules.rewritten, reason: 'ruleset', ruleset: rules.ruleset };
  const https = url.replace(/^http:/, 'https:');
  if (kind === 'navigation') {
    if (s.httpsFirst) {
      if (s.httpOnce(site.host, tab.tabId)) return { action: 'allowHttp', reason: 'http-once' };
      const allowed = s.httpAllowedBy(url);
      if (allowed !== null) return { action: 'allowHttp', reason: 'http-allowed', entry: allowed };
    }
    const excluded = s.excludedBy(url);
    if (excluded !== null)
      return { action: 'leave', reason: 'ruleset-excludes', ruleset: excluded };
    if (!s.httpsFirst) return { action: 'leave', reason: 'mode-off' };
    if (isHttpsFirstExempt(site.host)) return { action: 'leave', reason: 'local-name' };
    return { action: 'upgrade', url: https, reason: 'https-first' };
  }
  const excluded = s.excludedBy(url);
  if (excluded !== null) return { action: 'leave', reason: 'ruleset-excludes', ruleset: excluded };
  // The known hosts' upgrade: the mode on, the host itself not left on HTTP. Requests without
  // a tab (workers) too: Chromium's dynamic rules cannot tell them apart (tabIds is for session
  // rules only), and what the browser enforces is what this says.
  const modeApplies = s.httpsFirst;
  if (
    modeApplies &&
    s.knownHttps(site.host) &&
    s.siteOffBy(url) === null &&
    s.httpAllowedBy(url) === null &&
    !s.httpOnce(site.host, tab.tabId)
  )
    return { action: 'upgrade', url: https, reason: 'known-host' };
  return { action: 'leave', reason: 'no-rule' };
}

/**
 * Whether decide() upgrades `host`'s http:// subresources as a known HTTPS host (step 13), with
 * the rulesets set aside: they act first through their own rules. On Chromium, the hosts the
 * protection rules cover are exactly these (protection/protection-runtime.ts).
 */
export function upgradesAsKnownHost(state: DecisionState, host: string, port = ''): boolean {
  const url = `http://${port === '' ? host : `${host}:${port}`}/`;
  const rulesetsAside: DecisionState = {
    ...state,
    userRewrite: () => null,
    rewrite: () => ({ rewritten: null, ruleset: null }),
    excludedBy: () => null,
  };
  return (
    // No tab: what holds for every tab (a tab's own "open over HTTP" is that tab's rule).
    decide({ url, kind: 'subresource', tab: { tabId: -1 }, state: rulesetsAside }).reason ===
    'known-host'
  );
}
