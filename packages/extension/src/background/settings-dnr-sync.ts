/**
 * Chromium only: the settings' dynamic rules (global switch, site lists, user rules,
 * HTTPS-first), recompiled when the settings change and written only when they differ.
 */
import { ext } from './browser-api.js';
import type { SettingsController } from './settings-controller.js';
import { inUiRange } from './dnr-layout.js';
import { uiDnrRules } from './settings-dnr-rules.js';

export function uiRulesSyncer(): (c: SettingsController) => Promise<void> {
  let appliedRules = '';
  return async (c) => {
    const s = c.settings;
    const { rules } = uiDnrRules({
      globalEnabled: s.globalEnabled,
      disabledSites: s.disabledSites,
      httpAllowedSites: s.httpAllowedSites,
      httpOnceHosts: [...c.httpOnce],
      userRulesets: c.userRulesets.filter((r) => c.userEngine?.isActive(c.userEngine.rulesetIdsByName(r.name)[0] as number)),
      httpsFirst: s.httpsFirst,
      extensionId: ext.runtime.id,
    });
    const key = JSON.stringify(rules);
    if (key === appliedRules) return;
    const existing = await ext.declarativeNetRequest.getDynamicRules();
    await ext.declarativeNetRequest.updateDynamicRules({
      removeRuleIds: existing.filter((r) => inUiRange(r.id)).map((r) => r.id),
      addRules: rules as chrome.declarativeNetRequest.Rule[],
    });
    appliedRules = key;
  };
}
