import type { PageStatusKind, PopupState, UiRequest } from '../../protocol/ui-protocol.js';

/** The site's state: everything (no entry), rulesets only (HTTP allowed) or off. */
export type SiteMode = 'everything' | 'rules' | 'off';

export function siteMode(site: NonNullable<PopupState['site']>): SiteMode {
  if (site.disabledBy !== null) return 'off';
  return site.httpAllowedBy !== null ? 'rules' : 'everything';
}

export const MODE_HINT: Record<SiteMode, string> = {
  everything: 'popupSiteEverythingHint',
  rules: 'popupSiteRulesOnlyHint',
  off: 'popupSiteOffHint',
};

type Site = NonNullable<PopupState['site']>;
type SiteListChange = Extract<UiRequest, { type: 'siteAdd' | 'siteRemove' }>;

/** The site-list changes that take `site` from its mode to `mode`, in the order to send them. */
export function modeChanges(site: Site, mode: SiteMode): SiteListChange[] {
  const changes: SiteListChange[] = [];
  if (siteMode(site) === mode) return changes;
  if (site.disabledBy !== null)
    changes.push({ type: 'siteRemove', list: 'disabledSites', entry: site.disabledBy });
  if (site.httpAllowedBy !== null && mode !== 'rules')
    changes.push({ type: 'siteRemove', list: 'httpAllowedSites', entry: site.httpAllowedBy });
  if (mode === 'off')
    changes.push({ type: 'siteAdd', list: 'disabledSites', entry: site.hostWithPort });
  if (mode === 'rules' && site.httpAllowedBy === null)
    changes.push({ type: 'siteAdd', list: 'httpAllowedSites', entry: site.hostWithPort });
  return changes;
}

/**
 * Where the tab goes once the site is in `mode`: a page httpsify moved to HTTPS goes back to
 * its http:// address when the new mode would not have moved it (off, or rulesets only for an
 * HTTPS-first upgrade, or the browser's own upgrade), so what the user sees is what they asked
 * for; otherwise undefined (a plain reload).
 */
export function reloadUrl(site: Site, before: PageStatusKind, mode: SiteMode): string | undefined {
  const byUs = before === 'https-by-ruleset' || before === 'https-by-upgrade';
  // The browser's own upgrade: the background loads the page past it where it can.
  const byBrowser = before === 'https-by-browser';
  const toHttp =
    site.scheme === 'https' &&
    ((mode === 'off' && (byUs || byBrowser)) ||
      (mode === 'rules' && (before === 'https-by-upgrade' || byBrowser)));
  return toHttp ? site.url.replace(/^https:/, 'http:') : undefined;
}
