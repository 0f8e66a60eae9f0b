import { isHttpsFirstExempt } from '../site-rules/exempt.js';
import { siteOf } from '../site-rules/site-pattern.js';
import type { PageStatus } from './protection-protocol.js';

/** What the tab's last main-frame load told the background (see TabActivity). */
export interface PageRecord {
  url: string;
  /** Our mode upgraded the page. */
  httpsFirst: boolean;
  /** The ruleset that rewrote the page's own address, if one did. */
  ruleset?: string | null;
  /** The page was asked for over http:// (and may have ended on https:// some other way). */
  requestedHttp?: boolean;
}

export interface StatusInputs {
  globalEnabled: boolean;
  modeOn: boolean;
  captivePortal: boolean;
  disabledBy(host: string, port: string): string | null;
  httpAllowedBy(host: string, port: string): string | null;
  openedOnce(host: string): boolean;
  loopBlocked(host: string): boolean;
  /** The fallback moved this tab to the host's `www.` twin: the host it came from. */
  alternativeFrom(url: string): string | null;
}

/** "Is this page secure, and why" for one tab's address. */
export function pageStatus(url: string | undefined, record: PageRecord | undefined, s: StatusInputs): PageStatus {
  const site = url === undefined ? null : siteOf(url);
  if (url === undefined || site === null) return { secure: false, reason: 'not-web' };
  const sameLoad = record !== undefined && record.url === url;
  if (url.startsWith('https:')) {
    const from = s.alternativeFrom(url);
    if (from !== null) return { secure: true, reason: 'alternative', from };
    if (sameLoad && record.ruleset) return { secure: true, reason: 'ruleset', ruleset: record.ruleset };
    if (sameLoad && record.httpsFirst) return { secure: true, reason: 'upgrade' };
    if (sameLoad && record.requestedHttp) return { secure: true, reason: 'browser' };
    return { secure: true, reason: 'https' };
  }
  if (!s.globalEnabled) return { secure: false, reason: 'all-off' };
  const off = s.disabledBy(site.host, site.port);
  if (off !== null) return { secure: false, reason: 'site-off', entry: off };
  if (s.loopBlocked(site.host)) return { secure: false, reason: 'loop-guard', host: site.host };
  const allowed = s.httpAllowedBy(site.host, site.port);
  if (allowed !== null) return { secure: false, reason: 'site-rulesets-only', entry: allowed };
  if (s.openedOnce(site.host)) return { secure: false, reason: 'failed-upgrade' };
  if (isHttpsFirstExempt(site.host)) return { secure: false, reason: 'local' };
  if (s.captivePortal) return { secure: false, reason: 'captive-portal' };
  if (!s.modeOn) return { secure: false, reason: 'mode-off' };
  return { secure: false, reason: 'opened-over-http' };
}
