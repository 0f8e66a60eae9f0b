/**
 * Chromium (Manifest V3) service worker. Upgrades themselves are declarativeNetRequest rules
 * (static defaults compiled at build time, dynamic rules for user overrides, session rules for
 * hosts in redirect loops); this worker only observes redirects, secures cookies and answers
 * the extension's pages. Listeners are registered synchronously, as MV3 requires.
 */
import type { Engine } from '@httpsify/engine';
import { ALL_URLS, dnrApi, ext, storageArea } from './browser-api.js';
import { CHANNEL_DNR_STATE_KEY, ChannelDnrRuntime } from '../channels/channel-dnr-runtime.js';
import { loopAllowRules } from '../dnr/loop-rules.js';
import { syncOverrides } from '../dnr/override-rules.js';
import { RuleWriter } from '../dnr/rule-writer.js';
import { syncSettingsRules } from '../dnr/settings-rules.js';
import { DnrUpgradeCheck } from '../dnr/upgrade-check.js';
import { loadBundledEngine } from '../rewriter/engine-loader.js';
import { LoopGuard } from '../https-first/loop-guard.js';
import { installHandoff } from '../handoff/main-frame-handoff.js';
import { HANDOFF_SCOPE_PATH, parseHandoffScope, type HandoffScope } from '../handoff/handoff-rules.js';
import { exclusionsMayBeMissed } from '../protection/protection-dnr.js';
import { restoreOverrides } from '../rewriter/overrides-store.js';
import { listenForCookies } from '../cookies/cookie-listener.js';
import { listenForMessages } from '../routing/runtime-messages.js';
import type { SettingsController } from '../settings/settings-controller.js';
import { installBackground } from './background-runtime.js';

const LOOP_HOSTS_KEY = 'loopBlockedHosts';
const guard = new LoopGuard();
const dnr = dnrApi();
/** The one writer of dynamic and session rules: every module below declares its layer to it. */
const writer = new RuleWriter(dnr);
const channelDnr = new ChannelDnrRuntime(writer, dnr, storageArea('local'));
/** False while an update channel replaces the default rulesets (their static ruleset is off). */
let defaultsInUse = true;
/** The defaults engine and the hosts of default rulesets DNR did not express completely, once loaded. */
let defaults: Engine | null = null;
let handoffScope: HandoffScope | null = null;

const ready: Promise<Engine> = (async () => {
  const loaded = await loadBundledEngine();
  await restoreOverrides(loaded);
  const stored = (await ext.storage.session.get(LOOP_HOSTS_KEY))[LOOP_HOSTS_KEY] as string[] | undefined;
  guard.restore(stored ?? []);
  defaults = loaded;
  return loaded;
})();

ext.runtime.onInstalled.addListener(() => {
  // Dynamic rules survive restarts; after an install or update they are rebuilt from storage
  // (the channel rules too: this version may compile them differently).
  void ready
    .then((e) => syncOverrides(writer, e, defaultsInUse))
    .then(() => ext.storage.local.remove(CHANNEL_DNR_STATE_KEY))
    .then(() => ui.controller)
    .then(applyChannels)
    .then(() => dnrCheck.invalidate());
  void handoff.syncRules().catch((e: unknown) => console.error('httpsify: handoff rules not installed', e));
});

/** Installed channels (or the user's switches for their rulesets) changed: recompile their rules. */
async function applyChannels(c: SettingsController): Promise<void> {
  const state = await channelDnr.sync(c.channels, c.settings.mixedContent);
  if (defaultsInUse === state.defaultsDisabled) {
    defaultsInUse = !state.defaultsDisabled;
    await syncOverrides(writer, c.engine, defaultsInUse);
  }
  dnrCheck.invalidate();
}

/** The loop guard's list changed: its session rules and its stored copy follow. */
async function loopHostsChanged(): Promise<void> {
  await writer.setLayer('loops', loopAllowRules(guard.blockedHosts()));
  await ext.storage.session.set({ [LOOP_HOSTS_KEY]: guard.blockedHosts() });
}

async function stopUpgrading(host: string): Promise<void> {
  ui.protection.forget(host);
  await loopHostsChanged();
}

function httpVersion(url: string): string {
  return url.replace(/^https:/, 'http:');
}

ext.webRequest.onBeforeRedirect.addListener(
  (d) => {
    const host = guard.noteRedirect(d);
    if (host !== null) void stopUpgrading(host);
  },
  { urls: ALL_URLS },
);
ext.webRequest.onCompleted.addListener((d) => guard.finish(d.requestId), { urls: ALL_URLS });
ext.webRequest.onErrorOccurred.addListener(
  (d) => {
    guard.finish(d.requestId);
    // The browser may have given up on the loop before the allow rule landed: load it once
    // more, now over HTTP. The allow rule is in place, so this cannot loop again.
    if (d.type === 'main_frame' && d.error === 'net::ERR_TOO_MANY_REDIRECTS' && d.tabId >= 0 && guard.isUrlBlocked(d.url)) {
      void ext.tabs.update(d.tabId, { url: httpVersion(d.url) });
    }
  },
  { urls: ALL_URLS },
);

const dnrCheck = new DnrUpgradeCheck(dnr);
listenForCookies(ready, {
  // The engine decides as the reference does; the DNR rules must also really upgrade the host.
  // Or, as NoScript did, any host known to answer over HTTPS that the mode upgrades.
  shouldSecure: async (cookie) => {
    const c = await ui.controller;
    const host = cookie.domain.replace(/^\.+/, '');
    if (ui.protection.upgradesHost(c, host)) return true;
    return c.shouldSecureCookie(cookie) && (await dnrCheck.upgrades(`http://${host}/`));
  },
  isHostBlocked: (host) => guard.isHostBlocked(host),
});

listenForMessages(ready, {
  guard,
  setRuleset: async (name, active) => (await ui.controller).handle({ type: 'setRuleset', name, active }),
  loopGuardCleared: loopHostsChanged,
});

// Popup, options page, HTTPS-first, icon and badge; settings changes recompile the overrides.
const ui = installBackground({
  platform: 'chromium',
  ready,
  overridesApplied: async (e) => {
    await syncOverrides(writer, e, defaultsInUse);
    dnrCheck.invalidate();
  },
  channelsApplied: applyChannels,
  channelProblems: async () => ({ ...(await channelDnr.state())?.problems }),
  loopGuard: {
    isHostBlocked: (host) => guard.isHostBlocked(host),
    forget: async (host) => {
      guard.forget(host);
      await loopHostsChanged();
    },
  },
  policyApplied: (c) => syncSettingsRules(writer, c, ext.runtime.id),
  protectionRules: (rules) => writer.setLayer('protection', rules),
  protectionKeepOut: (host) => defaults !== null && handoffScope !== null && exclusionsMayBeMissed(defaults, handoffScope, host),
});

// Main frames DNR cannot rewrite exactly go through the handoff page, which asks the rulesets.
const handoff = installHandoff(writer, {
  inputs: async (tabId) => {
    await ui.controller;
    // Ready once the controller is: ui.decide answers from then on.
    return { decide: (url) => ui.decide({ url, type: 'main_frame', tabId }) ?? { action: 'leave', reason: 'no-rule' } };
  },
  downgradesSeen: (tabId, from, to) => guard.recentTabDowngrades(tabId, from, to),
  handedOff: (tabId, url, target) => ui.noteHandoff(tabId, url, target),
});
(globalThis as { httpsifyHandoff?: unknown }).httpsifyHandoff = handoff;

// The known hosts' rules leave out hosts where DNR may miss an exclusion; rebuilt once known.
void (async () => {
  const response = await fetch(ext.runtime.getURL(HANDOFF_SCOPE_PATH));
  handoffScope = parseHandoffScope(await response.json());
  await ready;
  await ui.protection.syncRules();
})().catch((e: unknown) => console.error('httpsify: handoff scope not read', e));
