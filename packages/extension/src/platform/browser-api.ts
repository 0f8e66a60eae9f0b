/**
 * The one door to the browser's extension APIs. Firefox exposes `browser`, Chromium `chrome`; in
 * Manifest V3 both return promises, so one typing (Chromium's) serves both builds. Modules take
 * the narrow typed views below (a storage area, the DNR rules) rather than the namespace, so
 * tests hand them fakes and nothing needs a cast.
 */
import type { DnrRulesApi } from '../dnr/rule-writer.js';
import type { ExtRule } from '../dnr/rules.js';

export const ext: typeof chrome = ((globalThis as { browser?: typeof chrome }).browser ?? globalThis.chrome) as typeof chrome;

/** Every request type the upgrade logic watches (webRequest filters need them listed). */
export const ALL_URLS = ['<all_urls>'];

/** A storage area (`storage.local`, `storage.session`) as the modules use it. */
export interface StorageArea {
  get(keys: string | string[] | null): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
  remove(keys: string | string[]): Promise<void>;
  /** Chromium 130+: the keys without the values (channel bundles are megabytes). */
  getKeys?(): Promise<string[]>;
}

export function storageArea(which: 'local' | 'session'): StorageArea {
  return ext.storage[which];
}

/** declarativeNetRequest as the rule writer and the static-ruleset switch use it (Chromium). */
export interface DnrApi extends DnrRulesApi {
  getEnabledRulesets(): Promise<string[]>;
  updateEnabledRulesets(update: { enableRulesetIds?: string[]; disableRulesetIds?: string[] }): Promise<void>;
}

/** Chromium's `isRegexSupported`: whether a regex filter (with these flags) may be used in a rule. */
export type RegexSupport = (ask: { regex: string; isCaseSensitive: boolean; requireCapturing: boolean }) => Promise<boolean>;

export function regexSupport(): RegexSupport {
  return async (ask) => (await ext.declarativeNetRequest.isRegexSupported(ask)).isSupported;
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
    updateDynamicRules: ({ removeRuleIds, addRules }) => d.updateDynamicRules({ removeRuleIds, addRules: toChrome(addRules) }),
    updateSessionRules: ({ removeRuleIds, addRules }) => d.updateSessionRules({ removeRuleIds, addRules: toChrome(addRules) }),
    getEnabledRulesets: () => d.getEnabledRulesets(),
    updateEnabledRulesets: (update) => d.updateEnabledRulesets(update),
  };
}

/** A request as Firefox reports it: also the document or worker that made it. */
export type FirefoxRequestDetails = chrome.webRequest.OnBeforeRequestDetails & { originUrl?: string };
export type BlockingAnswer = { redirectUrl?: string } | Promise<{ redirectUrl?: string }>;

/**
 * Firefox's blocking `webRequest.onBeforeRequest`. Its listener may answer with a promise;
 * Chromium's typings (which type `ext`) do not know that, so the listener is typed here, once.
 */
export function onBeforeRequestBlocking(urls: string[], listener: (d: FirefoxRequestDetails) => BlockingAnswer): void {
  type ChromeListener = (d: chrome.webRequest.OnBeforeRequestDetails) => chrome.webRequest.BlockingResponse | undefined;
  ext.webRequest.onBeforeRequest.addListener(listener as ChromeListener, { urls }, ['blocking']);
}
