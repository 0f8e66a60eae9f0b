/**
 * The composition root both backgrounds share: creates the settings controller, the channels,
 * the library and the protection mode, and wires the modules that watch requests (status/),
 * follow HTTPS-first upgrades (https-first/) and answer the pages (routing/) to the browser's
 * events. The platform entry (chromium.ts / firefox.ts) calls `installBackground` once,
 * synchronously, at startup. Logic belongs in the modules, not here.
 */
import { type Engine } from '@httpsify/engine';
import { fetchBytesWith } from '@httpsify/engine/channels';
import { CHANNEL_ALARM, ChannelService } from '../channels/channel-service.js';
import { secureKnownHostCookies } from '../cookies/known-host-cookies.js';
import type { Decision } from '../decision/decide.js';
import { RequestDecider, type RequestDetails } from '../decision/request-decider.js';
import { HttpsFirstFallback } from '../https-first/fallback.js';
import { FALLBACK_PAGE } from '../platform/packaged-files.js';
import { PageTickets } from '../https-first/page-tickets.js';
import { LibraryService } from '../library/library-service.js';
import { LIBRARY_LAYER_NAME } from '../library/library-store.js';
import type { RuleBody } from '../dnr/rules.js';
import type { RuleLimit } from '../dnr/rule-limits.js';
import { KNOWN_HTTPS_STORAGE_KEY } from '../protection/known-https-hosts.js';
import {
  PROTECTION_ALARM,
  PROTECTION_ALARM_MINUTES,
  ProtectionRuntime,
} from '../protection/protection-runtime.js';
import { bundledDefaultsTimestamp } from '../rewriter/engine-loader.js';
import { listenForPages } from '../routing/ui-port.js';
import { SETTING_KEYS } from '../settings/schema.js';
import { type LoopGuardHooks, SettingsController } from '../routing/settings-controller.js';
import { SettingsStore } from '../settings/store.js';
import { siteOf } from '../site-rules/site-pattern.js';
import { RequestObserver } from '../status/request-observer.js';
import { Statistics } from '../status/statistics.js';
import { TabActivity } from '../status/tab-activity.js';
import { BrowserUpgradeWatch } from '../status/browser-upgrade-watch.js';
import { openOverHttp } from '../status/open-over-http.js';
import { TABS_SESSION_KEY, TabActivitySession } from '../status/tab-activity-session.js';
import { ToolbarIcon } from '../status/toolbar-icon.js';
import { exposeForTests } from '../platform/test-hooks.js';
import { ext, storageArea } from '../platform/browser-api.js';

const ONCE_SESSION_KEY = 'uiHttpOnce';
const ONCE_TABS_SESSION_KEY = 'uiHttpOnceTabs';

/** [tab, host] pairs kept for the session, read back as untrusted: anything else is dropped. */
function tabHostPairs(raw: unknown): [number, string][] {
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (p): p is [number, string] =>
      Array.isArray(p) &&
      p.length === 2 &&
      Number.isInteger(p[0]) &&
      p[0] >= 0 &&
      typeof p[1] === 'string' &&
      siteOf(`http://${p[1]}/`)?.host === p[1],
  );
}
const TICKETS_SESSION_KEY = 'uiPageTickets';

export interface UiInstallOptions {
  platform: 'chromium' | 'firefox';
  ready: Promise<Engine>;
  /** Chromium: recompile the dynamic override rules from the engine's state. */
  overridesApplied(engine: Engine): Promise<void>;
  /** New channel engines are in place (Chromium: recompile the channels' rules). */
  channelsApplied(controller: SettingsController): Promise<void>;
  /** Per channel, why this browser does not (fully) apply it. */
  channelProblems(): Promise<Record<string, string>>;
  /** Chromium: the imported library's rulesets that work for page loads only. */
  libraryPageLoadsOnly?(): Promise<string[]>;
  /** The platform's redirect-loop protection, shown in the popup's status line. */
  loopGuard?: LoopGuardHooks;
  /** Chromium: known HTTPS hosts the protection mode writes no subresource rule for (null: not known yet). */
  protectionKeepOut?(host: string): boolean | null;
  /** Chromium: declares the known hosts' subresource rules (the rule writer's "protection" layer). */
  protectionRules?(rules: RuleBody[]): Promise<void>;
  /**
   * Chromium: the settings changed, bring their dynamic rules in line (`syncSettingsRules`). Passed
   * in rather than imported, so the Firefox build does not bundle the DNR compiler.
   */
  policyApplied?(controller: SettingsController): Promise<void>;
  /** Chromium: what of the settings its rule limits leave out (the options page shows it). */
  ruleLimits?(): RuleLimit[];
}

export interface InstalledUi {
  controller: Promise<SettingsController>;
  /**
   * Resolves once the settings are read and the installed channels' stored bundles are in the
   * rulesets: what a request that wakes the background must be decided with. Never rejects;
   * resolves anyway after SETTINGS_WAIT_MS, so that storage that never answers hangs no page.
   */
  settled: Promise<unknown>;
  /**
   * The decision (decision/decide.ts) for a request with the settings and learned state of now;
   * null until the controller is ready. Firefox's blocking listener and the handoff page ask it.
   */
  decide(details: RequestDetails): Decision | null;
  /**
   * Firefox: the blocking listener answered the request as `decision` says. The observer takes
   * it as it is: decided once.
   */
  requestDecided(details: chrome.webRequest.OnBeforeRequestDetails, decision: Decision): void;
  /** What rulesets rewrite with now (channels over the defaults); null until the controller is ready. */
  rewriter(): { rewrite(url: string): string | null } | null;
  /** Known HTTPS hosts, subresource upgrades, the fallback's alternatives, re-checks. */
  protection: ProtectionRuntime;
  /**
   * Chromium: the main-frame handoff page sends the tab to `target` (from the http:// `url`).
   * Counted as the upgrade DNR would have been.
   */
  noteHandoff(tabId: number, url: string, target: string, decision: Decision): void;
}

/**
 * How long a request that woke the background waits for the settings and channels before it
 * is decided without them: reading them takes tens of milliseconds (the 2018 library: a page
 * that woke the background loaded in 0.3–0.6 s in all).
 */
const SETTINGS_WAIT_MS = 10_000;

/** Resolves when `p` settles (either way) or after `ms`, whichever comes first. */
function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([p.then(noop, noop), bound]).finally(() => clearTimeout(timer));
}

function noop(): void {}

export function installBackground(options: UiInstallOptions): InstalledUi {
  const store = new SettingsStore(storageArea('local'));
  const session = storageArea('session');
  const activity = new TabActivity();
  const upgradeWatch = new BrowserUpgradeWatch();
  const activitySession = new TabActivitySession(activity, session);
  const tickets = new PageTickets();
  let controller: SettingsController | null = null;
  let channelService: ChannelService | null = null;
  let library: LibraryService | null = null;
  const protection = new ProtectionRuntime({
    storage: storageArea('local'),
    writeRules: options.protectionRules,
    learned: (host) =>
      void secureKnownHostCookies(
        host,
        (h) => controller !== null && protection.upgradesHost(controller.snapshot, h),
      ),
    dnrKeepOut: options.protectionKeepOut,
  });
  const decider = new RequestDecider((host, now) => protection.known.has(host, now));
  const stats = new Statistics(store, (totals) => controller?.statsStored(totals));
  const fallback = new HttpsFirstFallback({
    portalProbeUrl: async () => (await store.load()).portalProbeUrl,
    plan: async (url, reason, byUser) =>
      protection.planFallback((controller ?? (await ready)).snapshot, url, reason, byUser),
    tickets,
    ticketsChanged: () => session.set({ [TICKETS_SESSION_KEY]: tickets.snapshot() }),
    fellBack: () => stats.fellBack(),
  });

  /**
   * Whether the installed channels and the library have both been read since this start. Their
   * rules (Chromium) are one layer: synced over the channels alone, a restart removed every
   * library rule and compiled them all again once the library was read (seconds with a large
   * one, on each wake of the worker), leaving its sites unenforced meanwhile.
   */
  let layersRead = false;
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
      ruleLimits: options.ruleLimits,
      fallbackPath: `/${FALLBACK_PAGE}`,
      fallbackPage: (tabId) => fallback.pageIn(tabId),
      movedBy: (tabId, url) => upgradeWatch.movedBy(tabId, url),
      openOverHttp: (tabId, url, pastBrowser) =>
        openOverHttp(pastBrowser ? options.platform : 'firefox', tabId, url),
      version: ext.runtime.getManifest().version,
      rulesetsTimestamp: defaultsTimestamp,
      httpOnceChanged: async (hosts, inTabs) =>
        session.set({ [ONCE_SESSION_KEY]: hosts, [ONCE_TABS_SESSION_KEY]: inTabs }),
      policyChanged: async (ctl) => {
        // The known hosts' rules and the icon follow the settings even when the browser
        // refuses part of the settings' own rules (the error is still reported).
        try {
          await options.policyApplied?.(ctl);
        } finally {
          await protection.viewChanged(ctl.snapshot);
          void icon.refreshAll();
        }
      },
      channels: {
        defaultsTimestamp,
        definitionsChanged: (definitions) => service.setDefinitions(definitions),
        status: () => service.status(),
        checkNow: async (name) => void (await service.checkNow(name)),
        // Not before the channels and the library are both read (below): the browser's rules
        // from before a restart stand meanwhile.
        layersApplied: (ctl) => (layersRead ? options.channelsApplied(ctl) : Promise.resolve()),
        platformProblems: () => options.channelProblems(),
      },
    });
    const saved = await session.get([
      TABS_SESSION_KEY,
      ONCE_SESSION_KEY,
      ONCE_TABS_SESSION_KEY,
      TICKETS_SESSION_KEY,
    ]);
    tickets.restore(saved[TICKETS_SESSION_KEY]);
    activitySession.restore(saved[TABS_SESSION_KEY]);
    c.restoreHttpOnce(
      (saved[ONCE_SESSION_KEY] as string[] | undefined) ?? [],
      tabHostPairs(saved[ONCE_TABS_SESSION_KEY]),
    );
    await protection.load();
    await c.start();
    // The imported ruleset library: one more layer after the channels (src/library/).
    library = new LibraryService({
      area: storageArea('local'),
      apply: (lib) =>
        c.setLibrary(
          lib === null
            ? null
            : { name: LIBRARY_LAYER_NAME, timestamp: lib.timestamp, engine: lib.engine },
        ),
      platformProblem: async () => (await options.channelProblems())[LIBRARY_LAYER_NAME] ?? null,
      pageLoadsOnly: async () => (await options.libraryPageLoadsOnly?.()) ?? [],
      bundledNamesForHost: (host) => {
        const defaults = c.rewriter.engine;
        return [...defaults.candidateRulesets(host)].map((id) => defaults.rulesetName(id));
      },
    });
    await library.start();
    // The stored channel bundles too (bounded: a storage that never answers must not stop
    // the pages); then one sync over both, which finds the rules already in place.
    await within(service.storedApplied(), SETTINGS_WAIT_MS);
    layersRead = true;
    await options
      .channelsApplied(c)
      .catch((e: unknown) => console.error('httpsify: channel rules not brought in line', e));
    controller = c;
    return c;
  })();
  ready.catch((e: unknown) => console.error('httpsify UI failed to start', e));
  const settled = within(
    ready.then(() => channelService?.storedApplied()),
    SETTINGS_WAIT_MS,
  );
  // For the browser tests (test builds only).
  exposeForTests('httpsifyUi', {
    controller: ready,
    channels: () => channelService,
    protection,
    library: () => library,
  });
  // Registered at once (MV3): the alarm may be what woke the worker.
  ext.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === CHANNEL_ALARM) void ready.then(() => channelService?.onAlarm());
    if (alarm.name === PROTECTION_ALARM) void ready.then((c) => protectionTick(c));
  });
  void ext.alarms.get(PROTECTION_ALARM).then((a) => {
    if (a === undefined)
      void ext.alarms.create(PROTECTION_ALARM, {
        periodInMinutes: PROTECTION_ALARM_MINUTES,
        delayInMinutes: 1,
      });
  });

  /** Hourly: expired known hosts go; sites left on HTTP whose period passed are re-checked. */
  async function protectionTick(c: SettingsController): Promise<void> {
    protection.prune();
    const restored = await protection.recheck(c.settings.httpAllowedSites);
    if (restored.length === 0) return;
    const next = await store.update((s) => ({
      httpAllowedSites: s.httpAllowedSites.filter((e) => !restored.includes(e)),
    }));
    await c.reconcile(next);
  }

  /** The extension's base URL (navigations its own pages start are the user's). */
  const ownOrigin = ext.runtime.getURL('');
  const icon = new ToolbarIcon(() => controller, ready, activity);
  const observer = new RequestObserver({
    controller: () => controller,
    ready,
    decider,
    fallback,
    activity,
    stats,
    activityChanged: () => activitySession.saveSoon(),
    refreshIcon: (tabId, url) => icon.refreshSoon(tabId, url),
    ownOrigin,
  });

  const filter = { urls: ['http://*/*', 'https://*/*'] };
  // What only follows top-level documents (the fallback's navigations, the tab's committed
  // page) listens to them alone: every event a listener takes is a message to the extension's
  // one thread, and a page's subresources would otherwise bring hundreds.
  const mainFrames = { ...filter, types: ['main_frame' as const] };
  // Firefox's http:// requests come from the blocking listener with its decision
  // (requestDecided); Chromium's DNR decided without us, so the observer decides them.
  ext.webRequest.onBeforeRequest.addListener(
    (d) => observer.observe(d),
    options.platform === 'firefox' ? { urls: ['https://*/*'] } : filter,
  );
  if (options.platform === 'chromium')
    ext.webRequest.onBeforeRedirect.addListener((d) => observer.observeRedirect(d), {
      urls: ['http://*/*'],
    });
  ext.webRequest.onResponseStarted.addListener((d) => {
    fallback.responded(d.requestId);
    // The tab's page changes when a document commits, not when a navigation starts.
    decider.committed(d);
  }, mainFrames);
  const completed = (d: chrome.webRequest.OnCompletedDetails) => {
    fallback.responded(d.requestId);
    observer.ended(d.requestId);
    protection.learn(
      d,
      decider.pageOf(d),
      ownOrigin,
      d.type === 'main_frame' ? observer.handoffStarter(d.tabId, d.url) : undefined,
    );
    if (d.type === 'main_frame' && d.url.startsWith('http:')) {
      const site = siteOf(d.url);
      if (site !== null) stats.servedOverHttp(site.hostWithPort);
    }
  };
  // Learning reads https:// requests; of the http:// ones, only pages count (an http://
  // subresource left as it is brings nothing; the observer's decision for it ages out).
  ext.webRequest.onCompleted.addListener(completed, { urls: ['https://*/*'] });
  ext.webRequest.onCompleted.addListener(completed, {
    urls: ['http://*/*'],
    types: ['main_frame'],
  });
  ext.webRequest.onErrorOccurred.addListener((d) => {
    fallback.errored(d.requestId, d.error);
    observer.ended(d.requestId);
  }, mainFrames);
  ext.webRequest.onBeforeRedirect.addListener(
    (d) => fallback.redirected(d.requestId, d.redirectUrl),
    mainFrames,
  );
  // Who moved each page to HTTPS when we did not (the popup names the browser's own upgrade).
  ext.webNavigation.onBeforeNavigate.addListener((d) => {
    if (d.frameId === 0) upgradeWatch.started(d.tabId, d.url);
  });
  ext.webNavigation.onCommitted.addListener((d) => {
    if (d.frameId === 0) upgradeWatch.committedPage(d.tabId, d.url);
  });
  ext.webRequest.onBeforeRedirect.addListener(
    (d) => upgradeWatch.redirected(d.tabId, d.url, d.redirectUrl, d.statusCode, d.statusLine),
    {
      urls: ['http://*/*'],
      types: ['main_frame'],
    },
  );
  ext.tabs.onRemoved.addListener((tabId) => {
    upgradeWatch.tabClosed(tabId);
    activity.remove(tabId);
    tickets.dropTab(tabId);
    protection.budget.tabClosed(tabId);
    fallback.tabClosed(tabId);
    decider.tabClosed(tabId);
    observer.tabClosed(tabId);
    activitySession.saveSoon();
    // A worker woken by this very event restores the session's tickets and per-tab choices
    // while starting: drop the closed tab's after that, or they would come back.
    void ready
      .then(async (c) => {
        tickets.dropTab(tabId);
        await session.set({ [TICKETS_SESSION_KEY]: tickets.snapshot() });
        await c.tabClosed(tabId);
      })
      .catch(() => undefined);
  });
  ext.tabs.onActivated.addListener(({ tabId }) => {
    void ext.tabs.get(tabId).then(
      (t) => icon.refresh(tabId, t.url),
      () => undefined,
    );
  });
  ext.tabs.onUpdated.addListener((tabId, change, tab) => {
    if (change.url !== undefined || change.status === 'complete') icon.refreshSoon(tabId, tab.url);
  });
  // A window or the other build changed settings: apply them (serialised in the controller).
  ext.storage.onChanged.addListener((changes, area) => {
    const known = changes[KNOWN_HTTPS_STORAGE_KEY];
    if (area === 'local' && known !== undefined)
      void ready.then(() => protection.storedChanged(known.newValue));
    // Statistics and the repair log change nothing the engine or the rules depend on.
    const relevant = Object.keys(changes).some(
      (k) => (SETTING_KEYS as string[]).includes(k) && k !== 'stats' && k !== 'repairs',
    );
    if (area !== 'local' || !relevant) return;
    void ready.then(async (c) => c.reconcile(await store.load()));
  });
  // Listening is enough: Chromium then starts the worker with the browser, so the session-only
  // state above is rebuilt before the first page loads.
  ext.runtime.onStartup.addListener(() => undefined);

  listenForPages({
    ready,
    tickets,
    library: () => library,
    protection: { protection, store, storage: ext.storage.local },
    httpOnceChanged: (c) =>
      session.set({ [ONCE_SESSION_KEY]: [...c.httpOnce], [ONCE_TABS_SESSION_KEY]: c.httpOnceTabs }),
  });

  return {
    controller: ready,
    settled,
    protection,
    rewriter: () => controller?.channels.scoped ?? null,
    noteHandoff: (tabId, url, target, decision) => observer.handedOff(tabId, url, target, decision),
    requestDecided: (details, decision) => observer.observe(details, decision),
    decide(details) {
      const c = controller;
      if (c === null) return null;
      // The request's own page (Firefox names it), else the tab's committed one: never a
      // navigation that was only started.
      return decider.decide(c.snapshot, details);
    },
  };
}
