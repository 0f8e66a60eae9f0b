/**
 * The layered rewriter: user rules, then the update channels within their scopes, then the
 * imported library, then the default rulesets. It keeps each layer in line with the settings
 * (user rules compiled, the user's per-ruleset switches and mixed content applied) and answers
 * what the layers do to a URL. A ruleset change belongs here or in the layer it is about.
 */
import { createEngine, type Engine, type Ruleset } from '@httpsify/engine';
import type { ChannelRecord } from '@httpsify/engine/channels';
import {
  applyRulesetChoices,
  buildChannelLayers,
  type ChannelLayers,
  channelsForHost,
  layersSecureCookie,
  type LibraryLayerInput,
} from '../channels/channel-layers.js';
import type { Settings } from '../settings/schema.js';
import { toUserRule } from '../settings/user-rules.js';

export interface RewriterHooks {
  /** The default engine's switches or mixed-content flag changed (Chromium recompiles). */
  overridesApplied(engine: Engine): Promise<void>;
  /** New channel or library engines are in place, or their switches changed. */
  layersApplied(): Promise<void>;
  /** Timestamp of the packaged default bundle (channels replacing the defaults compare with it). */
  defaultsTimestamp?: number;
}

type Choices = Pick<Settings, 'userRules' | 'rulesetOverrides' | 'mixedContent'>;

/** What the ruleset lists and the page status read (no way to change a layer through it). */
export interface RulesetSources {
  readonly engine: Engine;
  readonly userEngine: Engine | null;
  readonly userRulesets: readonly Ruleset[];
  readonly channels: ChannelLayers;
}

export class LayeredRewriter implements RulesetSources {
  private user: Engine | null = null;
  private userSets: Ruleset[] = [];
  /**
   * Installed channels (and the library) over the defaults. A new install replaces the whole
   * object (requests being decided keep the old one); switches are applied in place.
   */
  private layers: ChannelLayers;
  private records: ChannelRecord[] = [];
  private library: LibraryLayerInput | null = null;
  private choices: Choices = { userRules: [], rulesetOverrides: {}, mixedContent: false };
  private appliedOverrides = '';
  private appliedMixed: boolean | null = null;
  private appliedUserRules = '';

  constructor(
    readonly engine: Engine,
    private readonly hooks: RewriterHooks,
  ) {
    this.layers = buildChannelLayers([], engine);
  }

  get userEngine(): Engine | null {
    return this.user;
  }

  get userRulesets(): readonly Ruleset[] {
    return this.userSets;
  }

  get channels(): ChannelLayers {
    return this.layers;
  }

  /** Brings every layer in line with the settings (the caller serialises calls). */
  async apply(s: Choices): Promise<void> {
    this.choices = s;
    const userKey = JSON.stringify(s.userRules);
    if (userKey !== this.appliedUserRules) {
      this.appliedUserRules = userKey;
      this.userSets = s.userRules.flatMap((r) => {
        const checked = toUserRule(r.xml);
        return 'rule' in checked ? [checked.ruleset] : [];
      });
      this.user = this.userSets.length > 0 ? createEngine(this.userSets) : null;
    }
    const user = this.user;
    if (user !== null)
      for (const r of this.userSets) user.setActive(r.name, s.rulesetOverrides[r.name]);
    const overridesKey = JSON.stringify(s.rulesetOverrides);
    if (overridesKey === this.appliedOverrides && s.mixedContent === this.appliedMixed) return;
    const first = this.appliedMixed === null;
    const engineBefore = JSON.stringify([...this.engine.activeOverrides()].sort());
    const previous =
      this.appliedOverrides === ''
        ? {}
        : (JSON.parse(this.appliedOverrides) as Record<string, boolean>);
    for (const name of Object.keys(previous))
      if (!(name in s.rulesetOverrides)) this.engine.setActive(name, undefined);
    for (const [name, on] of Object.entries(s.rulesetOverrides)) this.engine.setActive(name, on);
    this.engine.setMixedContent(s.mixedContent);
    this.appliedOverrides = overridesKey;
    this.appliedMixed = s.mixedContent;
    // At startup the background has compiled what it found stored; recompile only if the
    // settings differ from that (a migration, mixed content on).
    const engineAfter = JSON.stringify([...this.engine.activeOverrides()].sort());
    if (!first || s.mixedContent || engineAfter !== engineBefore)
      await this.hooks.overridesApplied(this.engine);
    if (this.layers.channels.length > 0) {
      applyRulesetChoices(this.layers, s.rulesetOverrides, previous, s.mixedContent);
      await this.hooks.layersApplied();
    }
  }

  /** The channel service installed or dropped bundles: build new engines and swap them in. */
  async setChannelRecords(records: ChannelRecord[]): Promise<void> {
    this.records = records;
    await this.rebuildLayers();
  }

  /** The imported ruleset library changed (null: none, or switched off). */
  async setLibrary(library: LibraryLayerInput | null): Promise<void> {
    this.library = library;
    await this.rebuildLayers();
  }

  private async rebuildLayers(): Promise<void> {
    const layers = buildChannelLayers(
      this.records,
      this.engine,
      this.hooks.defaultsTimestamp,
      this.library,
    );
    applyRulesetChoices(layers, this.choices.rulesetOverrides, {}, this.choices.mixedContent);
    this.layers = layers;
    await this.hooks.layersApplied();
  }

  /** User rules first (they outrank everything), then the channels within their scopes, then the defaults. */
  rewrite(url: string): { rewritten: string | null; ruleset: string | null } {
    const user = this.user?.rewriteWithRuleset(url);
    if (user?.rewritten) return { rewritten: user.rewritten, ruleset: user.ruleset };
    const d = this.layers.scoped.rewriteWithRuleset(url);
    return { rewritten: d.rewritten, ruleset: d.ruleset };
  }

  /**
   * The active ruleset (user rules, channels within their scopes, defaults) with an exclusion
   * matching the URL, or null: the protection mode leaves such a URL on HTTP, as Chromium's
   * rule priorities do (the ruleset's `allow` sits above the mode's rules).
   */
  excludedBy(url: string): string | null {
    return this.user?.excludedBy(url) ?? this.layers.scoped.excludedBy(url);
  }

  /** Ruleset names whose targets cover a host: user rules, channels, then defaults (candidate order). */
  rulesetNamesForHost(host: string): string[] {
    const names: string[] = [];
    const add = (e: Engine | null) => {
      if (e === null) return;
      for (const id of e.candidateRulesets(host)) {
        const n = e.rulesetName(id);
        if (!names.includes(n)) names.push(n);
      }
    };
    add(this.user);
    for (const c of channelsForHost(this.layers, host)) add(c.engine);
    if (this.layers.useDefaults) add(this.engine);
    return names;
  }

  /** `<securecookie>` of every layer that may act on the cookie's host. */
  shouldSecureCookie(cookie: { domain: string; name: string }): boolean {
    return layersSecureCookie(this.layers, cookie);
  }
}
