import type { DnrRule } from '@httpsify/engine/dnr';
import type { DnrApi } from '../dnr/dnr-api.js';
import type { RegexSupport, StorageArea } from '../platform/browser-api.js';
import { STATIC_RULESET_ID } from '../platform/packaged-files.js';
import type { ChannelLayers } from '../channels/channel-layers.js';
import {
  type AppliedChannel,
  compileChannelRules,
  type ChannelDnrInput,
  planChannelDnr,
} from '../channels/channel-dnr.js';
import type { RuleWriter } from '../dnr/rule-writer.js';
import { compileLibraryRules } from '../library/library-dnr.js';
import { LIBRARY_LAYER_NAME } from '../library/library-store.js';

/** storage.local key: what the channel rules were built from, and the problems to show. */
export const CHANNEL_DNR_STATE_KEY = 'channelDnrState';

export interface ChannelDnrState {
  /** Fingerprint of the inputs the rules were built from (skip rebuilding when unchanged). */
  key: string;
  applied: Record<string, AppliedChannel>;
  problems: Record<string, string>;
  defaultsDisabled: boolean;
}

/**
 * Chromium: keeps the dynamic channel rules and the static ruleset's on/off state in line with
 * the installed channels. The rules are only recompiled when an input changed (a new bundle,
 * a scope, the user's switches for the channel's rulesets), since dynamic rules outlive the
 * service worker; the problems are kept in storage for the options page.
 */
export class ChannelDnrRuntime {
  /** Syncs run one after the other: each reads the rules the previous one left. */
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly writer: RuleWriter,
    private readonly rulesets: Pick<DnrApi, 'updateEnabledRulesets'>,
    private readonly area: StorageArea,
    /** The handoff page's URL: the library's page loads that its rules cannot carry go there. */
    private readonly handoffPage: string | null = null,
    /** Chromium's `isRegexSupported`: every new regex is asked before the rules are written. */
    private readonly regexSupport: RegexSupport | null = null,
  ) {}

  /** What the browser said of each regex asked so far (by regex and flags); it does not change while it runs. */
  private readonly verdicts = new Map<string, boolean>();
  /** The regexes it refuses: compiled again without them. */
  private readonly refused = new Set<string>();

  async state(): Promise<ChannelDnrState | undefined> {
    return (await this.area.get([CHANNEL_DNR_STATE_KEY]))[CHANNEL_DNR_STATE_KEY] as
      ChannelDnrState | undefined;
  }

  /** Forgets what the rules were built from, so the next sync rebuilds them (after an update). */
  forgetState(): Promise<void> {
    return this.area.remove(CHANNEL_DNR_STATE_KEY);
  }

  /** Brings the rules in line with `layers`; returns the state now in effect. */
  sync(layers: ChannelLayers, mixedContent: boolean): Promise<ChannelDnrState> {
    const run = this.running.then(() => this.syncNow(layers, mixedContent));
    this.running = run.catch(() => undefined);
    return run;
  }

  private async syncNow(layers: ChannelLayers, mixedContent: boolean): Promise<ChannelDnrState> {
    const key = fingerprint(layers, mixedContent);
    const stored = await this.state();
    if (stored?.key === key) return stored;

    // What the other layers use (the writer counts the shared budgets), and this layer's rules.
    const others = await this.writer.usageOutside('channels');
    const byId = new Map((await this.writer.rules('channels')).map((r) => [r.id, r as DnrRule]));

    const inputs: ChannelDnrInput[] = layers.channels.map((c) => {
      const before = stored?.applied[c.name];
      let previous: ChannelDnrInput['previous'];
      if (before !== undefined && before.scope === c.scope) {
        const rules: DnrRule[] = [];
        for (let id = before.firstId; id < before.firstId + before.count; id++) {
          const r = byId.get(id);
          if (r !== undefined) rules.push({ ...r, priority: r.priority - before.priorityOffset });
        }
        if (rules.length === before.count) previous = { timestamp: before.timestamp, rules };
      }
      return {
        name: c.name,
        timestamp: c.timestamp,
        scope: c.scope,
        replacesDefaults: c.replacesDefaults,
        previous,
        compile: (regexLimit, free, refused) => {
          const rulesets = [];
          for (let id = 0; id < c.engine.rulesetCount; id++)
            if (c.engine.isActive(id)) rulesets.push(c.engine.ruleset(id));
          if (c.name === LIBRARY_LAYER_NAME)
            return compileLibraryRules(rulesets, free, this.handoffPage, refused);
          return compileChannelRules(rulesets, c.scope, regexLimit, c.destinations, {
            ruleLimit: free.rules,
            redirectLimit: free.unsafeRules,
            refusedRegexes: refused,
          });
        },
      };
    });
    let plan = planChannelDnr(inputs, others, this.refused);
    // A regex Chromium refuses would fail the whole update: ask about every new one first and
    // compile again without those it refuses (a merge made anew may need one more round).
    for (
      let round = 0;
      round < MAX_REGEX_ROUNDS && (await this.askAboutRegexes(plan.rules));
      round++
    )
      plan = planChannelDnr(inputs, others, this.refused);
    for (const [name, problem] of layers.problems) plan.problems[name] = problem;

    try {
      await this.writer.setLayer('channels', plan.rules);
    } catch (err) {
      // Refused: the layer keeps its old scheme upgrades and the redirects this plan still asks
      // for (the writer's error says so), so a channel removed, narrowed or no longer trusted
      // never sends a page elsewhere.
      const problems = { ...(stored?.problems ?? {}) };
      for (const c of layers.channels)
        problems[c.name] = err instanceof Error ? err.message : String(err);
      const kept: ChannelDnrState = {
        key: '',
        applied: stored?.applied ?? {},
        problems,
        defaultsDisabled: stored?.defaultsDisabled ?? false,
      };
      await this.area.set({ [CHANNEL_DNR_STATE_KEY]: kept });
      return kept;
    }
    await this.rulesets.updateEnabledRulesets(
      plan.disableDefaults
        ? { disableRulesetIds: [STATIC_RULESET_ID] }
        : { enableRulesetIds: [STATIC_RULESET_ID] },
    );
    const state: ChannelDnrState = {
      key,
      applied: plan.applied,
      problems: plan.problems,
      defaultsDisabled: plan.disableDefaults,
    };
    await this.area.set({ [CHANNEL_DNR_STATE_KEY]: state });
    return state;
  }

  /** Asks the browser about the regexes of `rules` not asked before; true when it refused one. */
  private async askAboutRegexes(rules: readonly DnrRule[]): Promise<boolean> {
    if (this.regexSupport === null) return false;
    let refusedOne = false;
    for (const r of rules) {
      const regex = r.condition.regexFilter;
      if (regex === undefined) continue;
      const ask = {
        regex,
        isCaseSensitive: r.condition.isUrlFilterCaseSensitive === true,
        requireCapturing: r.action.type === 'redirect',
      };
      const key = JSON.stringify(ask);
      if (this.verdicts.has(key)) continue;
      const supported = await this.regexSupport(ask);
      this.verdicts.set(key, supported);
      if (!supported) {
        this.refused.add(regex);
        refusedOne = true;
      }
    }
    return refusedOne;
  }
}

/** Compiles again at most this often for regexes the browser refuses. */
const MAX_REGEX_ROUNDS = 3;

/** Everything the compiled channel rules depend on. */
function fingerprint(layers: ChannelLayers, mixedContent: boolean): string {
  const channels = layers.channels.map((c) => [
    c.name,
    c.timestamp,
    c.scope,
    c.destinations,
    c.replacesDefaults,
    [...c.engine.activeOverrides()].sort(),
  ]);
  return JSON.stringify({ channels, mixedContent: layers.channels.length > 0 && mixedContent });
}
