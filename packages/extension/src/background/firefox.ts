/**
 * Firefox (Manifest V3) background script. Firefox keeps blocking webRequest, so every http://
 * request goes through the engine itself: exact reference semantics, no DNR approximation.
 */
import type { Engine } from '@httpsify/engine';
import { ext } from './browser-api.js';
import { loadBundledEngine } from '../rewriter/engine-loader.js';
import { LoopGuard } from '../https-first/loop-guard.js';
import { restoreOverrides } from '../rewriter/overrides-store.js';
import { listenForCookies } from '../cookies/cookie-listener.js';
import { listenForMessages } from '../routing/runtime-messages.js';
import { installBackground } from './background-runtime.js';
import { isOwnRequest, upgradeDecision } from '../rewriter/webrequest-upgrader.js';

const guard = new LoopGuard();
let engine: Engine | null = null;

const ready: Promise<Engine> = (async () => {
  const loaded = await loadBundledEngine();
  await restoreOverrides(loaded);
  engine = loaded;
  return loaded;
})();

type Blocking = chrome.webRequest.BlockingResponse;

// Settings first (global switch, disabled sites, user rules, HTTPS-first), then the engine.
// Blocking webRequest runs the engines themselves, so installed channels need no compiling.
const ui = installBackground({
  platform: 'firefox',
  ready,
  overridesApplied: async () => undefined,
  channelsApplied: async () => undefined,
  channelProblems: async () => ({}),
  loopGuard: { isHostBlocked: (host) => guard.isHostBlocked(host), forget: async (host) => guard.forget(host) },
});
// `ui.rewriter()` is the channels over the defaults; an update swaps it whole, so a request
// decides with one consistent set of engines.
// Until the settings are read, the bundled rulesets alone decide (the loop guard still applies).
const decide = (e: Engine, d: chrome.webRequest.OnBeforeRequestDetails): Blocking => {
  const decision = ui.decide(d);
  if (decision === null) return upgradeDecision(ui.rewriter() ?? e, guard, d.url);
  return decision.action === 'upgrade' ? { redirectUrl: decision.url } : {};
};

const ownOrigin = ext.runtime.getURL('');
const onBeforeRequest = (d: chrome.webRequest.OnBeforeRequestDetails & { originUrl?: string }): Blocking | Promise<Blocking> =>
  isOwnRequest(d, ownOrigin)
    ? {}
    : // Requests that arrive while the bundle is still loading wait for it (Firefox allows a promise).
      engine
      ? decide(engine, d)
      : ready.then((e) => decide(e, d));
ext.webRequest.onBeforeRequest.addListener(onBeforeRequest as (d: chrome.webRequest.OnBeforeRequestDetails) => Blocking | undefined, { urls: ['http://*/*'] }, [
  'blocking',
]);

ext.webRequest.onBeforeRedirect.addListener(
  (d) => {
    const looping = guard.noteRedirect(d);
    if (looping !== null) ui.protection.forget(looping);
  },
  { urls: ['<all_urls>'] },
);
ext.webRequest.onCompleted.addListener((d) => guard.finish(d.requestId), { urls: ['<all_urls>'] });
ext.webRequest.onErrorOccurred.addListener((d) => guard.finish(d.requestId), { urls: ['<all_urls>'] });

listenForCookies(ready, {
  shouldSecure: async (cookie) => {
    const c = await ui.controller;
    // Channel rulesets decide within their scopes, as for rewriting.
    const host = cookie.domain.replace(/^\.+/, '');
    // Or, as NoScript did, any host known to answer over HTTPS that the mode upgrades.
    if (ui.protection.upgradesHost(c, host)) return true;
    return c.cookiesMaySecure(host) && c.shouldSecureCookie(cookie);
  },
  isHostBlocked: (host) => guard.isHostBlocked(host),
});

listenForMessages(ready, {
  guard,
  setRuleset: async (name, active) => (await ui.controller).handle({ type: 'setRuleset', name, active }),
  loopGuardCleared: async () => undefined,
});
