import type { Engine } from '@httpsify/engine';
import { ext } from './browser-api.js';
import { createCookieHandler, type CookieDeps, type CookieLike } from './cookies.js';
import { classifySender, messageAllowed } from './ui-senders.js';
import { createMessageHandler, type BackgroundContext, type BackgroundRequest } from './messages.js';

/** Secures cookies per `<securecookie>` once the engine is ready; the decision differs per browser. */
export function listenForCookies(ready: Promise<Engine>, deps: Omit<CookieDeps, 'set'>): void {
  const handleCookie = createCookieHandler({ ...deps, set: (details) => ext.cookies.set(details as chrome.cookies.SetDetails) });
  ext.cookies.onChanged.addListener((change) => {
    void ready.then(() => handleCookie({ removed: change.removed, cookie: change.cookie as CookieLike }));
  });
}

/** The background's message API, also exposed as `globalThis.httpsify` for tests and DevTools. */
export function listenForMessages(ready: Promise<Engine>, context: Omit<BackgroundContext, 'engine'>): void {
  const handleMessage = createMessageHandler(async () => ({ ...context, engine: await ready }));
  ext.runtime.onMessage.addListener((request: BackgroundRequest, sender, sendResponse) => {
    if (!messageAllowed(classifySender(sender))) {
      sendResponse({ error: 'not an httpsify page' });
      return false;
    }
    handleMessage(request).then(sendResponse, (err: unknown) => sendResponse({ error: String(err) }));
    return true;
  });
  (globalThis as { httpsify?: unknown }).httpsify = { handleMessage, ready };
}
