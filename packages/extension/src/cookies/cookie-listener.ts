import type { Engine } from '@httpsify/engine';
import { ext } from '../platform/browser-api.js';
import { createCookieHandler, type CookieDeps, type CookieLike } from './secure-cookies.js';

/** Secures cookies per `<securecookie>` once the engine is ready; the decision differs per browser. */
export function listenForCookies(ready: Promise<Engine>, deps: Omit<CookieDeps, 'set'>): void {
  const handleCookie = createCookieHandler({
    ...deps,
    set: (details) => ext.cookies.set(details as chrome.cookies.SetDetails),
  });
  ext.cookies.onChanged.addListener((change) => {
    void ready.then(() =>
      handleCookie({ removed: change.removed, cookie: change.cookie as CookieLike }),
    );
  });
}
