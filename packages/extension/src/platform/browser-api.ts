/**
 * The one door to the browser's extension APIs. Firefox exposes `browser`, Chromium `chrome`; in
 * Manifest V3 both return promises, so one typing (Chromium's) serves both builds; the
 * background and every page reach the browser through `ext`. Modules take the narrow typed views
 * below (a storage area; the DNR rules in dnr/dnr-api.ts) rather than the namespace, so tests
 * hand them fakes and nothing needs a cast.
 */
export const ext: typeof chrome = ((globalThis as { browser?: typeof chrome }).browser ??
  globalThis.chrome) as typeof chrome;

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

/** Chromium's `isRegexSupported`: whether a regex filter (with these flags) may be used in a rule. */
export type RegexSupport = (ask: {
  regex: string;
  isCaseSensitive: boolean;
  requireCapturing: boolean;
}) => Promise<boolean>;

export function regexSupport(): RegexSupport {
  return async (ask) => (await ext.declarativeNetRequest.isRegexSupported(ask)).isSupported;
}

/** A request as Firefox reports it: also the document or worker that made it. */
export type FirefoxRequestDetails = chrome.webRequest.OnBeforeRequestDetails & {
  originUrl?: string;
};
export type BlockingAnswer = { redirectUrl?: string } | Promise<{ redirectUrl?: string }>;

/**
 * Firefox's blocking `webRequest.onBeforeRequest`. Its listener may answer with a promise;
 * Chromium's typings (which type `ext`) do not know that, so the listener is typed here, once.
 */
export function onBeforeRequestBlocking(
  urls: string[],
  listener: (d: FirefoxRequestDetails) => BlockingAnswer,
): void {
  type ChromeListener = (
    d: chrome.webRequest.OnBeforeRequestDetails,
  ) => chrome.webRequest.BlockingResponse | undefined;
  ext.webRequest.onBeforeRequest.addListener(listener as ChromeListener, { urls }, ['blocking']);
}
