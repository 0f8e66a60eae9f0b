/**
 * Installs the UI half of the background in either browser: the port the pages talk through,
 * per-tab activity, HTTPS-first with its fallback page, statistics, icon and badge. The
 * platform entry (chromium.ts / firefox.ts) calls `installBackground` once, synchronously, at startup.
 */
import { type Engine } from '@httpsify/engine';
import { fetchBytesWith } from '@httpsify/engine/channels';
import { CHANNEL_ALARM, ChannelService } from '../channels/channel-service.js';
import { SETTING_KEYS } from '../settings/schema.js';
import { SettingsStore } from '../settings/store.js';
import { siteOf } from '../site-rules/site-pattern.js';
import { ext, storageArea } from './browser-api.js';
import { CAPTIVE_PORTAL_REASON, probeCaptivePortal } from '../https-first/captive-portal.js';
import { bundledDefaultsTimestamp } from '../rewriter/engine-loader.js';
import { HttpsFirstTracker, interstitialUrl, type FallbackEvent } from '../https-first/tracker.js';
import { decide, type Decision } from '../decision/decide.js';
import { decisionState } from '../decision/state.js';
import { badgeText, drawIcon, ICON_TITLE_MESSAGE, iconState } from '../status/icon.js';
import { TabActivity, type TabRecord } from '../status/tab-activity.js';
import { type LoopGuardHooks, SettingsController } from '../settings/settings-controller.js';
import { UI_PORT_NAME, type UiRequest } from '../routing/ui-protocol.js';
import { PageTickets } from '../https-first/page-tickets.js';
import { classifySender, refusal } from '../routing/ui-senders.js';
import { PROTECTION_ALARM, PROTECTION_ALARM_MINUTES, ProtectionRuntime } from '../protection/protection-runtime.js';
import { KNOWN_HTTPS_STORAGE_KEY } from '../protection/known-https-hosts.js';
import { handleProtectionRequest, isProtectionRequest } from '../protection/protection-requests.js';
import { securedCookie, type CookieLike } from '../cookies/secure-cookies.js';
import { isLibraryRequest } from '../library/library-protocol.js';
import { LibraryService } from '../library/library-service.js';
import { LIBRARY_LAYER_NAME } from '../library/library-store.js';
import type { RuleBody } from '../dnr/rules.js';

export const INTERSTITIAL_PATH = 'ui/interstitial.html';
const TABS_SESSION_KEY = 'uiTabActivity';
const ONCE_SESSION_KEY = 'uiHttpOnce';
const TICKETS_SESSION_KEY = 'uiPageTickets';
const STATS_FLUSH_MS = 2000;

export interface UiInstallOptions {
  platform: 'chromium' | 'firefox';
  ready: Promise<Engine>;
  /** Chromium: recompile the dynamic override rules from the engine's state. */
  overridesApplied(engine: Engine): Promise<void>;
  /** New channel engines are in place (Chromium: recompile the channels' rules). */
  channelsApplied(controller: SettingsController): Promise<void>;
  /** Per channel, why this browser does not (fully) apply it. */
  channelProblems(): Promise<Record<string, string>>;
  /** The platform's redirect-loop protection, shown in the popup's status line. */
  loopGuard?: LoopGuardHooks;
  /** Chromium: known HTTPS hosts the protection mode writes no subresource rule for. */
  protectionKeepOut?(host: string): boolean;
  /** Chromium: declares the known hosts' subresource rules (the rule writer's "protection" layer). */
  protectionRules?(rules: RuleBody[]): Promise<void>;
  /**
   * Chromium: the settings changed, bring their dynamic rules in line (`syncSettingsRules`). Passed
   * in rather than imported, so the Firefox build does not bundle the DNR compiler.
   */
  policyApplied?(controller: SettingsController): Promise<void>;
}

export interface InstalledUi {
  controller: Promise<SettingsController>;
  /**
   * The decision (decision/decide.ts) for a request with the settings and learned state of now;
   * null until the controller is ready. Firefox's blocking listener and the handoff page ask it.
   */
  decide(details: { url: string; type: string; tabId: number }): Decision | null;
  /** What rulesets rewrite with now (channels over the defaults); null until the controller is ready. */
  rewriter(): { rewrite(url: string): string | null } | null;
  /** Known HTTPS hosts, subresource upgrades, the fallback's alternatives, re-checks. */
  protection: ProtectionRuntime;
  /**
   * Chromium: the main-frame handoff page sends the tab to `target` (from the http:// `url`).
   * Counted as the upgrade DNR would have been.
   */
  noteHandoff(tabId: number, url: string, target: string): void;
}

export function installBackground(options: UiInstallOptions): InstalledUi {
  const store = new SettingsStore(storageArea('local'));
  const activity = new TabActivity();
  const tickets = new PageTickets();
  let controller: SettingsController | null = null;
  const topUrls = new Map<number, string>();
  /**
   * Tabs showing the fallback page, by id: its address (extensions without the "tabs"
   * permission cannot read the address of a tab showing one of their own pages).
   */
  const fallbackTabs = new Map<number, string>();
  const pendingStats = { upgrades: 0, fallbacks: 0, httpHosts: [] as string[] };
  let statsTimer: ReturnType<typeof setTimeout> | null = null;
  let tabsTimer: ReturnType<typeof setTimeout> | null = null;

  let channelService: ChannelService | null = null;
  let library: LibraryService | null = null;
  const protection = new ProtectionRuntime({
    storage: storageArea('local'),
    writeRules: options.protectionRules,
    isLoopBlocked: (host) => options.loopGuard?.isHostBlocked(host) ?? false,
    learned: (host) => void secureKnownHostCookies(host),
    dnrKeepOut: options.protectionKeepOut,
  });

  /** The decision with the state of now (the controller's settings, the known hosts). */
  function decideNow(c: SettingsController, url: string, type: string, tabId: number): Decision {
    const now = Date.now();
    return decide({
      url,
      kind: type === 'main_frame' ? 'navigation' : 'subresource',
      tab: { tabId, topUrl: type === 'main_frame' ? url : topUrls.get(tabId) },
      state: decisionState(c, (host) => protection.known.has(host, now)),
    });
  }

  /** Cookies the host set before it became known get the same treatment as later ones. */
  async function secureKnownHostCookies(host: string): Promise<void> {
    const c = controller;
    if (c === null || !protection.upgradesHost(c, host)) return;
    const cookies = (await ext.cookies.getAll({ domain: host }).catch(() => [])) as CookieLike[];
    for (const cookie of cookies) {
      if (cookie.secure || cookie.domain.replace(/^\.+/, '') !== host) continue;
      await ext.cookies.set(securedCookie(cookie) as chrome.cookies.SetDetails).catch(() => undefined);
    }
  }
  const ready: Promise<SettingsController> = (async () => {
    const engine = await options.ready;
    const defaultsTimestamp = bundledDefaultsTimestamp();
    const service = new ChannelService({
      area: storageArea('local'),
      alarms: ext.alarms,
      fetchBytes: fetchBytesWith(),
      defaultsTimestamp,
      installedChanged: (records) => c.setChannelRecords(records),
    });
    channelService = service;
    const c: SettingsController = new SettingsController(engine, store, activity, {
      overridesApplied: options.overridesApplied,
      loopGuard: options.loopGuard,
      fallbackPath: `/${INTERSTITIAL_PATH}`,
      fallbackPage: (tabId) => fallbackTabs.get(tabId),
      version: ext.runtime.getManifest().version,
      rulesetsTimestamp: defaultsTimestamp,
      httpOnceChanged: async (hosts) => ext.storage.session.set({ [ONCE_SESSION_KEY]: hosts }),
      policyChanged: async (ctl) => {
        await options.policyApplied?.(ctl);
        await protection.viewChanged(ctl);
        void refreshAllIcons();
      },
      channels: {
        defaultsTimestamp,
        definitionsChanged: (definitions) => service.setDefinitions(definitions),
        status: () => service.status(),
        checkNow: async (name) => void (await service.checkNow(name)),
        layersApplied: (ctl) => options.channelsApplied(ctl),
        platformProblems: () => options.channelProblems(),
      },
    });
    const session = await ext.storage.session.get([TABS_SESSION_KEY, ONCE_SESSION_KEY, TICKETS_SESSION_KEY]);
    tickets.restore(session[TICKETS_SESSION_KEY]);
    activity.restore((session[TABS_SESSION_KEY] as [number, TabRecord][] | undefined) ?? []);
    c.restoreHttpOnce((session[ONCE_SESSION_KEY] as string[] | undefined) ?? []);
    await protection.load();
    await c.start();
    // The imported ruleset library: one more layer after the channels (src/library/).
    library = new LibraryService({
      area: storageArea('local'),
      apply: (lib) => c.setLibrary(lib === null ? null : { name: LIBRARY_LAYER_NAME, timestamp: lib.timestamp, engine: lib.engine }),
      platformProblem: async () => (await options.channelProblems())[LIBRARY_LAYER_NAME] ?? null,
    });
    await library.start();
    controller = c;
    return c;
  })();
  ready.catch((e: unknown) => console.error('httpsify UI failed to start', e));
  // For the worker's DevTools console and the browser tests.
  (globalThis as { httpsifyUi?: unknown }).httpsifyUi = { controller: ready, channels: () => channelService, protection, library: () => library };
  // Registered at once (MV3): the alarm may be what woke the worker.
  ext.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === CHANNEL_ALARM) void ready.then(() => channelService?.onAlarm());
    if (alarm.name === PROTECTION_ALARM) void ready.then((c) => protectionTick(c));
  });
  void ext.alarms.get(PROTECTION_ALARM).then((a) => {
    if (a === undefined) void ext.alarms.create(PROTECTION_ALARM, { periodInMinutes: PROTECTION_ALARM_MINUTES, delayInMinutes: 1 });
  });

  /** Hourly: expired known hosts go; sites left on HTTP whose period passed are re-checked. */
  async function protectionTick(c: SettingsController): Promise<void> {
    protection.prune();
    const restored = await protection.recheck(c.settings.httpAllowedSites);
    if (restored.length === 0) return;
    const next = await store.update((s) => ({ httpAllowedSites: s.httpAllowedSites.filter((e) => !restored.includes(e)) }));
    await c.reconcile(next);
  }

  // ---- icon and badge ----------------------------------------------------------------------
  const iconCache = new Map<string, Record<number, ImageData>>();
  function iconImages(state: ReturnType<typeof iconState>): Record<number, ImageData> | null {
    if (typeof OffscreenCanvas === 'undefined') return null;
    let images = iconCache.get(state);
    if (images === undefined) {
      images = { 16: drawIcon(state, 16), 32: drawIcon(state, 32) };
      iconCache.set(state, images);
    }
    return images;
  }

  async function refreshIcon(tabId: number, url: string | undefined): Promise<void> {
    const c = controller;
    if (c === null) return;
    const s = c.settings;
    const state = iconState({ globalEnabled: s.globalEnabled, httpsFirst: s.httpsFirst, siteDisabled: url !== undefined && c.siteDisabledBy(url) !== null });
    const images = iconImages(state);
    try {
      if (images !== null) await ext.action.setIcon({ tabId, imageData: images } as unknown as chrome.action.TabIconDetails);
      await ext.action.setTitle({ tabId, title: ext.i18n.getMessage(ICON_TITLE_MESSAGE[state]) || 'httpsify' });
      await ext.action.setBadgeText({ tabId, text: s.globalEnabled ? badgeText(activity.get(tabId)?.upgraded ?? 0, s.showBadge) : '' });
      await ext.action.setBadgeBackgroundColor({ tabId, color: '#444444' });
    } catch {
      // The tab closed in the meantime.
    }
  }

  async function refreshAllIcons(): Promise<void> {
    const c = controller ?? (await ready);
    const s = c.settings;
    const images = iconImages(iconState({ globalEnabled: s.globalEnabled, httpsFirst: s.httpsFirst, siteDisabled: false }));
    if (images !== null) await ext.action.setIcon({ imageData: images } as unknown as chrome.action.TabIconDetails).catch(() => undefined);
    for (const tab of await ext.tabs.query({})) if (tab.id !== undefined) await refreshIcon(tab.id, tab.url);
  }

  // ---- statistics and per-tab state (written in batches) ------------------------------------
  function scheduleStats(): void {
    if (statsTimer !== null) return;
    statsTimer = setTimeout(() => {
      statsTimer = null;
      const batch = { upgrades: pendingStats.upgrades, fallbacks: pendingStats.fallbacks, httpHosts: pendingStats.httpHosts.splice(0) };
      pendingStats.upgrades = 0;
      pendingStats.fallbacks = 0;
      void store.update((s) => ({
        stats: {
          upgrades: s.stats.upgrades + batch.upgrades,
          fallbacks: s.stats.fallbacks + batch.fallbacks,
          httpHosts: [...s.stats.httpHosts.filter((h) => !batch.httpHosts.includes(h)), ...batch.httpHosts],
        },
      }));
    }, STATS_FLUSH_MS);
  }

  function scheduleTabsSave(): void {
    if (tabsTimer !== null) return;
    tabsTimer = setTimeout(() => {
      tabsTimer = null;
      void ext.storage.session.set({ [TABS_SESSION_KEY]: activity.snapshot() });
    }, 300);
  }

  // ---- HTTPS-first fallback --------------------------------------------------------------
  const tracker = new HttpsFirstTracker((event) => void fallBack(event));

  /**
   * Top-level requests per tab (count, last URL): a fallback whose tab moved on to another
   * address since its failure is dropped. The browser's error page reloading the failed
   * address by itself (Chromium retries a refused connection) is not moving on.
   */
  const navigations = new Map<number, { count: number; url: string }>();
  /** Chromium: the https:// page the handoff page opens for HTTPS-first, to be followed too. */
  const handoffUpgrades = new Map<number, { target: string; url: string }>();

  async function fallBack(event: FallbackEvent): Promise<void> {
    const seen = navigations.get(event.tabId)?.count ?? 0;
    const c = controller ?? (await ready);
    // Never replace what the tab shows now: the user (or a redirect) has gone on since.
    const movedOn = () => {
      const now = navigations.get(event.tabId);
      return now !== undefined && now.count !== seen && now.url !== event.attempt && now.url !== event.url;
    };
    pendingStats.fallbacks++;
    scheduleStats();
    // A network that asks to sign in first (hotel, airport) gets its own words on the fallback
    // page, but relaxes nothing by itself: whoever sits on the network can answer the probe.
    // The probe's address is read afresh: a change may still be on its way to the controller.
    const portal = await probeCaptivePortal((await store.load()).portalProbeUrl);
    const reason = portal === 'captive' ? `${CAPTIVE_PORTAL_REASON}: ${event.reason}` : event.reason;
    // What else to offer: the host's www. twin (or a ruleset's rewrite of it), and HTTP.
    const plan = await protection.planFallback(c, event.url, event.reason);
    if (movedOn()) return;
    const back = await historyToSkip(event);
    // The page's address carries a ticket: only with it may its buttons allow HTTP (ui-senders.ts).
    const ticket = tickets.issue(event.tabId, event.url);
    await ext.storage.session.set({ [TICKETS_SESSION_KEY]: tickets.snapshot() });
    const page = interstitialUrl(ext.runtime.getURL(INTERSTITIAL_PATH), event.url, reason, {
      tried: plan.tried,
      http: plan.http,
      twin: plan.twin,
      back,
      ticket,
    });
    if (movedOn()) return;
    fallbackTabs.set(event.tabId, page);
    await ext.tabs.update(event.tabId, { url: page });
  }

  /**
   * How many history entries "Go back" skips: the fallback page, and the browser's error page
   * when the failure committed one (its address is the attempt). An error page commits just
   * after the error event, so the tab is given a moment to settle; a timeout is cut short by
   * the fallback before anything commits.
   */
  async function historyToSkip(event: FallbackEvent): Promise<number> {
    if (event.reason === 'timeout') return 1;
    let tab: chrome.tabs.Tab | undefined;
    for (let i = 0; i < 20; i++) {
      tab = await ext.tabs.get(event.tabId).catch(() => undefined);
      if (tab === undefined || tab.status !== 'loading') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const shown = tab?.url ?? '';
    return shown === event.attempt || shown === event.url || shown.startsWith('chrome-error:') ? 2 : 1;
  }

  /*
   * Chromium stops an idle service worker; the request that wakes it arrives before the engine
   * has loaded. Those requests wait here instead of going uncounted (statistics stayed at 0).
   */
  let early: chrome.webRequest.OnBeforeRequestDetails[] | null = null;
  function observe(d: chrome.webRequest.OnBeforeRequestDetails): undefined {
    const c = controller;
    if (d.tabId < 0) return undefined;
    if (c === null) {
      if (early === null) {
        early = [];
        void ready.then(() => {
          const waiting = early ?? [];
          early = null;
          for (const e of waiting) observe(e);
        });
      }
      if (early.length < 500) early.push(d);
      return undefined;
    }
    const url = d.url;
    if (!url.startsWith('http:') && !url.startsWith('https:')) return undefined;
    if (d.type === 'main_frame') {
      topUrls.set(d.tabId, url);
      fallbackTabs.delete(d.tabId);
      tracker.superseded(d.tabId, d.requestId);
      navigations.set(d.tabId, { count: (navigations.get(d.tabId)?.count ?? 0) + 1, url });
      const handoff = handoffUpgrades.get(d.tabId);
      handoffUpgrades.delete(d.tabId);
      if (handoff !== undefined && handoff.target === url) tracker.started(d.requestId, d.tabId, handoff.url);
    }
    const site = siteOf(url);
    const names = site === null ? [] : c.rulesetNamesForHost(site.host);
    let upgraded = false;
    let first = false;
    let upgradedTo: string | undefined;
    const top = d.type === 'main_frame' ? url : (topUrls.get(d.tabId) ?? url);
    // Chromium: DNR moved this request before any listener saw it (see observeRedirect).
    if (d.type === 'main_frame' && upgradedMainFrames.get(d.tabId) === url) {
      upgradedMainFrames.delete(d.tabId);
      upgraded = true;
      first = httpsFirstMainFrames.delete(d.tabId);
    } else if (url.startsWith('http:')) {
      const decision = decideNow(c, url, d.type, d.tabId);
      if (decision.action === 'upgrade' && decision.url.startsWith('https:')) {
        upgraded = true;
        // The known hosts' upgrade is the same URL over HTTPS; the tab's record says so already.
        if (decision.reason !== 'known-host') upgradedTo = decision.url;
        if (decision.reason === 'https-first') {
          first = true;
          tracker.started(d.requestId, d.tabId, url);
        }
      }
    }
    if (upgraded) {
      counted.add(d.requestId);
      if (d.type === 'main_frame') countedMainFrames.set(d.tabId, url);
      pendingStats.upgrades++;
      scheduleStats();
    }
    if (activity.note({ tabId: d.tabId, type: d.type, url, rulesets: names, upgraded, httpsFirst: first, upgradedTo })) {
      scheduleTabsSave();
      if (upgraded || d.type === 'main_frame') void refreshIcon(d.tabId, top);
    }
    return undefined;
  }

  /*
   * Chromium applies DNR rules before webRequest listeners run: an http:// request a rule
   * upgrades never reaches `observe`, only its redirect does. It counts when it took the URL
   * where our rules take it (a site's own redirect to HTTPS goes elsewhere, or comes after ours).
   */
  const upgradedMainFrames = new Map<number, string>();
  const httpsFirstMainFrames = new Set<number>();
  const counted = new Set<string>();
  /** The last http:// page `observe` counted per tab (it may see the request the handoff takes over). */
  const countedMainFrames = new Map<number, string>();
  function noteUpgrade(tabId: number, type: string, url: string, target: string, byHttpsFirst: boolean): void {
    if (type === 'main_frame') {
      // Counted when the page's own request shows up, with the tab's new record.
      if (countedMainFrames.get(tabId) === url) {
        countedMainFrames.delete(tabId);
        return;
      }
      upgradedMainFrames.set(tabId, target);
      if (byHttpsFirst) httpsFirstMainFrames.add(tabId);
      else httpsFirstMainFrames.delete(tabId);
      return;
    }
    pendingStats.upgrades++;
    scheduleStats();
    const c = controller;
    const site = siteOf(url);
    const names = c === null || site === null ? [] : c.rulesetNamesForHost(site.host);
    if (activity.note({ tabId, type, url, rulesets: names, upgraded: true })) {
      scheduleTabsSave();
      void refreshIcon(tabId, topUrls.get(tabId));
    }
  }
  function observeRedirect(d: chrome.webRequest.OnBeforeRedirectDetails): void {
    const c = controller;
    if (c === null) {
      void ready.then(() => observeRedirect(d));
      return;
    }
    if (d.tabId < 0 || counted.delete(d.requestId)) return;
    if (!d.url.startsWith('http:') || !d.redirectUrl.startsWith('https:')) return;
    const decision = decideNow(c, d.url, d.type, d.tabId);
    // Counted when our rules took it there (known hosts' subresources are not counted here).
    if (decision.action !== 'upgrade' || decision.url !== d.redirectUrl || decision.reason === 'known-host') return;
    const byHttpsFirst = decision.reason === 'https-first';
    if (byHttpsFirst) tracker.started(d.requestId, d.tabId, d.url);
    noteUpgrade(d.tabId, d.type, d.url, d.redirectUrl, byHttpsFirst);
  }

  const filter = { urls: ['http://*/*', 'https://*/*'] };
  ext.webRequest.onBeforeRequest.addListener(observe, filter);
  if (options.platform === 'chromium') ext.webRequest.onBeforeRedirect.addListener(observeRedirect, { urls: ['http://*/*'] });
  ext.webRequest.onResponseStarted.addListener((d) => tracker.responded(d.requestId), filter);
  ext.webRequest.onCompleted.addListener((d) => {
    tracker.responded(d.requestId);
    protection.learn(d, d.type === 'main_frame' ? d.url : topUrls.get(d.tabId));
    if (d.type === 'main_frame' && d.url.startsWith('http:')) {
      const site = siteOf(d.url);
      if (site !== null) {
        pendingStats.httpHosts.push(site.hostWithPort);
        scheduleStats();
      }
    }
  }, filter);
  ext.webRequest.onErrorOccurred.addListener((d) => tracker.errored(d.requestId, d.error), filter);
  // A followed navigation sent to an extension page (Chromium's handoff page) is no longer ours.
  ext.webRequest.onBeforeRedirect.addListener((d) => tracker.redirected(d.requestId, d.redirectUrl), filter);
  ext.tabs.onRemoved.addListener((tabId) => {
    activity.remove(tabId);
    tickets.dropTab(tabId);
    protection.budget.tabClosed(tabId);
    fallbackTabs.delete(tabId);
    topUrls.delete(tabId);
    navigations.delete(tabId);
    handoffUpgrades.delete(tabId);
    scheduleTabsSave();
  });
  ext.tabs.onActivated.addListener(({ tabId }) => {
    void ext.tabs.get(tabId).then(
      (t) => refreshIcon(tabId, t.url),
      () => undefined,
    );
  });
  ext.tabs.onUpdated.addListener((tabId, change, tab) => {
    if (change.url !== undefined || change.status === 'complete') void refreshIcon(tabId, tab.url);
  });
  // A window or the other build changed settings: apply them (serialised in the controller).
  ext.storage.onChanged.addListener((changes, area) => {
    const known = changes[KNOWN_HTTPS_STORAGE_KEY];
    if (area === 'local' && known !== undefined) void ready.then(() => protection.storedChanged(known.newValue));
    // Statistics and the repair log change nothing the engine or the rules depend on.
    const relevant = Object.keys(changes).some((k) => (SETTING_KEYS as string[]).includes(k) && k !== 'stats' && k !== 'repairs');
    if (area !== 'local' || !relevant) return;
    void ready.then(async (c) => c.reconcile(await store.load()));
  });
  // Listening is enough: Chromium then starts the worker with the browser, so the session-only
  // state above is rebuilt before the first page loads.
  ext.runtime.onStartup.addListener(() => undefined);

  // ---- the pages' port ---------------------------------------------------------------------
  ext.runtime.onConnect.addListener((port) => {
    if (port.name !== UI_PORT_NAME) return;
    // Who is asking, as the browser says: fixed for the port's life.
    const sender = classifySender(port.sender);
    port.onMessage.addListener((msg: { id: number; request: UiRequest }) => {
      void (async () => {
        let response: unknown;
        try {
          const c = await ready;
          const refused = typeof msg?.request?.type === 'string' ? refusal(sender, msg.request, tickets) : 'not a request';
          if (refused !== null) throw new Error(refused);
          const tabUrl = async (tabId: number) => {
            try {
              return (await ext.tabs.get(tabId)).url;
            } catch {
              // No such tab (closed, or the popup was opened without one): throws synchronously for -1.
              return undefined;
            }
          };
          if (isLibraryRequest(msg.request) && library !== null)
            // Progress of an import goes to the page that asked, as messages without an id.
            response = await library.handle(msg.request, (progress) => {
              try {
                port.postMessage({ progress });
              } catch {
                // The page closed; the import goes on.
              }
            });
          else if (isProtectionRequest(msg.request))
            response = await handleProtectionRequest(msg.request, { controller: c, protection, store, storage: ext.storage.local });
          else response = await c.handle(msg.request, tabUrl);
          if (msg.request.type === 'httpOnce' || msg.request.type === 'pageRetry') await ext.storage.session.set({ [ONCE_SESSION_KEY]: [...c.httpOnce] });
        } catch (e) {
          response = { error: String(e) };
        }
        try {
          port.postMessage({ id: msg.id, response });
        } catch {
          // The page closed before the answer.
        }
      })();
    });
  });

  return {
    controller: ready,
    protection,
    rewriter: () => controller?.channels.scoped ?? null,
    noteHandoff(tabId, url, target) {
      if (!target.startsWith('https:')) return;
      noteUpgrade(tabId, 'main_frame', url, target, false);
      // HTTPS-first's upgrade: its failure falls back like any other (trailing-dot hosts).
      const c = controller;
      if (c !== null && decideNow(c, url, 'main_frame', tabId).reason === 'https-first') {
        handoffUpgrades.set(tabId, { target, url });
      }
    },
    decide(details) {
      const c = controller;
      if (c === null) return null;
      if (details.type === 'main_frame' && details.tabId >= 0) topUrls.set(details.tabId, details.url);
      return decideNow(c, details.url, details.type, details.tabId);
    },
  };
}
