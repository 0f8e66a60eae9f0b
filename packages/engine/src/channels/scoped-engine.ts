import { type Engine, type EngineOptions, loadBundle, type RewriteOutcome } from '../match/engine.js';
import type { ActiveChannels } from './installed.js';
import { compileRulesetRegex } from '../regex/safe-regex.js';

/** One engine and the URLs it may rewrite. */
export interface ScopedLayer {
  /** Channel name, or null for the built-in defaults. */
  channel: string | null;
  /** Only URLs matching this are given to `engine`; null means every URL. */
  scope: { test(url: string): boolean } | null;
  engine: Engine;
}

export interface ScopedRewriteOutcome extends RewriteOutcome {
  /** Which channel's rulesets rewrote the URL (null: the defaults, or nothing rewrote). */
  channel: string | null;
}

/**
 * Rewrites with several engines, each confined to its scope. Layers are tried in order and
 * the first that rewrites wins, the way HTTPS Everywhere tried channel rulesets before the
 * bundled ones; a layer whose scope does not match the URL is not consulted at all.
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

  rewriteWithRuleset(url: string): ScopedRewriteOutcome {
    for (const layer of this.layers) {
      if (layer.scope !== null && !layer.scope.test(url)) continue;
      const outcome = layer.engine.rewriteWithRuleset(url);
      if (outcome.error !== undefined) return { ...outcome, channel: null };
      if (outcome.rewritten !== null) return { ...outcome, channel: layer.channel };
    }
    return { rewritten: null, ruleset: null, channel: null };
  }
}

/** Stands for a scope the regex door refused: the channel applies to no URL. */
const NOTHING = { test: (): boolean => false };

/**
 * `''` is "no restriction"; anything else is compiled once, through the regex door. A scope the
 * door refuses (parseChannelDefinition rejects such definitions; this covers stored ones)
 * admits no URL, so the channel's rulesets never run.
 */
export function compileScope(scope: string): { test(url: string): boolean } | null {
  if (scope === '') return null;
  const compiled = compileRulesetRegex(scope);
  return compiled.ok ? compiled.regex : NOTHING;
}

/**
 * The engine a client rewrites with: every active channel bundle (confined to its scope) and,
 * unless a channel replaces them, the defaults. Throws BundleError if a stored bundle does not
 * load; stored bundles were validated at install, so that means local damage.
 */
export function scopedEngineFromChannels(active: ActiveChannels, defaults: Engine | null, options: EngineOptions = {}): ScopedEngine {
  const layers: ScopedLayer[] = active.channels.map((c) => ({ channel: c.name, scope: compileScope(c.scope), engine: loadBundle(c.bundle, options) }));
  if (defaults && active.useDefaults) layers.push({ channel: null, scope: null, engine: defaults });
  return new ScopedEngine(layers);
}
