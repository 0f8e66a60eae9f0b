/**
 * Loads a tab's page at its http:// address after the user asked for HTTP there ("Off" or
 * "Rules only" for the site, or httpsify off), past the browser's own upgrade where an
 * extension can. Measured (docs/browser-upgrades.md):
 *  - Chromium with HTTPS-Upgrades on (as shipped): a DNR redirect of the upgraded https:// URL
 *    back to http:// keeps the page on HTTP, and Chromium then treats the host as one that
 *    fell back and stops upgrading it by itself. So the redirect is needed once, in that tab,
 *    for that address, and is removed when the tab's next page commits.
 *  - Chromium with "Always use secure connections" on shows its warning instead; Firefox's
 *    HTTPS-Only answers any redirect back to HTTP with its error page. There the popup names
 *    the browser's own setting (status-text.ts), and the tab is just sent to the address.
 */
import { ext } from '../platform/browser-api.js';
import { OPEN_OVER_HTTP_IDS } from '../dnr/layout.js';

/**
 * Session rule ids of these one-off redirects (beyond the rule writer's ranges, dnr/layout.ts)
 * and their priority, above every allow rule of ours (site off, httpsify off).
 */
const FIRST_ID = OPEN_OVER_HTTP_IDS.base;
const LAST_ID = OPEN_OVER_HTTP_IDS.limit - 1;
const PRIORITY = 3_000_000;
/** The rule goes when the tab commits a page, or after this long if it never does. */
const RULE_LIFETIME_MS = 30_000;

let nextId: number = FIRST_ID;

/** RE2 text matching `s` literally. */
function literal(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `platform` 'firefox' (or an address httpsify itself upgrades): only sends the tab there. */
export async function openOverHttp(
  platform: 'chromium' | 'firefox',
  tabId: number,
  httpUrl: string,
): Promise<{ ok: boolean }> {
  if (platform === 'firefox') {
    await ext.tabs.update(tabId, { url: httpUrl });
    return { ok: true };
  }
  const id = nextId;
  nextId = nextId === LAST_ID ? FIRST_ID : nextId + 1;
  const httpsUrl = httpUrl.replace(/^http:/, 'https:');
  const dnr = ext.declarativeNetRequest;
  await dnr.updateSessionRules({
    removeRuleIds: [id],
    addRules: [
      {
        id,
        priority: PRIORITY,
        action: {
          type: 'redirect' as chrome.declarativeNetRequest.RuleActionType,
          redirect: { transform: { scheme: 'http' } },
        },
        condition: {
          regexFilter: `^${literal(httpsUrl)}$`,
          isUrlFilterCaseSensitive: true,
          tabIds: [tabId],
          resourceTypes: ['main_frame' as chrome.declarativeNetRequest.ResourceType],
        },
      },
    ],
  });
  const remove = () => void dnr.updateSessionRules({ removeRuleIds: [id] }).catch(() => undefined);
  const timer = setTimeout(() => done(), RULE_LIFETIME_MS);
  const committed = (d: { tabId: number; frameId: number }) => {
    if (d.tabId === tabId && d.frameId === 0) done();
  };
  function done(): void {
    clearTimeout(timer);
    ext.webNavigation.onCommitted.removeListener(committed);
    ext.webNavigation.onErrorOccurred.removeListener(committed);
    remove();
  }
  ext.webNavigation.onCommitted.addListener(committed);
  ext.webNavigation.onErrorOccurred.addListener(committed);
  try {
    await ext.tabs.update(tabId, { url: httpUrl });
  } catch {
    done();
    return { ok: false };
  }
  return { ok: true };
}
