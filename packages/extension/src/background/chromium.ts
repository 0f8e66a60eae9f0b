/**
 * Chromium (Manifest V3) service worker. Upgrades themselves are declarativeNetRequest rules
 * (static defaults compiled at build time, dynamic rules for user overrides, session rules for
 * hosts in redirect loops); this worker only observes redirects, secures cookies and answers
 * the extension's pages. Listeners are registered synchronously, as MV3 requires. Wiring only:
 * what each part does is in its module.
 */
import type { Engine } from '@httpsify/engine';
import { ChannelDnrRuntime } from '../dnr-runtime/channel-dnr-runtime.js';
import { cookieDecision } from '../cookies/cookie-decision.js';
import { listenForCookies } from '../cookies/cookie-listener.js';
import { LOOP_ALARM, LoopLayer } from '../https-first/loop-rules.js';
import { RuleWriter } from '../dnr/rule-writer.js';
import { LEDGER_KEY, ledgerIn } from '../dnr/rule-ledger.js';
import { RulesetRules } from '../dnr-runtime/ruleset-rules.js';
import { settingsReserve, syncSettingsRules } from '../dnr/settings-rules.js';
import { RUNTIME_LIMITS } from '../dnr/rules.js';
import { parseRefusals, ruleLimitsOf } from '../dnr/rule-limits.js';
import { DnrUpgradeCheck } from '../dnr/upgrade-check.js';
import type { HandoffScope } from '../dnr/handoff-rules.js';
import type { ProtectionSnapshot } from '../decision/snapshot.js';
import { HANDOFF_PAGE } from '../platform/packaged-files.js';
import { installHandoff, readHandoffScope } from '../handoff/main-frame-handoff.js';
import { LOOP_RULES_MAX, LoopGuard } from '../https-first/loop-guard.js';
import { upgradeTarget, watchForLoops } from '../https-first/loop-watch.js';
import { exclusionsMayBeMissed } from '../protection/protection-dnr.js';
import { loadBundledEngine } from '../rewriter/engine-loader.js';
import { restoreOverrides } from '../rewriter/overrides-store.js';
import { listenForMessages } from '../routing/runtime-messages.js';
import { installBackground } from './background-runtime.js';
import { dnrApi } from '../dnr/dnr-api.js';
import { ext, regexSupport, storageArea } from '../platform/browser-api.js';
import { exposeForTests } from '../platform/test-hooks.js';
import { RULE_REFUSALS_KEY } from '../protocol/ui-protocol.js';

const guard = new LoopGuard();
const dnr = dnrApi();
/** One exact-URL regex rule per verdict, at most LOOP_RULES_MAX live. */
const LOOPS_RESERVE = { rules: LOOP_RULES_MAX, regexRules: LOOP_RULES_MAX, unsafeRules: 0 };
/**
 * The one writer of dynamic and session rules: every module below declares its layer to it. The
 * settings' switches and mode hold room in reserve, and so do a few loop verdicts (a page or
 * image that loops hammers its server until one is written). Its record of the dynamic layers
 * spares a waking worker reading them all (rule-ledger.ts).
 */
const writer = new RuleWriter(dnr, RUNTIME_LIMITS, {
  reserves: { settings: settingsReserve(), loops: LOOPS_RESERVE },
  ledger: ledgerIn(storageArea('session'), LEDGER_KEY),
  refusalsChanged: (refusals) => void storageArea('local').set({ [RULE_REFUSALS_KEY]: refusals }),
});
void storageArea('local')
  .get([RULE_REFUSALS_KEY])
  .then((stored) => writer.restoreRefusals(parseRefusals(stored[RULE_REFUSALS_KEY])));
const loops = new LoopLayer(guard, writer, storageArea('session'), ext.alarms);
const dnrCheck = new DnrUpgradeCheck(dnr);
const channelRules = new ChannelDnrRuntime(
  writer,
  dnr,
  storageArea('local'),
  ext.runtime.getURL(HANDOFF_PAGE),
  regexSupport(),
);
const rulesets = new RulesetRules(
  writer,
  channelRules,
  () => dnrCheck.invalidate(),
  ext.runtime.getURL(HANDOFF_PAGE),
);
/** The defaults engine and the hosts of default rulesets DNR did not express completely, once loaded. */
let defaults: Engine | null = null;
let handoffScope: HandoffScope | null = null;

const ready: Promise<Engine> = (async () => {
  const loaded = await loadBundledEngine();
  await restoreOverrides(loaded);
  await loops.restore();
  defaults = loaded;
  return loaded;
})();

ext.runtime.onInstalled.addListener(() => {
  void ready.then((e) => rulesets.rebuild(e, () => ui.controller));
  void handoff
    .syncRules()
    .catch((e: unknown) => console.error('httpsify: handoff rules not installed', e));
});

// A verdict lets one URL load over HTTP in one tab (its rule: loop-rules.ts); it says nothing
// about the host's other URLs, so the known hosts stay as they are. A subresource's loop is
// ours if decide(), which the rules enforce, upgrades its URL to where it came back from.
watchForLoops(guard, {
  looping: () => void loops.changed(),
  reloadGivenUp: true,
  upgradeOf: (request) => upgradeTarget(ui.decide(request)),
});
// After the verdicts are restored: a closing that wakes the worker would otherwise come first,
// and the closed tab's verdicts come back from storage for their ten minutes.
ext.tabs.onRemoved.addListener((tabId) => {
  void ready.then(() => {
    if (guard.tabClosed(tabId)) void loops.changed();
  });
});
// An ended verdict's rule goes (the alarm wakes a stopped worker).
ext.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === LOOP_ALARM) void ready.then(() => loops.changed());
});

// Popup, options page, HTTPS-first, icon and badge; settings changes recompile the overrides.
const ui = installBackground({
  platform: 'chromium',
  ready,
  overridesApplied: (e) => rulesets.overridesChanged(e),
  channelsApplied: async (c) => {
    await rulesets.channelsChanged(c);
    await retryRefused(true);
  },
  channelProblems: () => rulesets.problems(),
  libraryPageLoadsOnly: () => rulesets.libraryPageLoadsOnly(),
  loopGuard: {
    allows: (url, tabId, kind) => guard.allows(url, tabId, kind),
    forget: async (host) => {
      guard.forget(host);
      await loops.changed();
    },
  },
  policyApplied: async (c) => {
    try {
      await syncSettings(c.snapshot);
    } finally {
      await retryRefused(false);
    }
  },
  protectionRules: (rules) => writer.setLayer('protection', rules),
  ruleLimits: () => ruleLimitsOf(writer.refusals()),
  protectionKeepOut: (host) =>
    defaults === null || handoffScope === null
      ? null
      : exclusionsMayBeMissed(defaults, handoffScope, host),
});

/**
 * Other rules changed and may have made room (the channels or the library; the settings, for
 * the overrides): a layer the browser refused, or cut to what was free, is declared again. Only
 * a change of its own did so, so rulesets switched on stayed cut, and a user's rules out, after
 * what crowded them out was gone.
 */
/** The settings layer (and a tab's "open over HTTP") from the decision's state of now. */
function syncSettings(snapshot: ProtectionSnapshot): Promise<void> {
  return syncSettingsRules(writer, snapshot, ext.runtime.id, ext.runtime.getURL(HANDOFF_PAGE));
}

async function retryRefused(settingsToo: boolean): Promise<void> {
  const refusals = writer.refusals();
  const refused = (layer: string, partialToo: boolean) =>
    refusals.some(
      (r) =>
        r.layer === layer &&
        (partialToo ||
          typeof r.outcome !== 'object' ||
          r.outcome === null ||
          !('partial' in r.outcome)),
    );
  try {
    // A cut set of switched rulesets may be whole now; a cut of the user's rules is what the
    // compiler cannot express, not room.
    if (refused('overrides', true) && defaults !== null) await rulesets.overridesChanged(defaults);
    if (settingsToo && (refused('settings', false) || refused('tabOnce', false)))
      await syncSettings((await ui.controller).snapshot);
  } catch (e) {
    // Still refused: the writer keeps the refusal for the options page.
    console.warn('httpsify: refused rules still do not fit', e);
  }
}

listenForCookies(ready, {
  // The engine decides as the reference does; the DNR rules must also really upgrade the host.
  shouldSecure: cookieDecision(
    ui,
    async (c, host, cookie) =>
      c.shouldSecureCookie(cookie) && (await dnrCheck.upgrades(`http://${host}/`)),
  ),
  isHostBlocked: (host) => guard.isHostBlocked(host),
});

listenForMessages(ready, {
  guard,
  setRuleset: async (name, active) =>
    (await ui.controller).handle({ type: 'setRuleset', name, active }),
  loopGuardCleared: () => loops.changed(),
});

// Main frames DNR cannot rewrite exactly go through the handoff page, which asks the rulesets.
const handoff = installHandoff(writer, {
  inputs: async (tabId) => {
    // A restarted worker: the settings and the installed channels first (bounded), then
    // ui.decide answers with them.
    await ui.controller;
    await ui.settled;
    return {
      decide: (url) =>
        ui.decide({ url, type: 'main_frame', tabId }) ?? { action: 'leave', reason: 'no-rule' },
    };
  },
  downgradesSeen: (tabId, fromUrl, toUrl) => guard.recentTabDowngrades(tabId, fromUrl, toUrl),
  handedOff: (tabId, url, target, decision) => ui.noteHandoff(tabId, url, target, decision),
});
exposeForTests('httpsifyHandoff', handoff);
// The one writer, for tests that count what a worker start writes.
exposeForTests('httpsifyWriter', writer);

/** The worker's own events the handoff uses (the DOM typings have no worker scope). */
interface WorkerScope {
  addEventListener(
    type: 'install',
    listener: (e: {
      addRoutes?(routes: unknown[]): Promise<void>;
      waitUntil(p: Promise<unknown>): void;
    }) => void,
  ): void;
  addEventListener(
    type: 'fetch',
    listener: (e: { request: Request; respondWith(r: Promise<Response>): void }) => void,
  ): void;
}
const scope = globalThis as unknown as WorkerScope;
// Navigations to the handoff page come here first, and most are answered with a redirect. Only
// that page: the others load without waking or waiting for this worker (static routes,
// Chromium 123+; before, every extension page passes the fetch handler, which lets it be).
scope.addEventListener('install', (event) => {
  const routes = [
    { condition: { urlPattern: { pathname: `/${HANDOFF_PAGE}` } }, source: 'fetch-event' },
    { condition: { urlPattern: { pathname: '/*' } }, source: 'network' },
  ];
  if (event.addRoutes !== undefined)
    event.waitUntil(
      event.addRoutes(routes).catch((e: unknown) => console.error('httpsify: routes not added', e)),
    );
});
scope.addEventListener('fetch', (event) => {
  const answer = handoff.navigation(event.request);
  if (answer !== null) event.respondWith(answer);
});

// The known hosts' rules leave out hosts where DNR may miss an exclusion: written once known.
void (async () => {
  try {
    handoffScope = await readHandoffScope();
  } catch (e) {
    // A package without its scope: no host is left out (as before the scope existed).
    console.error('httpsify: handoff scope not read', e);
    handoffScope = { domains: [], patterns: [] };
  }
  await ready;
  await ui.protection.syncRules();
})().catch((e: unknown) => console.error('httpsify: known hosts rules not written', e));
