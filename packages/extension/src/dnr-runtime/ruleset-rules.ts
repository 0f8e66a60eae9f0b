/**
 * Chromium: the dynamic rules of the rulesets beyond the static defaults, kept in line with each
 * other: the user's switches for the defaults ("overrides" layer) and the installed channels and
 * library ("channels" layer). A channel that replaces the defaults switches the static ruleset
 * off (channel-dnr-runtime.ts); the switches for the defaults then compile to nothing.
 */
import type { Engine } from '@httpsify/engine';
import type { ChannelDnrRuntime } from './channel-dnr-runtime.js';
import { LIBRARY_LAYER_NAME } from '../library/library-store.js';
import type { ChannelLayers } from '../channels/channel-layers.js';
import { syncOverrides } from '../dnr/override-rules.js';
import type { RuleWriter } from '../dnr/rule-writer.js';

/** What the rules are compiled from: the settings' rulesets (the controller, from above). */
export interface RulesetSources {
  readonly channels: ChannelLayers;
  readonly settings: { readonly mixedContent: boolean };
  readonly engine: Engine;
}

export class RulesetRules {
  /** False while an update channel replaces the default rulesets (their static ruleset is off). */
  private defaultsInUse = true;

  constructor(
    private readonly writer: RuleWriter,
    private readonly channels: ChannelDnrRuntime,
    /** The dynamic rules changed (what reads them, the cookies' DNR check, starts afresh). */
    private readonly changed: () => void,
    /** The handoff page's address: main frames of switched-off rulesets' hosts go there. */
    private readonly handoffPage: string,
  ) {}

  /** The default engine's switches (or mixed content) changed: recompile the overrides. */
  async overridesChanged(engine: Engine): Promise<void> {
    await syncOverrides(this.writer, engine, this.handoffPage, this.defaultsInUse);
    this.changed();
  }

  /** Installed channels (or the user's switches for their rulesets) changed: recompile their rules. */
  async channelsChanged(c: RulesetSources): Promise<void> {
    const state = await this.channels.sync(c.channels, c.settings.mixedContent);
    if (this.defaultsInUse === state.defaultsDisabled) {
      this.defaultsInUse = !state.defaultsDisabled;
      await syncOverrides(this.writer, c.engine, this.handoffPage, this.defaultsInUse);
    }
    this.changed();
  }

  /**
   * After an install or update: dynamic rules survive restarts, so they are rebuilt from storage
   * (the channel rules too: this version may compile them differently).
   */
  async rebuild(engine: Engine, controller: () => Promise<RulesetSources>): Promise<void> {
    await syncOverrides(this.writer, engine, this.handoffPage, this.defaultsInUse);
    await this.channels.forgetState();
    await this.channelsChanged(await controller());
    this.changed();
  }

  /** The imported library's rulesets whose page loads alone go to the engine (handoff page). */
  async libraryPageLoadsOnly(): Promise<string[]> {
    return (
      (await this.channels.state())?.applied[LIBRARY_LAYER_NAME]?.coverage?.pageLoadsOnly ?? []
    );
  }

  /** Per channel (and the library), why Chromium does not (fully) apply it. */
  async problems(): Promise<Record<string, string>> {
    return { ...(await this.channels.state())?.problems };
  }
}
