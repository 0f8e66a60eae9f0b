/**
 * What the popup shows about a tab: the status line (why its page is or is not on HTTPS), the
 * site's switches, the rulesets the page met; and the status line's "retry", which removes
 * what keeps the page on HTTP. A change to what the popup says belongs here or in page-status.ts.
 */
import type { Settings } from '../settings/schema.js';
import { removeSite, siteOf } from '../site-rules/site-pattern.js';
import { snapshotState, type ProtectionSnapshot } from '../decision/snapshot.js';
import type { PageStatus, PopupState, RulesetRow } from '../protocol/ui-protocol.js';
import type { TabActivity } from './tab-activity.js';
import type { LayeredRewriter } from '../rewriter/layered-rewriter.js';
import { rulesetRow } from '../rewriter/ruleset-catalog.js';
import { pageStatus } from './page-status.js';
import { fallbackTarget } from '../https-first/fallback-address.js';

/**
 * What the views read (nothing here can change it): the settings' snapshot, which the tab's
 * requests are decided with, the settings for what the popup lists, and the tab's records.
 */
export interface PageViewSources {
  readonly settings: Settings;
  readonly snapshot: ProtectionSnapshot;
  readonly activity: Pick<TabActivity, 'get' | 'orderedRulesets'>;
  readonly rewriter: LayeredRewriter;
  /** Path of the fallback page (`/ui/fallback.html`). */
  readonly fallbackPath: string;
  /** Who moved the tab's page to HTTPS when we did not (browser-upgrade-watch.ts). */
  movedBy(tabId: number, url: string | undefined): 'browser' | 'site' | null;
}

/** What the retry may do, each the user's own click in the popup. */
export interface RetryActions {
  update(change: (s: Settings) => Partial<Settings>): Promise<Settings>;
  forgetLoop(host: string): Promise<void>;
  dropHttpOnce(host: string): Promise<void>;
}

/** Why the tab's page is or is not on HTTPS (see PageStatus). */
export function tabPageStatus(
  v: PageViewSources,
  tabId: number,
  tabUrl: string | undefined,
): PageStatus {
  const rec = v.activity.get(tabId);
  const site = tabUrl === undefined ? null : siteOf(tabUrl);
  const offRulesets =
    site === null
      ? []
      : v.rewriter
          .rulesetNamesForHost(site.host)
          .map((n) => rulesetRow(v.rewriter, n))
          .filter((r): r is RulesetRow => r !== null && !r.active && r.defaultActive)
          .map((r) => r.name);
  return pageStatus({
    url: tabUrl,
    tabId,
    fallbackPath: v.fallbackPath,
    // A ruleset may have moved the page to another host: ask about the address asked for.
    httpUrl:
      rec !== undefined && rec.url === tabUrl && rec.upgradedFrom !== undefined
        ? rec.upgradedFrom
        : undefined,
    upgraded:
      rec !== undefined && rec.url === tabUrl && rec.mainUpgraded === true
        ? { byHttpsFirst: rec.httpsFirst }
        : null,
    offRulesets,
    movedBy: v.movedBy(tabId, tabUrl),
    state: snapshotState(v.snapshot),
  });
}

export function popupState(
  v: PageViewSources,
  tabId: number,
  tabUrl: string | undefined,
): PopupState {
  const s = v.settings;
  const site = tabUrl === undefined ? null : siteOf(tabUrl);
  const rec = v.activity.get(tabId);
  return {
    status: tabPageStatus(v, tabId, tabUrl),
    settings: { globalEnabled: s.globalEnabled, httpsFirst: s.httpsFirst },
    site:
      site === null || tabUrl === undefined
        ? null
        : {
            url: tabUrl,
            scheme: new URL(tabUrl).protocol.replace(':', ''),
            hostWithPort: site.hostWithPort,
            disabledBy: v.snapshot.disabled.matchHost(site.host, site.port),
            httpAllowedBy: v.snapshot.httpAllowed.matchHost(site.host, site.port),
          },
    rulesets: v.activity
      .orderedRulesets(tabId)
      .map((n) => rulesetRow(v.rewriter, n))
      .filter((r): r is RulesetRow => r !== null),
    upgraded: rec?.upgraded ?? 0,
    httpsFirstPage: rec?.httpsFirst ?? false,
    overrideCount: Object.keys(s.rulesetOverrides).length,
  };
}

/**
 * Removes what keeps the tab's page on HTTP, as the status line offers. Answers the address
 * the popup should load next (the page, or the site behind the fallback page).
 */
export async function retryPage(
  v: PageViewSources,
  act: RetryActions,
  tabId: number,
  tabUrl: string | undefined,
): Promise<{ ok: boolean; url?: string }> {
  const status = tabPageStatus(v, tabId, tabUrl);
  if (!status.retry || tabUrl === undefined) return { ok: false };
  const httpUrl = tabUrl.replace(/^https:/, 'http:');
  switch (status.kind) {
    case 'http-site-off':
      await act.update((s) => ({ disabledSites: removeSite(s.disabledSites, status.entry) }));
      break;
    case 'http-allowed':
      await act.update((s) => ({ httpAllowedSites: removeSite(s.httpAllowedSites, status.entry) }));
      break;
    case 'http-loop-guard':
      await act.forgetLoop(status.host);
      break;
    case 'http-upgrade-failed': {
      await act.dropHttpOnce(status.host);
      if (status.onFallbackPage) {
        const target = fallbackTarget(tabUrl) ?? '';
        return { ok: true, url: target.replace(/^https:/, 'http:') };
      }
      break;
    }
    case 'http-ruleset-off':
      await act.update((s) => {
        const overrides = { ...s.rulesetOverrides };
        for (const n of status.rulesets) delete overrides[n];
        return { rulesetOverrides: overrides };
      });
      break;
    default:
      break;
  }
  return { ok: true, url: httpUrl };
}
