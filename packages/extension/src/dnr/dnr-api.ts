/**
 * declarativeNetRequest (Chromium) as the rule writer and the static-ruleset switch use it: the
 * browser's door (platform/browser-api.ts) typed with our rules.
 */
import { ext } from '../platform/browser-api.js';
import type { DnrRulesApi } from './rule-writer.js';
import type { ExtRule } from './rules.js';

/** declarativeNetRequest as the rule writer and the static-ruleset switch use it (Chromium). */
export interface DnrApi extends DnrRulesApi {
  getEnabledRulesets(): Promise<string[]>;
  updateEnabledRulesets(update: {
    enableRulesetIds?: string[];
    disableRulesetIds?: string[];
  }): Promise<void>;
}

/**
 * Chromium's typings spell rule fields as enums where the API takes and returns the strings our
 * rules use; the conversion is made here, once, for every rule read or written.
 */
type ChromeRule = chrome.declarativeNetRequest.Rule;
const toChrome = (rules: ExtRule[]): ChromeRule[] => rules as ChromeRule[];
const fromChrome = (rules: ChromeRule[]): ExtRule[] => rules as ExtRule[];

export function dnrApi(): DnrApi {
  const d = ext.declarativeNetRequest;
  return {
    getDynamicRules: async () => fromChrome(await d.getDynamicRules()),
    getSessionRules: async () => fromChrome(await d.getSessionRules()),
    updateDynamicRules: ({ removeRuleIds, addRules }) =>
      d.updateDynamicRules({ removeRuleIds, addRules: toChrome(addRules) }),
    updateSessionRules: ({ removeRuleIds, addRules }) =>
      d.updateSessionRules({ removeRuleIds, addRules: toChrome(addRules) }),
    getEnabledRulesets: () => d.getEnabledRulesets(),
    updateEnabledRulesets: (update) => d.updateEnabledRulesets(update),
  };
}
