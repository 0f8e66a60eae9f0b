import {
  type Engine,
  type EngineOptions,
  loadBundle,
  type RewriteOutcome,
} from '../match/engine.js';
import { type DestinationPolicy, destinationPolicy } from './destinations.js';
import type { ActiveChannels } from './installed.js';
import { compileScope, type ScopeMatcher } from './scope.js';

export { compileScope, type ScopeMatcher };

/** One engine and the URLs it may rewrite. */
export interface ScopedLayer {
  /** Channel name, or null for the built-in defaults. */
  channel: string | null;
  /** Only URLs matching this are given to `engine`; null means every URL. */
  scope: ScopeMatcher | null;
  /** Where its rewrites may go; null means anywhere (the defaults). */
  destinations?: DestinationPolicy | null;
  engine: Engine;
}

export interface ScopedRewriteOutcome extends RewriteOutcome {
  /** Which channel's rulesets rewrote the URL (null: the defaults, or nothing rewrote). */
  channel: string | null;
  /** A channel rewrote the URL to a destination outside its scope and list; that rewrite was not used. */
  refused?: { channel: string; rewritten: string; ruleset: string | null };
}

/**
 * Rewrites with several engines, each confined to its scope. Layers are tried in order and
 * the first that rewrites wins, the way HTTPS Everywhere tried channel rulesets before the
 * bundled ones; a layer whose scope does not match the URL is not consulted at all, and a
 * channel's rewrite that leaves its allowed destinations is dropped (the next layer decides).
 */
export class ScopedEngine {
  readonly layers: readonly ScopedLayer[];

  constructor(layers: readonly ScopedLayer[]) {
    this.layers = layers;
  }

  /** Layers allowed to act on `url`. */
  layersFor(url: string): ScopedLayer[] {
    return this.layers.filter((layer) => layer.scope === null || layer.scope.test(url));
  }

  rewrite(url: string): string | null {
    return this.rewriteWithRuleset(url).rewritten;
  }

  /** The active ruleset, in a layer allowed to act on `url`, that excludes it (Engine.excludedBy), or null. */
  excludedBy(url: string): string | null {
    for (const layer of this.layers) {
      if (layer.scope !== null && !layer.scope.test(url)) continue;
      const name = layer.engine.excludedBy(url);
      if (name !== null) return name;
    }
    return null;
  }

  rewriteWithRuleset(url: string): ScopedRewriteOutcome {
    let refused: ScopedRewriteOutcome['refused'];
    for (const layer of this.layers) {
      if (layer.scope !== null && !layer.scope.test(url)) continue;
      const outcome = layer.engine.rewriteWithRuleset(url);
      if (outcome.error !== undefined) return { ...outcome, channel: null };
      if (outcome.rewritten === null) continue;
      if (
        layer.channel !== null &&
        layer.destinations &&
        !layer.destinations.allows(outcome.rewritten)
      ) {
        refused ??= {
          channel: layer.channel,
          rewritten: outcome.rewritten,
          ruleset: outcome.ruleset,
        };
        continue;
      }
      return refused
        ? { ...outcome, channel: layer.channel, refused }
        : { ...outcome, channel: layer.channel };
    }
    return refused
      ? { rewritten: null, ruleset: null, channel: null, refused }
      : { rewritten: null, ruleset: null, channel: null };
  }
}

/** The layer of one installed channel. */
export function channelLayer(
  name: string,
  scope: string,
  destinations: readonly string[],
  engine: Engine,
): ScopedLayer {
  return {
    channel: name,
    scope: compileScope(scope),
    destinations: destinationPolicy(scope, destinations),
    engine,
  };
}

/**
 * The engine a client rewrites with: every active channel bundle (confined to its scope) and,
 * unless a channel replaces them, the defaults. Throws BundleError if a stored bundle does not
 * load; stored bundles were validated at install, so that means local damage.
 */
export function scopedEngineFromChannels(
  active: ActiveChannels,
  defaults: Engine | null,
  options: Omit<EngineOptions, 'trustBundledRegexVerdicts'> = {},
): ScopedEngine {
  // A channel's publisher is an outsider: its patterns are judged here, whatever its bundle says.
  const channelOptions: EngineOptions = { ...options, trustBundledRegexVerdicts: false };
  const layers: ScopedLayer[] = active.channels.map((c) =>
    channelLayer(c.name, c.scope, c.destinations, loadBundle(c.bundle, channelOptions)),
  );
  if (defaults && active.useDefaults) layers.push({ channel: null, scope: null, engine: defaults });
  return new ScopedEngine(layers);
}
