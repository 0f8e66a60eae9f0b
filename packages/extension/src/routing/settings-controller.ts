/**
 * The settings core: the settings as last applied, the site lists and the session's "open over
 * HTTP this time" hosts, kept in line with storage (`reconcile`) and written through the
 * serialised store. It owns the layered rewriter and hands the pages' requests to the router;
 * everything it exposes to other modules is read-only.
 */
import type { Engine, Ruleset } from '@httpsify/engine';
import type { ChannelRecord } from '@httpsify/engine/channels';
import type { ChannelLayers, LibraryLayerInput } from '../channels/channel-layers.js';
import type { ChannelHooks as ChannelHooksOf } from './channel-requests.js';
import { LayeredRewriter } from '../rewriter/layered-rewriter.js';
import { defaultRulesetCount } from '../rewriter/ruleset-catalog.js';
import { routeSettingsRequest, type SettingsRequestTarget } from './settings-router.js';
import type { Settings } from '../settings/schema.js';
import type { SettingsStore } from '../settings/store.js';
import { loadUserRuleChecks } from '../settings/user-rules.js';
import { SiteList } from '../site-rules/site-pattern.js';
import type { RequestKind } from '../decision/decide.js';
import type { ProtectionSnapshot } from '../decision/snapshot.js';
import { popupState, retryPage, tabPageStatus, type PageViewSources } from '../status/page-view.js';
import type { TabActivity } from '../status/tab-activity.js';
import { DnrBudgetError, DnrRefusedError } from '../dnr/rule-writer.js';
import type {
  AboutInfo,
  PageStatus,
  PopupState,
  RuleLimit,
  UiRequest,
} from '../protocol/ui-protocol.js';

export { EXPORT_FORMAT } from '../settings/import.js';

export type ChannelHooks = ChannelHooksOf<SettingsController>;

/** What the controller needs from the platform (Chromium service worker or Firefox background). */
export interface UiHooks {
  /** The default engine's overrides or mixed-content flag changed (Chromium recompiles dynamic rules). */
  overridesApplied(engine: Engine): Promise<void>;
  /** Site lists, user rules, HTTPS-first or the global switch changed. */
  policyChanged(controller: SettingsController): Promise<void>;
  /** Update channels; absent where channels are not wired (unit tests of other parts). */
  channels?: ChannelHooks;
  /** Redirect-loop protection of the platform (the popup shows it and can retry a host). */
  loopGuard?: LoopGuardHooks;
  /** What of the settings the browser could not hold (Chromium's rule limits; none elsewhere). */
  ruleLimits?(): RuleLimit[];
  /** Path of the fallback page (`/ui/fallback.html`), so the popup can explain it. */
  fallbackPath?: string;
  /**
   * The fallback page's address in a tab showing it (extensions without the "tabs" permission
   * cannot read the address of a tab showing one of their own pages).
   */
  fallbackPage?(tabId: number): string | undefined;
  /** Who moved a tab's page to HTTPS when we did not (status/browser-upgrade-watch.ts). */
  movedBy?(tabId: number, url: string | undefined): 'browser' | 'site' | null;
  /** Loads the tab at an http:// address past the browser's own upgrade where possible. */
  openOverHttp?(tabId: number, url: string, pastBrowser: boolean): Promise<{ ok: boolean }>;
  /** The extension's version (manifest). */
  version?: string;
  /** Unix seconds of the bundled rulesets, when known. */
  rulesetsTimestamp?: number;
  /** "Open over HTTP this time" hosts changed (the platform keeps them for the session). */
  httpOnceChanged?(hosts: string[], inTabs: [number, string][]): Promise<void>;
}

export interface LoopGuardHooks {
  /** A live loop verdict lets this http:// URL load over HTTP in the tab, as this kind. */
  allows(url: string, tabId: number, kind: RequestKind): boolean;
  /** Upgrade the host again (drops its session allow rule on Chromium). */
  forget(host: string): Promise<void>;
}

const NONE: ReadonlySet<string> = new Set();

export class SettingsController implements SettingsRequestTarget, PageViewSources {
  private current!: Settings;
  private disabledList = new SiteList([]);
  private httpAllowedList = new SiteList([]);
  /** Hosts opened over HTTP once (this browser session). */
  private readonly once = new Set<string>();
  /** Hosts opened over HTTP for one tab only (a sign-in network's fallback page), by tab. */
  private readonly onceInTab = new Map<number, Set<string>>();
  /** What decide() reads, rebuilt (`snapshotNow`) whenever what it holds changes. */
  private snap: ProtectionSnapshot | null = null;
  private appliedChannels = '';
  private settled: Promise<void> = Promise.resolve();
  private reconciling: Promise<void> = Promise.resolve();
  readonly rewriter: LayeredRewriter;
  readonly fallbackPath: string;

  constructor(
    readonly engine: Engine,
    private readonly store: SettingsStore,
    readonly activity: TabActivity,
    private readonly hooks: UiHooks,
  ) {
    this.fallbackPath = hooks.fallbackPath ?? '';
    this.rewriter = new LayeredRewriter(engine, {
      overridesApplied: (e) => hooks.overridesApplied(e),
      layersApplied: async () => hooks.channels?.layersApplied(this),
      defaultsTimestamp: hooks.channels?.defaultsTimestamp,
    });
  }

  get settings(): Settings {
    return this.current;
  }
  /** The state decide() reads, as of the last change (decision/snapshot.ts); after `start`. */
  get snapshot(): ProtectionSnapshot {
    if (this.snap === null) throw new Error('the settings are not read yet');
    return this.snap;
  }

  /**
   * The one place the decision's state is built: after the settings are applied, and when
   * "open over HTTP this time" changes (at once: the tab is sent there right after).
   */
  private snapshotNow(): void {
    if (this.current === undefined) return;
    const s = this.current;
    const inTabs = new Map<number, ReadonlySet<string>>();
    for (const [tabId, hosts] of this.onceInTab) inTabs.set(tabId, new Set(hosts));
    const rewriter = this.rewriter;
    this.snap = Object.freeze({
      globalEnabled: s.globalEnabled,
      httpsFirst: s.httpsFirst,
      disabled: this.disabledList,
      httpAllowed: this.httpAllowedList,
      httpOnce: new Set(this.once),
      httpOnceInTabs: inTabs,
      userRules: rewriter.userEngine,
      rulesets: {
        rewrite: (url: string) => rewriter.rewrite(url),
        excludedBy: (url: string) => rewriter.excludedBy(url),
      },
      loopVerdict: (url: string, tabId: number, kind: RequestKind) =>
        this.loopVerdict(url, tabId, kind),
      dnr: {
        disabledSites: [...s.disabledSites],
        httpAllowedSites: [...s.httpAllowedSites],
        activeUserRulesets: rewriter.userRulesets.filter((r) => {
          const user = rewriter.userEngine;
          return user?.isActive(user.rulesetIdsByName(r.name)[0] as number) ?? false;
        }),
      },
    });
  }
  get disabled(): Pick<SiteList, 'matchHost' | 'matchUrl'> {
    return this.disabledList;
  }
  get httpAllowed(): Pick<SiteList, 'matchHost' | 'matchUrl'> {
    return this.httpAllowedList;
  }
  get httpOnce(): ReadonlySet<string> {
    return this.once;
  }
  httpOnceInTab(tabId: number): ReadonlySet<string> {
    return this.onceInTab.get(tabId) ?? NONE;
  }
  /** Every tab's own "open over HTTP" hosts, as [tab, host] pairs. */
  get httpOnceTabs(): [number, string][] {
    return [...this.onceInTab].flatMap(([tabId, hosts]) =>
      [...hosts].map((h): [number, string] => [tabId, h]),
    );
  }
  get userEngine(): Engine | null {
    return this.rewriter.userEngine;
  }
  get userRulesets(): readonly Ruleset[] {
    return this.rewriter.userRulesets;
  }
  get channels(): ChannelLayers {
    return this.rewriter.channels;
  }
  get channelHooks(): ChannelHooks | undefined {
    return this.hooks.channels;
  }
  get layerProblems(): ReadonlyMap<string, string> {
    return this.rewriter.channels.problems;
  }

  async start(): Promise<void> {
    const settings = await this.store.load();
    try {
      await this.reconcile(settings);
    } catch (e) {
      // Applied, but the browser refused part of their rules (Chromium's limits): the pages must
      // still open, so that the user can see and undo what does not fit.
      if (this.snap === null) throw e;
      console.error('httpsify: the settings were applied, but not all of their rules', e);
    }
  }

  /** The session's "open over HTTP this time" hosts, read back when the worker restarts. */
  restoreHttpOnce(hosts: readonly string[], inTabs: readonly [number, string][] = []): void {
    for (const h of hosts) this.once.add(h);
    for (const [tabId, h] of inTabs) this.addOnceInTab(tabId, h);
    this.snapshotNow();
  }

  private addOnceInTab(tabId: number, host: string): void {
    let hosts = this.onceInTab.get(tabId);
    if (hosts === undefined) this.onceInTab.set(tabId, (hosts = new Set()));
    hosts.add(host);
  }

  /**
   * Brings engines and rules in line with `settings` (serialised: calls never interleave); a
   * function is read when its turn comes.
   */
  reconcile(settings: Settings | (() => Settings)): Promise<void> {
    const run = this.reconciling.then(() =>
      this.apply(typeof settings === 'function' ? settings() : settings),
    );
    this.reconciling = run.catch(() => undefined);
    return run;
  }

  /**
   * The session's own state changed ("open over HTTP this time"): the rules are built again
   * from the settings as they stand when this turn comes. Not from `current` now: a change
   * stored meanwhile and queued before this would be undone by the older settings.
   */
  private reapply(): Promise<void> {
    return this.reconcile(() => this.current);
  }

  private async apply(s: Settings): Promise<void> {
    // Before any state changes, so the rest runs as one step; only user rules need the checks.
    if (s.userRules.length > 0) await loadUserRuleChecks();
    this.current = s;
    this.disabledList = new SiteList(s.disabledSites);
    this.httpAllowedList = new SiteList(s.httpAllowedSites);
    // A platform hook may refuse the rulesets' switches (Chromium's DNR limits): the error is
    // reported, but what decide() reads and the settings rules still follow the settings held
    // now, so that the popup, decide() and the browser's rules never tell three stories.
    let refused: { error: unknown } | null = null;
    try {
      await this.rewriter.apply(s);
    } catch (error) {
      refused = { error };
    }
    this.snapshotNow();
    const channelsKey = JSON.stringify(s.channels);
    if (channelsKey !== this.appliedChannels && this.hooks.channels !== undefined) {
      this.appliedChannels = channelsKey;
      // Not awaited: adding a channel starts its first download, which must not hold up settings.
      this.settled = this.hooks.channels
        .definitionsChanged(s.channels)
        .catch((e: unknown) => console.error('httpsify: channel update failed', e));
    }
    const errors = refused === null ? [] : [refused.error];
    try {
      await this.hooks.policyChanged(this);
    } catch (e) {
      errors.push(e);
    }
    // The settings are in force in decide(); what the browser's rule limits left out of its
    // rules is the options page's notice (ruleLimits), not a failure of the click.
    const failure = errors.find((e) => !isRuleLimit(e));
    if (failure !== undefined) throw failure;
    if (errors.length > 0) console.warn('httpsify: not all rules fit the browser', ...errors);
  }

  /** The last definitionsChanged hand-over (tests and channel requests wait on it). */
  channelsSettled(): Promise<void> {
    return this.settled;
  }

  /** The channel service installed or dropped bundles: build new engines and swap them in. */
  setChannelRecords(records: ChannelRecord[]): Promise<void> {
    return this.rewriter.setChannelRecords(records);
  }

  /** The imported ruleset library changed (null: none, or switched off). */
  setLibrary(library: LibraryLayerInput | null): Promise<void> {
    return this.rewriter.setLibrary(library);
  }

  async update(change: (s: Settings) => Partial<Settings> | void): Promise<Settings> {
    const next = await this.store.update(change);
    await this.reconcile(next);
    return next;
  }

  /**
   * The statistics were added to in storage (status/statistics.ts): the snapshot follows, without
   * a reconcile (nothing else changed). Before, the options page read totals from the start.
   */
  statsStored(stats: Settings['stats']): void {
    this.current = { ...this.current, stats };
  }

  async clearRepairs(): Promise<Settings> {
    const next = await this.store.clearRepairs();
    await this.reconcile(next);
    return next;
  }

  async allowHttpOnce(host: string): Promise<void> {
    this.once.add(host);
    this.snapshotNow();
    await this.reapply();
  }

  /** "Open over HTTP" for one tab only: other tabs keep upgrading the host. */
  async allowHttpOnceInTab(tabId: number, host: string): Promise<void> {
    this.addOnceInTab(tabId, host);
    this.snapshotNow();
    await this.reapply();
  }

  /** The tab closed: what was allowed for it goes with it. */
  async tabClosed(tabId: number): Promise<void> {
    if (!this.onceInTab.delete(tabId)) return;
    this.snapshotNow();
    await this.hooks.httpOnceChanged?.([...this.once], this.httpOnceTabs);
    await this.reapply();
  }

  /** The user asked for HTTPS again: every tab's choice for the host goes too. */
  private async dropHttpOnce(host: string): Promise<void> {
    this.once.delete(host);
    for (const hosts of this.onceInTab.values()) hosts.delete(host);
    this.snapshotNow();
    await this.hooks.httpOnceChanged?.([...this.once], this.httpOnceTabs);
    await this.reapply();
  }

  rewrite(url: string): { rewritten: string | null; ruleset: string | null } {
    return this.rewriter.rewrite(url);
  }
  excludedBy(url: string): string | null {
    return this.rewriter.excludedBy(url);
  }
  rulesetNamesForHost(host: string): string[] {
    return this.rewriter.rulesetNamesForHost(host);
  }
  shouldSecureCookie(cookie: { domain: string; name: string }): boolean {
    return this.rewriter.shouldSecureCookie(cookie);
  }

  /** The site entry that disables everything for this top-level URL, if any. */
  siteDisabledBy(url: string): string | null {
    return this.disabledList.matchUrl(url);
  }

  /**
   * Whether the user's switches let httpsify touch this host's cookies: not when httpsify is off
   * or the site is disabled (Chromium gets the same answer from its DNR rules).
   */
  cookiesMaySecure(host: string): boolean {
    return this.current.globalEnabled && this.siteDisabledBy(`http://${host}/`) === null;
  }

  /** A redirect-loop verdict lets this URL load over HTTP in the tab (for a while). */
  loopVerdict(url: string, tabId: number, kind: RequestKind): boolean {
    return this.hooks.loopGuard?.allows(url, tabId, kind) ?? false;
  }

  movedBy(tabId: number, url: string | undefined): 'browser' | 'site' | null {
    return this.hooks.movedBy?.(tabId, url) ?? null;
  }

  /** See UiHooks.openOverHttp; without the hook the tab is simply sent to the address. */
  async openOverHttp(tabId: number, url: string): Promise<{ ok: boolean }> {
    // Past the browser only where httpsify itself would leave the address on HTTP: a redirect
    // back to HTTP against our own upgrade would be a loop.
    const ours = tabPageStatus(this, -1, url).kind;
    const pastBrowser = [
      'extension-off',
      'http-site-off',
      'http-allowed',
      'http-no-rule',
      'http-upgrade-failed',
      'http-ruleset-excludes',
    ].includes(ours);
    return this.hooks.openOverHttp?.(tabId, url, pastBrowser) ?? { ok: false };
  }

  /** Why the tab's page is or is not on HTTPS (see PageStatus). */
  pageStatus(tabId: number, tabUrl: string | undefined): PageStatus {
    return tabPageStatus(this, tabId, tabUrl);
  }

  popupState(tabId: number, tabUrl: string | undefined): PopupState {
    return popupState(this, tabId, tabUrl);
  }

  retryPage(tabId: number, tabUrl: string | undefined): Promise<{ ok: boolean; url?: string }> {
    return retryPage(
      this,
      {
        update: (change) => this.update(change),
        forgetLoop: async (host) => this.hooks.loopGuard?.forget(host),
        dropHttpOnce: (host) => this.dropHttpOnce(host),
      },
      tabId,
      tabUrl,
    );
  }

  ruleLimits(): RuleLimit[] {
    return this.hooks.ruleLimits?.() ?? [];
  }

  about(): AboutInfo {
    return {
      version: this.hooks.version ?? '',
      rulesetsTimestamp:
        this.hooks.rulesetsTimestamp ?? this.hooks.channels?.defaultsTimestamp ?? 0,
      rulesetCount: defaultRulesetCount(this.engine),
    };
  }

  /** Answers one of the pages' settings requests (the sender was checked before). */
  handle(
    req: UiRequest,
    tabUrl?: (tabId: number) => Promise<string | undefined>,
  ): Promise<unknown> {
    const tabAddress = async (tabId: number) =>
      (tabUrl ? await tabUrl(tabId) : this.activity.get(tabId)?.url) ??
      this.hooks.fallbackPage?.(tabId);
    return routeSettingsRequest(this, req, tabAddress);
  }
}

/** A refusal by the browser's rule limits (Chromium), which the options page reports itself. */
function isRuleLimit(e: unknown): boolean {
  return e instanceof DnrBudgetError || e instanceof DnrRefusedError;
}
