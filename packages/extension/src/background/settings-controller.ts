import { createEngine, type Engine, type Ruleset } from '@httpsify/engine';
import { type ChannelRecord, parseChannelDefinition } from '@httpsify/engine/channels';
import {
  applyRulesetChoices,
  buildChannelLayers,
  type ChannelLayers,
  channelsForHost,
  layersSecureCookie,
  type LibraryLayerInput,
} from '../channels/channel-layers.js';
import { channelNameProblem } from '../channels/channel-name.js';
import type { ChannelStatus } from '../channels/channel-service.js';
import { channelNameClashes, exportSettingsFile, ImportRefused, importPatch, parseSettingsFile, planImport } from '../settings/import.js';
import type { Settings } from '../settings/schema.js';
import type { SettingsStore } from '../settings/store.js';
import { exportUserRulesXml, loadUserRuleChecks, splitRulesetXml, toUserRule, upsertUserRule } from '../settings/user-rules.js';
import { addSite, removeSite, SiteList, siteOf } from '../site-rules/site-pattern.js';
import type { TabActivity } from './tab-activity.js';
import { pageStatus } from './page-status.js';
import type {
  AboutInfo,
  ChannelAddResult,
  ChannelRow,
  ImportApplyResult,
  ImportPreview,
  ImportResult,
  PageStatus,
  PopupState,
  RulesetDetails,
  RulesetIndex,
  RulesetRow,
  SaveResult,
  UiRequest,
} from './ui-protocol.js';

export { EXPORT_FORMAT } from '../settings/import.js';

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
  /** Path of the fallback page (`/ui/interstitial.html`), so the popup can explain it. */
  fallbackPath?: string;
  /** The extension's version (manifest). */
  version?: string;
  /** Unix seconds of the bundled rulesets, when known. */
  rulesetsTimestamp?: number;
  /** "Open over HTTP this time" hosts changed (the platform keeps them for the session). */
  httpOnceChanged?(hosts: string[]): Promise<void>;
}

export interface LoopGuardHooks {
  isHostBlocked(host: string): boolean;
  /** Upgrade the host again (drops its session allow rule on Chromium). */
  forget(host: string): Promise<void>;
}

/** What the controller needs from the channel machinery (ChannelService plus the platform). */
export interface ChannelHooks {
  /** Timestamp of the packaged default bundle. */
  defaultsTimestamp: number;
  /** The subscribed channels in the settings changed (runs in the background; may start checks). */
  definitionsChanged(definitions: Settings['channels']): Promise<void>;
  status(): ChannelStatus[];
  checkNow(name?: string): Promise<void>;
  /** New engines are in place (bundle installed, switches changed): Chromium recompiles its rules. */
  layersApplied(controller: SettingsController): Promise<void>;
  /** Per channel, why this browser does not (fully) apply it. */
  platformProblems(): Promise<Record<string, string>>;
}

/** A channel added by definition or address whose name is taken (channels/channel-name.ts). */
class ChannelNameTaken extends Error {}

/**
 * The background half of the UI: answers the pages, writes settings through the serialised
 * store, and keeps the engines (default rulesets and user rules) in line with the settings.
 */
export class SettingsController {
  settings!: Settings;
  userEngine: Engine | null = null;
  userRulesets: Ruleset[] = [];
  disabled = new SiteList([]);
  httpAllowed = new SiteList([]);
  /** Hosts opened over HTTP once (this browser session). */
  readonly httpOnce = new Set<string>();
  /**
   * Tabs showing the fallback page, by id: its address (extensions without the "tabs"
   * permission cannot read the address of a tab showing one of their own pages).
   */
  readonly fallbackTabs = new Map<number, string>();
  /**
   * Installed channels over the defaults. A new install replaces the whole object (requests being
   * decided keep the old one); the user's switches are applied in place, as to the defaults.
   */
  channels: ChannelLayers;
  /** The last definitionsChanged hand-over (tests wait on it). */
  channelsSettled: Promise<void> = Promise.resolve();
  private channelRecords: ChannelRecord[] = [];
  private library: LibraryLayerInput | null = null;
  private appliedChannels = '';
  private appliedOverrides = '';
  private appliedMixed: boolean | null = null;
  private appliedUserRules = '';
  private reconciling: Promise<void> = Promise.resolve();

  constructor(
    readonly engine: Engine,
    readonly store: SettingsStore,
    readonly activity: TabActivity,
    private readonly hooks: UiHooks,
  ) {
    this.channels = buildChannelLayers([], engine);
  }

  async start(): Promise<void> {
    await this.reconcile(await this.store.load());
  }

  /** Brings engines and rules in line with `settings` (serialised: calls never interleave). */
  reconcile(settings: Settings): Promise<void> {
    const run = this.reconciling.then(() => this.apply(settings));
    this.reconciling = run.catch(() => undefined);
    return run;
  }

  private async apply(s: Settings): Promise<void> {
    // Before any state changes, so the rest runs as one step; only user rules need the checks.
    if (s.userRules.length > 0) await loadUserRuleChecks();
    this.settings = s;
    this.disabled = new SiteList(s.disabledSites);
    this.httpAllowed = new SiteList(s.httpAllowedSites);
    const userKey = JSON.stringify(s.userRules);
    if (userKey !== this.appliedUserRules) {
      this.appliedUserRules = userKey;
      this.userRulesets = s.userRules.flatMap((r) => {
        const checked = toUserRule(r.xml);
        return 'rule' in checked ? [checked.ruleset] : [];
      });
      this.userEngine = this.userRulesets.length > 0 ? createEngine(this.userRulesets) : null;
    }
    if (this.userEngine !== null) {
      for (const r of this.userRulesets) this.userEngine.setActive(r.name, s.rulesetOverrides[r.name]);
    }
    const overridesKey = JSON.stringify(s.rulesetOverrides);
    if (overridesKey !== this.appliedOverrides || s.mixedContent !== this.appliedMixed) {
      const first = this.appliedMixed === null;
      const engineBefore = JSON.stringify([...this.engine.activeOverrides()].sort());
      const previous = this.appliedOverrides === '' ? {} : (JSON.parse(this.appliedOverrides) as Record<string, boolean>);
      for (const name of Object.keys(previous)) if (!(name in s.rulesetOverrides)) this.engine.setActive(name, undefined);
      for (const [name, on] of Object.entries(s.rulesetOverrides)) this.engine.setActive(name, on);
      this.engine.setMixedContent(s.mixedContent);
      this.appliedOverrides = overridesKey;
      this.appliedMixed = s.mixedContent;
      // At startup the background has compiled what it found stored; recompile only if the
      // settings differ from that (a migration, mixed content on).
      const engineAfter = JSON.stringify([...this.engine.activeOverrides()].sort());
      if (!first || s.mixedContent || engineAfter !== engineBefore) await this.hooks.overridesApplied(this.engine);
      if (this.channels.channels.length > 0) {
        applyRulesetChoices(this.channels, s.rulesetOverrides, previous, s.mixedContent);
        await this.hooks.channels?.layersApplied(this);
      }
    }
    const channelsKey = JSON.stringify(s.channels);
    if (channelsKey !== this.appliedChannels && this.hooks.channels !== undefined) {
      this.appliedChannels = channelsKey;
      // Not awaited: adding a channel starts its first download, which must not hold up settings.
      this.channelsSettled = this.hooks.channels.definitionsChanged(s.channels).catch((e: unknown) => console.error('httpsify: channel update failed', e));
    }
    await this.hooks.policyChanged(this);
  }

  /** The channel service installed or dropped bundles: build new engines and swap them in. */
  async setChannelRecords(records: ChannelRecord[]): Promise<void> {
    this.channelRecords = records;
    await this.rebuildLayers();
  }

  /** The imported ruleset library changed (null: none, or switched off). */
  async setLibrary(library: LibraryLayerInput | null): Promise<void> {
    this.library = library;
    await this.rebuildLayers();
  }

  private async rebuildLayers(): Promise<void> {
    const layers = buildChannelLayers(this.channelRecords, this.engine, this.hooks.channels?.defaultsTimestamp, this.library);
    const s = this.settings;
    applyRulesetChoices(layers, s.rulesetOverrides, {}, s.mixedContent);
    this.channels = layers;
    await this.hooks.channels?.layersApplied(this);
  }

  /** The engines whose rulesets the user can switch by name: the defaults, then each channel's. */
  private rulesetEngines(): Engine[] {
    return [this.engine, ...this.channels.channels.map((c) => c.engine)];
  }

  /** `<securecookie>` of every layer that may act on the cookie's host. */
  shouldSecureCookie(cookie: { domain: string; name: string }): boolean {
    return layersSecureCookie(this.channels, cookie);
  }

  /** User rules first (they outrank everything), then the channels within their scopes, then the defaults. */
  rewrite(url: string): { rewritten: string | null; ruleset: string | null } {
    const user = this.userEngine?.rewriteWithRuleset(url);
    if (user?.rewritten) return { rewritten: user.rewritten, ruleset: user.ruleset };
    const d = this.channels.scoped.rewriteWithRuleset(url);
    return { rewritten: d.rewritten, ruleset: d.ruleset };
  }

  /**
   * The active ruleset (user rules, channels within their scopes, defaults) with an exclusion
   * matching the URL, or null: the protection mode leaves such a URL on HTTP, as Chromium's
   * rule priorities do (the ruleset's `allow` sits above the mode's rules).
   */
  excludedBy(url: string): string | null {
    return this.userEngine?.excludedBy(url) ?? this.channels.scoped.excludedBy(url);
  }

  /** Ruleset names whose targets cover a host: user rules, then defaults (candidate order). */
  rulesetNamesForHost(host: string): string[] {
    const names: string[] = [];
    const add = (e: Engine | null) => {
      if (e === null) return;
      for (const id of e.candidateRulesets(host)) {
        const n = e.rulesetName(id);
        if (!names.includes(n)) names.push(n);
      }
    };
    add(this.userEngine);
    for (const c of channelsForHost(this.channels, host)) add(c.engine);
    if (this.channels.useDefaults) add(this.engine);
    return names;
  }

  /** The site entry that disables everything for this top-level URL, if any. */
  siteDisabledBy(url: string): string | null {
    return this.disabled.matchUrl(url);
  }

  /**
   * Whether the user's switches let httpsify touch this host's cookies: not when httpsify is off
   * or the site is disabled (Chromium gets the same answer from its DNR rules).
   */
  cookiesMaySecure(host: string): boolean {
    return this.settings.globalEnabled && this.siteDisabledBy(`http://${host}/`) === null;
  }

  siteAllowsHttp(url: URL): boolean {
    const site = siteOf(url.href);
    if (site === null) return false;
    return this.disabled.matchHost(site.host, site.port) !== null || this.httpAllowed.matchHost(site.host, site.port) !== null || this.httpOnce.has(site.host);
  }

  rulesetRow(name: string): RulesetRow | null {
    const user = this.userRulesets.find((r) => r.name === name);
    if (user !== undefined && this.userEngine !== null) {
      const id = this.userEngine.rulesetIdsByName(name)[0] as number;
      return { name, active: this.userEngine.isActive(id), defaultActive: this.userEngine.isDefaultActive(id), note: user.defaultOff ?? null, user: true };
    }
    // The defaults, then the channels: a switch applies to every ruleset of that name.
    for (const engine of this.rulesetEngines()) {
      const id = engine.rulesetIdsByName(name)[0];
      if (id === undefined) continue;
      return { name, active: engine.isActive(id), defaultActive: engine.isDefaultActive(id), note: noteOf(engine, id), user: false };
    }
    return null;
  }

  /** Redirect-loop protection gave up on the host for the session. */
  loopBlocked(host: string): boolean {
    return this.hooks.loopGuard?.isHostBlocked(host) ?? false;
  }

  /** Redirect-loop protection gave up on this URL's host for the session. */
  loopGuarded(url: string): boolean {
    const site = siteOf(url);
    return site !== null && (this.hooks.loopGuard?.isHostBlocked(site.host) ?? false);
  }

  /** Why the tab's page is or is not on HTTPS (see PageStatus). */
  pageStatus(tabId: number, tabUrl: string | undefined): PageStatus {
    const s = this.settings;
    const rec = this.activity.get(tabId);
    const site = tabUrl === undefined ? null : siteOf(tabUrl);
    // A ruleset may have moved the page to another host: ask it about the address asked for.
    const httpUrl = rec !== undefined && rec.url === tabUrl && rec.upgradedFrom !== undefined ? rec.upgradedFrom : tabUrl?.replace(/^https:/, 'http:');
    const offRulesets =
      site === null
        ? []
        : this.rulesetNamesForHost(site.host)
            .map((n) => this.rulesetRow(n))
            .filter((r): r is RulesetRow => r !== null && !r.active && r.defaultActive)
            .map((r) => r.name);
    return pageStatus({
      url: tabUrl,
      fallbackPath: this.hooks.fallbackPath ?? '',
      globalEnabled: s.globalEnabled,
      httpsFirst: s.httpsFirst,
      disabledBy: site === null ? null : this.disabled.matchHost(site.host, site.port),
      httpAllowedBy: site === null ? null : this.httpAllowed.matchHost(site.host, site.port),
      httpOnce: site !== null && this.httpOnce.has(site.host),
      loopGuarded: tabUrl !== undefined && this.loopGuarded(tabUrl),
      upgraded: rec !== undefined && rec.url === tabUrl && rec.mainUpgraded === true ? { byHttpsFirst: rec.httpsFirst } : null,
      rewriteHttp: httpUrl === undefined || site === null ? { rewritten: null, ruleset: null } : this.rewrite(httpUrl),
      offRulesets,
      excludedBy: httpUrl === undefined || site === null ? null : this.excludedBy(httpUrl),
    });
  }

  /**
   * Removes what keeps the tab's page on HTTP, as the status line offers. Answers the address
   * the popup should load next (the page, or the site behind the fallback page).
   */
  async retryPage(tabId: number, tabUrl: string | undefined): Promise<{ ok: boolean; url?: string }> {
    const status = this.pageStatus(tabId, tabUrl);
    if (!status.retry || tabUrl === undefined) return { ok: false };
    const httpUrl = tabUrl.replace(/^https:/, 'http:');
    switch (status.kind) {
      case 'http-site-off':
        await this.update((s) => ({ disabledSites: removeSite(s.disabledSites, status.entry) }));
        break;
      case 'http-allowed':
        await this.update((s) => ({ httpAllowedSites: removeSite(s.httpAllowedSites, status.entry) }));
        break;
      case 'http-loop-guard':
        await this.hooks.loopGuard?.forget(status.host);
        break;
      case 'http-upgrade-failed': {
        this.httpOnce.delete(status.host);
        await this.hooks.httpOnceChanged?.([...this.httpOnce]);
        await this.reconcile(this.settings);
        if (status.onFallbackPage) {
          const target = new URL(tabUrl).searchParams.get('url') ?? '';
          return { ok: true, url: target.replace(/^https:/, 'http:') };
        }
        break;
      }
      case 'http-ruleset-off':
        await this.update((s) => {
          const overrides = { ...s.rulesetOverrides };
          for (const n of status.rulesets) delete overrides[n];
          return { rulesetOverrides: overrides };
        });
        break;
      default:
        break;
    }
    return { ok: true, url: httpUrl };
  }

  popupState(tabId: number, tabUrl: string | undefined): PopupState {
    const s = this.settings;
    const site = tabUrl === undefined ? null : siteOf(tabUrl);
    const rec = this.activity.get(tabId);
    return {
      status: this.pageStatus(tabId, tabUrl),
      settings: { globalEnabled: s.globalEnabled, httpsFirst: s.httpsFirst },
      site:
        site === null || tabUrl === undefined
          ? null
          : {
              url: tabUrl,
              scheme: new URL(tabUrl).protocol.replace(':', ''),
              hostWithPort: site.hostWithPort,
              disabledBy: this.disabled.matchHost(site.host, site.port),
              httpAllowedBy: this.httpAllowed.matchHost(site.host, site.port),
            },
      rulesets: this.activity
        .orderedRulesets(tabId)
        .map((n) => this.rulesetRow(n))
        .filter((r): r is RulesetRow => r !== null),
      upgraded: rec?.upgraded ?? 0,
      httpsFirstPage: rec?.httpsFirst ?? false,
      overrideCount: Object.keys(s.rulesetOverrides).length,
    };
  }

  about(): AboutInfo {
    // Counted by name, as the "All rulesets" list shows them (a few names repeat in the corpus).
    const names = new Set<string>();
    for (let id = 0; id < this.engine.rulesetCount; id++) names.add(this.engine.rulesetName(id));
    return {
      version: this.hooks.version ?? '',
      rulesetsTimestamp: this.hooks.rulesetsTimestamp ?? this.hooks.channels?.defaultsTimestamp ?? 0,
      rulesetCount: names.size,
    };
  }

  /** A ruleset's targets and rules by name: user rules, then the defaults and channels. */
  rulesetDetails(name: string): RulesetDetails | null {
    const describe = (rs: Ruleset, source: string): RulesetDetails => ({
      name: rs.name,
      defaultOff: rs.defaultOff ?? (rs.platform !== undefined ? `platform: ${rs.platform}` : null),
      hosts: rs.targets.map((t) => t.host),
      rules: rs.rules.map((r) => ({ from: r.from, to: r.to })),
      exclusions: rs.exclusions.map((e) => e.pattern),
      source,
    });
    const user = this.userRulesets.find((r) => r.name === name);
    if (user !== undefined) return describe(user, 'user');
    const engines: [Engine, string][] = [[this.engine, 'defaults'], ...this.channels.channels.map((c): [Engine, string] => [c.engine, c.name])];
    for (const [engine, source] of engines) {
      const id = engine.rulesetIdsByName(name)[0];
      if (id !== undefined) return describe(engine.ruleset(id), source);
    }
    return null;
  }

  rulesetIndex(): RulesetIndex {
    const index: RulesetIndex = { names: [], active: [], defaultActive: [], notes: [], user: [] };
    const seen = new Set<string>();
    const push = (row: RulesetRow) => {
      if (seen.has(row.name)) return;
      seen.add(row.name);
      index.names.push(row.name);
      index.active.push(row.active);
      index.defaultActive.push(row.defaultActive);
      index.notes.push(row.note);
      index.user.push(row.user);
    };
    for (const r of this.userRulesets) {
      const row = this.rulesetRow(r.name);
      if (row) push(row);
    }
    for (const engine of this.rulesetEngines()) {
      for (let id = 0; id < engine.rulesetCount; id++) {
        const name = engine.rulesetName(id);
        if (seen.has(name)) continue;
        const flagsNote = engine.isDefaultActive(id) ? null : noteOf(engine, id);
        push({ name, active: engine.isActive(id), defaultActive: engine.isDefaultActive(id), note: flagsNote, user: false });
      }
    }
    return index;
  }

  /** Hosts of every ruleset by name, as the list shows them (the first of a name wins, as in the index). */
  rulesetHosts(): Record<string, string> {
    const out: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const r of this.userRulesets) out[r.name] ??= hostsSummary(r.targets.map((t) => t.host));
    for (const engine of this.rulesetEngines()) {
      for (let id = 0; id < engine.rulesetCount; id++) out[engine.rulesetName(id)] ??= hostsSummary(engine.targetsOf(id));
    }
    return out;
  }

  private async update(change: (s: Settings) => Partial<Settings> | void): Promise<Settings> {
    const next = await this.store.update(change);
    await this.reconcile(next);
    return next;
  }

  async handle(req: UiRequest, tabUrl?: (tabId: number) => Promise<string | undefined>): Promise<unknown> {
    switch (req.type) {
      case 'settings':
        return this.settings;
      case 'popup':
        return this.popupState(req.tabId, await this.tabAddress(req.tabId, tabUrl));
      case 'pageRetry':
        return this.retryPage(req.tabId, await this.tabAddress(req.tabId, tabUrl));
      case 'about':
        return this.about();
      case 'rulesetDetails':
        return this.rulesetDetails(String(req.name)) ?? { error: `no ruleset named ${req.name}` };
      case 'setFlag':
        return this.update(() => ({ [req.flag]: req.value === true }));
      case 'setRuleset': {
        if (this.rulesetRow(req.name) === null) return { error: `no ruleset named ${req.name}` };
        return this.update((s) => {
          const overrides = { ...s.rulesetOverrides };
          const row = this.rulesetRow(req.name) as RulesetRow;
          // Only differences from the default are stored.
          if (req.active === null || req.active === row.defaultActive) delete overrides[req.name];
          else overrides[req.name] = req.active;
          return { rulesetOverrides: overrides };
        });
      }
      case 'resetRulesets':
        return this.update((s) => {
          if (req.names === undefined) return { rulesetOverrides: {} };
          const overrides = { ...s.rulesetOverrides };
          for (const n of req.names) delete overrides[n];
          return { rulesetOverrides: overrides };
        });
      case 'rulesetIndex':
        return this.rulesetIndex();
      case 'rulesetHosts':
        return this.rulesetHosts();
      case 'rulesetsForHost':
        return this.rulesetNamesForHost(req.host.trim().toLowerCase());
      case 'siteAdd': {
        if (addSite([], req.entry) === null) return { error: 'invalid-site' };
        return this.update((s) => ({ [req.list]: addSite(s[req.list], req.entry) as string[] }));
      }
      case 'siteRemove':
        return this.update((s) => ({ [req.list]: removeSite(s[req.list], req.entry) }));
      case 'httpOnce': {
        const site = siteOf(req.url);
        if (site === null) return { error: 'invalid-url' };
        this.httpOnce.add(site.host);
        await this.reconcile(this.settings);
        return { ok: true };
      }
      case 'userRuleSave':
        return this.saveUserRule(req.xml, req.replacing);
      case 'userRuleRemove':
        return this.update((s) => {
          const overrides = { ...s.rulesetOverrides };
          delete overrides[req.name];
          return { userRules: s.userRules.filter((r) => r.name !== req.name), rulesetOverrides: overrides };
        });
      case 'userRulesImport':
        return this.importUserRules(req.xml);
      case 'exportSettings':
        return this.exportSettings();
      case 'importPreview':
        return this.previewImport(req.text);
      case 'importApply':
        return this.applyImport(req.text, req.confirmedChannels, req.confirmedUserRules);
      case 'resetStats':
        return this.update(() => ({ stats: { upgrades: 0, fallbacks: 0, httpHosts: [] } }));
      case 'channelStatus':
        return this.channelRows();
      case 'channelAdd':
        return this.addChannel(req.json);
      case 'channelRemove':
        if (!this.settings.channels.some((c) => c.name === req.name)) return { error: `no channel named ${req.name}` };
        await this.update((s) => ({ channels: s.channels.filter((c) => c.name !== req.name) }));
        await this.channelsSettled;
        return this.channelRows();
      case 'channelCheck':
        if (this.hooks.channels === undefined) return { error: 'update channels are not available here' };
        if (req.name !== undefined && !this.settings.channels.some((c) => c.name === req.name)) return { error: `no channel named ${req.name}` };
        await this.channelsSettled;
        await this.hooks.channels.checkNow(req.name);
        return this.channelRows();
      case 'clearRepairs': {
        const next = await this.store.clearRepairs();
        await this.reconcile(next);
        return next;
      }
      default:
        return { error: `unknown request ${(req as { type?: unknown }).type}` };
    }
  }

  private async tabAddress(tabId: number, tabUrl?: (tabId: number) => Promise<string | undefined>): Promise<string | undefined> {
    const url = tabUrl ? await tabUrl(tabId) : this.activity.get(tabId)?.url;
    return url ?? this.fallbackTabs.get(tabId);
  }

  /** The options page's channel list: definition, installed bundle, checks, and this browser's problems. */
  async channelRows(): Promise<ChannelRow[]> {
    const hooks = this.hooks.channels;
    if (hooks === undefined) return [];
    const problems = await hooks.platformProblems();
    for (const [name, problem] of this.channels.problems) problems[name] ??= problem;
    return hooks.status().map((status) => ({ ...status, platformProblem: problems[status.name] ?? null }));
  }

  /** A definition pasted as JSON: refused with the parser's message, or added (and checked at once). */
  async addChannel(json: string): Promise<ChannelAddResult> {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (e) {
      return { ok: false, error: `not JSON: ${e instanceof Error ? e.message : String(e)}` };
    }
    let channel: Settings['channels'][number];
    try {
      channel = parseChannelDefinition(value);
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    let settings: Settings;
    try {
      // Inside the settings lock: another window may have added a channel meanwhile.
      settings = await this.update((s) => {
        const problem = channelNameProblem(
          channel.name,
          s.channels.map((c) => c.name),
        );
        if (problem !== null) throw new ChannelNameTaken(`a channel cannot be named ${JSON.stringify(channel.name)}: ${problem}`);
        return { channels: [...s.channels, channel] };
      });
    } catch (e) {
      if (e instanceof ChannelNameTaken) return { ok: false, error: e.message };
      throw e;
    }
    await this.channelsSettled;
    return { ok: true, settings, channels: await this.channelRows() };
  }

  async saveUserRule(xml: string, replacing?: string): Promise<SaveResult> {
    await loadUserRuleChecks();
    const checked = toUserRule(xml);
    if ('errors' in checked) return { ok: false, errors: checked.errors };
    try {
      // The engine must accept it too (its regex guard can refuse what the linter let through).
      createEngine([checked.ruleset]);
    } catch (e) {
      return { ok: false, errors: [{ severity: 'error', code: 'engine', message: String(e), file: 'user-rule.xml', line: 1, column: 1 }] };
    }
    const clash = this.settings.userRules.some((r) => r.name === checked.rule.name && r.name !== replacing);
    if (clash && replacing !== undefined) {
      return {
        ok: false,
        errors: [
          {
            severity: 'error',
            code: 'duplicate-name',
            message: `a user rule named "${checked.rule.name}" already exists`,
            file: 'user-rule.xml',
            line: 1,
            column: 1,
          },
        ],
      };
    }
    const settings = await this.update((s) => ({ userRules: upsertUserRule(s.userRules, checked.rule, replacing) }));
    return { ok: true, errors: [], settings };
  }

  async importUserRules(text: string): Promise<ImportResult> {
    const problems: string[] = [];
    await loadUserRuleChecks();
    const rules = splitRulesetXml(text).flatMap((xml, i) => {
      const r = toUserRule(xml);
      if ('errors' in r) {
        problems.push(`ruleset ${i + 1}: ${r.errors.map((e) => `${e.line}:${e.column} ${e.message}`).join('; ')}`);
        return [];
      }
      return [r.rule];
    });
    if (rules.length === 0) return { ok: false, problems: problems.length > 0 ? problems : ['no <ruleset> found'] };
    const settings = await this.update((s) => ({ userRules: rules.reduce((list, r) => upsertUserRule(list, r), s.userRules) }));
    return { ok: problems.length === 0, problems, added: rules.length, settings };
  }

  exportSettings(): Record<string, unknown> {
    return exportSettingsFile(this.settings);
  }

  exportUserRules(): string {
    return exportUserRulesXml(this.settings.userRules);
  }

  /** Checks a settings file whole and says what importing it would change; changes nothing. */
  async previewImport(text: unknown): Promise<ImportPreview> {
    await loadUserRuleChecks();
    const parsed = parseSettingsFile(text);
    if (!parsed.ok) return parsed;
    const clashes = channelNameClashes(parsed.values, this.settings);
    if (clashes.length > 0) return { ok: false, problems: clashes };
    return { ok: true, ...planImport(parsed.values, this.settings) };
  }

  /**
   * Applies a settings file in one write, or nothing: the file is checked again, and refused if
   * it would add or redefine a channel or a user rule the user did not confirm by name.
   */
  async applyImport(text: unknown, confirmedChannels: unknown, confirmedUserRules?: unknown): Promise<ImportApplyResult> {
    await loadUserRuleChecks();
    const parsed = parseSettingsFile(text);
    if (!parsed.ok) return parsed;
    const names = (v: unknown): string[] => (Array.isArray(v) ? v.filter((n): n is string => typeof n === 'string') : []);
    try {
      const settings = await this.update((current) => importPatch(parsed.values, current, names(confirmedChannels), names(confirmedUserRules)));
      return { ok: true, settings };
    } catch (e) {
      if (e instanceof ImportRefused) return { ok: false, problems: e.problems };
      throw e;
    }
  }
}

/** Up to three target hosts and how many more: enough to recognise a ruleset in a list. */
function hostsSummary(hosts: readonly string[]): string {
  return hosts.length <= 3 ? hosts.join(', ') : `${hosts.slice(0, 3).join(', ')}, +${hosts.length - 3}`;
}

function noteOf(engine: Engine, id: number): string | null {
  const rs = engine.ruleset(id);
  return rs.defaultOff ?? (rs.platform !== undefined ? `platform: ${rs.platform}` : null);
}
