import { isHttpsFirstExempt } from '../site-rules/exempt.js';
import type { PageStatus } from '../protocol/ui-protocol.js';
import { decide, type DecisionState } from '../decision/decide.js';
import { readFallbackPage } from '../https-first/fallback-address.js';

/**
 * Everything the status of one tab's page depends on: what the tab's record says of the page,
 * and the decision's state (the settings' snapshot, decision/snapshot.ts), which answers every
 * question of the settings exactly as it does for the tab's requests.
 */
export interface PageStatusInputs {
  /** The tab's address (undefined: no tab, or one the extension may not see). */
  url: string | undefined;
  tabId: number;
  /**
   * The path of our own fallback page (`/ui/fallback.html`). Matched by path on any
   * extension origin: Chromium's runtime.getURL may answer with a dynamic origin for pages that
   * are web-accessible, while the tab shows the extension's id.
   */
  fallbackPath: string;
  /** The http:// address the page was asked for (a ruleset may have moved it to another host). */
  httpUrl?: string;
  /** The tab's main frame went from http:// to https:// through us; `byHttpsFirst` when HTTPS-first did it. */
  upgraded: { byHttpsFirst: boolean } | null;
  /** Rulesets on by default whose targets cover the host but which the user switched off. */
  offRulesets: string[];
  /** Who moved the page from http:// to https:// when we did not (browser-upgrade-watch.ts). */
  movedBy?: 'browser' | 'site' | null;
  state: DecisionState;
}

function base(secure: boolean, retry: boolean) {
  return { secure, retry };
}

/**
 * Why the page is or is not on HTTPS. Reasons a page stays on HTTP are checked in the order
 * the background applies them: the user's own choices first, then the protections that step
 * aside by themselves (loop guard, captive portal), then the rules.
 */
export function pageStatus(i: PageStatusInputs): PageStatus {
  const url = parse(i.url);
  if (
    url !== null &&
    /^(chrome|moz)-extension:$/.test(url.protocol) &&
    url.pathname === i.fallbackPath
  ) {
    const host = hostOf(readFallbackPage(url.searchParams).url ?? '');
    if (host !== null)
      return { ...base(false, true), kind: 'http-upgrade-failed', host, onFallbackPage: true };
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    return { ...base(false, false), kind: 'not-a-web-page' };
  const secure = url.protocol === 'https:';
  const st = i.state;
  const httpUrl = i.httpUrl ?? url.href.replace(/^https:/, 'http:');
  // The browser's own upgrade is named even when httpsify is off: "off" above an HTTPS page
  // the browser moved there would read as if the switch did not work.
  const byBrowser = secure && i.upgraded === null && i.movedBy === 'browser';
  if (!st.globalEnabled)
    return byBrowser
      ? { ...base(true, false), kind: 'https-by-browser', userWantsHttp: true }
      : { ...base(secure, false), kind: 'extension-off' };
  if (secure) {
    if (i.upgraded?.byHttpsFirst) return { ...base(true, false), kind: 'https-by-upgrade' };
    const ruleset = i.upgraded === null ? null : st.rewrite(httpUrl).ruleset;
    if (ruleset !== null) return { ...base(true, false), kind: 'https-by-ruleset', ruleset };
    if (byBrowser)
      return {
        ...base(true, false),
        kind: 'https-by-browser',
        userWantsHttp: st.siteOffBy(httpUrl) !== null || st.httpAllowedBy(httpUrl) !== null,
      };
    if (i.movedBy === 'site') return { ...base(true, false), kind: 'https-by-site' };
    return { ...base(true, false), kind: 'https-already' };
  }
  // What the extension decides for this address now, as it would for the tab's navigation.
  const d = decide({
    url: url.href,
    kind: 'navigation',
    tab: { tabId: i.tabId, topUrl: url.href },
    state: st,
  });
  switch (d.reason) {
    case 'site-off':
      return { ...base(false, true), kind: 'http-site-off', entry: d.entry ?? '' };
    case 'loop-guard':
      return { ...base(false, true), kind: 'http-loop-guard', host: url.hostname };
    case 'user-rule':
    case 'ruleset':
      if (d.url.startsWith('https:')) return { ...base(false, true), kind: 'http-not-yet' };
      break;
    case 'http-once':
      return {
        ...base(false, true),
        kind: 'http-upgrade-failed',
        host: url.hostname,
        onFallbackPage: false,
      };
    case 'http-allowed':
      return { ...base(false, true), kind: 'http-allowed', entry: d.entry ?? '' };
    default:
      break;
  }
  if (i.offRulesets.length > 0)
    return { ...base(false, true), kind: 'http-ruleset-off', rulesets: i.offRulesets };
  // Not a retry: the ruleset's authors know the page breaks over HTTPS.
  if (d.reason === 'ruleset-excludes')
    return { ...base(false, false), kind: 'http-ruleset-excludes', ruleset: d.ruleset ?? '' };
  // HTTPS-first would upgrade this page: it was loaded before HTTPS-first was switched on.
  if (d.reason === 'https-first') return { ...base(false, true), kind: 'http-not-yet' };
  return {
    ...base(false, false),
    kind: 'http-no-rule',
    httpsFirst: st.httpsFirst,
    localAddress: isHttpsFirstExempt(url.hostname),
  };
}

function parse(url: string | undefined): URL | null {
  if (url === undefined) return null;
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

function hostOf(url: string): string | null {
  const u = parse(url);
  return u !== null && (u.protocol === 'http:' || u.protocol === 'https:') ? u.hostname : null;
}
