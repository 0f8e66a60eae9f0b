/**
 * The extension namespace: Firefox exposes `browser`, Chromium `chrome`; in Manifest V3 both
 * return promises, so one typing (Chromium's) serves both builds.
 */
export const ext: typeof chrome = ((globalThis as { browser?: typeof chrome }).browser ?? globalThis.chrome) as typeof chrome;

/** Every request type the upgrade logic watches (webRequest filters need them listed). */
export const ALL_URLS = ['<all_urls>'];
