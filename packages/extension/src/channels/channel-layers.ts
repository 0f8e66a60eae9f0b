import { loadBundle, type Engine } from '@httpsify/engine';
import {
  channelLayer,
  type ChannelRecord,
  ScopedEngine,
  type ScopedLayer,
  selectActiveChannels,
} from '@httpsify/engine/channels';

/** One installed channel, loaded, with what confines it. */
export interface ChannelLayer {
  name: string;
  timestamp: number;
  scope: string;
  /** Hosts outside the scope its rules may send URLs to. */
  destinations: string[];
  replacesDefaults: boolean;
  engine: Engine;
}

/**
 * What rewrites URLs: the installed channels (earlier ones first, each within its scope) over
 * the defaults, unless a channel replaces them. Immutable once built: an update builds a new
 * one and swaps the reference, so a request being decided keeps the engines it started with.
 */
export interface ChannelLayers {
  channels: ChannelLayer[];
  useDefaults: boolean;
  scoped: ScopedEngine;
  /** Installed bundles that could not be loaded (local damage), by channel name. */
  problems: Map<string, string>;
}

/**
 * An imported ruleset library (src/library/): one more layer after the channels and before the
 * defaults, over every URL (scope ''), applied on Chromium through the channel DNR machinery
 * in the last channel band.
 */
export interface LibraryLayerInput {
  name: string;
  timestamp: number;
  engine: Engine;
}

export function buildChannelLayers(
  records: readonly ChannelRecord[],
  defaults: Engine,
  defaultsTimestamp?: number,
  library?: LibraryLayerInput | null,
): ChannelLayers {
  const active = selectActiveChannels(records, defaultsTimestamp);
  const channels: ChannelLayer[] = [];
  const problems = new Map<string, string>();
  for (const c of active.channels) {
    try {
      // Full verification: the bytes come from storage, which may have been damaged since.
      channels.push({
        name: c.name,
        timestamp: c.timestamp,
        scope: c.scope,
        destinations: c.destinations,
        replacesDefaults: c.replacesDefaults,
        engine: loadBundle(c.bundle),
      });
    } catch (err) {
      problems.set(
        c.name,
        `the installed bundle does not load (${err instanceof Error ? err.message : String(err)}); it is not used`,
      );
    }
  }
  if (library)
    channels.push({
      name: library.name,
      timestamp: library.timestamp,
      scope: '',
      destinations: [],
      replacesDefaults: false,
      engine: library.engine,
    });
  // A replacing channel whose bundle failed to load replaces nothing.
  const useDefaults = !channels.some((c) => c.replacesDefaults);
  const layers: ScopedLayer[] = channels.map((c) =>
    channelLayer(c.name, c.scope, c.destinations, c.engine),
  );
  if (useDefaults) layers.push({ channel: null, scope: null, engine: defaults });
  return { channels, useDefaults, scoped: new ScopedEngine(layers), problems };
}

/**
 * The user's per-ruleset switches and the mixed-content flag apply to channel rulesets by name,
 * as they do to the defaults (a channel that ships an updated "Example" ruleset keeps the
 * user's choice for "Example"). `previous` lists the overrides applied before, to undo removed ones.
 */
export function applyRulesetChoices(
  layers: ChannelLayers,
  overrides: Readonly<Record<string, boolean>>,
  previous: Readonly<Record<string, boolean>>,
  mixedContent: boolean,
): void {
  for (const { engine } of layers.channels) {
    for (const name of Object.keys(previous))
      if (!(name in overrides) && engine.rulesetIdsByName(name).length > 0)
        engine.setActive(name, undefined);
    for (const [name, on] of Object.entries(overrides))
      if (engine.rulesetIdsByName(name).length > 0) engine.setActive(name, on);
    engine.setMixedContent(mixedContent);
  }
}

/**
 * `<securecookie>` across the layers: a layer decides only for hosts inside its scope (tested
 * as `http://<host>/`, the URL its rulesets would upgrade), and any layer that says "secure" wins,
 * as HTTPS Everywhere pooled the rulesets of all channels.
 */
export function layersSecureCookie(
  layers: ChannelLayers,
  cookie: { domain: string; name: string },
): boolean {
  const url = `http://${cookie.domain.replace(/^\.+/, '')}/`;
  return layers.scoped.layersFor(url).some((layer) => layer.engine.shouldSecureCookie(cookie));
}

/** Channel layers whose scope admits a host (for the popup's "rulesets on this page"). */
export function channelsForHost(layers: ChannelLayers, host: string): ChannelLayer[] {
  const allowed = new Set(layers.scoped.layersFor(`http://${host}/`).map((l) => l.channel));
  return layers.channels.filter((c) => allowed.has(c.name));
}
