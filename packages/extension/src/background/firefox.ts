/**
 * Firefox (Manifest V3) background script. Firefox keeps blocking webRequest, so every http://
 * request goes through the engine itself: exact reference semantics, no DNR approximation.
 * Wiring only: what each part does is in its module.
 */
import type { Engine } from '@httpsify/engine';
import { cookieDecision } from '../cookies/cookie-decision.js';
import { listenForCookies } from '../cookies/cookie-listener.js';
import { LoopGuard } from '../https-first/loop-guard.js';
import { upgradeTarget, watchForLoops } from '../https-first/loop-watch.js';
import { loadBundledEngine } from '../rewriter/engine-loader.js';
import { restoreOverrides } from '../rewriter/overrides-store.js';
import { listenBlocking } from '../rewriter/webrequest-upgrader.js';
import { listenForMessages } from '../routing/runtime-messages.js';
import { installBackground } from './background-runtime.js';
import { ext } from '../platform/browser-api.js';

const guard = new LoopGuard();
const ready: Promise<Engine> = (async () => {
  const loaded = await loadBundledEngine();
  await restoreOverrides(loaded);
  return loaded;
})();

// Settings first (global switch, disabled sites, user rules, HTTPS-first), then the engine.
// Blocking webRequest runs the engines themselves, so installed channels need no compiling.
const ui = installBackground({
  platform: 'firefox',
  ready,
  overridesApplied: async () => undefined,
  channelsApplied: async () => undefined,
  channelProblems: async () => ({}),
  loopGuard: {
    allows: (url, tabId, kind) => guard.allows(url, tabId, kind),
    forget: async (host) => guard.forget(host),
  },
});

// `ui.rewriter()` is the channels over the defaults; an update swaps it whole, so a request
// decides with one consistent set of engines.
listenBlocking({
  ready,
  settled: ui.settled,
  decide: (d) => ui.decide(d),
  decided: (d, decision) => ui.requestDecided(d, decision),
  rewriter: () => ui.rewriter(),
  guard,
});

// A verdict lets one URL load over HTTP in one tab: it says nothing about the host's other
// URLs, so the known hosts stay as they are. The blocking listener asks the guard (through
// decide()) at the request's next step, so the loop ends there.
watchForLoops(guard, {
  looping: () => undefined,
  upgradeOf: (request) => upgradeTarget(ui.decide(request)),
});
ext.tabs.onRemoved.addListener((tabId) => void guard.tabClosed(tabId));

listenForCookies(ready, {
  // Channel rulesets decide within their scopes, as for rewriting.
  shouldSecure: cookieDecision(
    ui,
    (c, host, cookie) => c.cookiesMaySecure(host) && c.shouldSecureCookie(cookie),
  ),
  isHostBlocked: (host) => guard.isHostBlocked(host),
});

listenForMessages(ready, {
  guard,
  setRuleset: async (name, active) =>
    (await ui.controller).handle({ type: 'setRuleset', name, active }),
  loopGuardCleared: async () => undefined,
});
