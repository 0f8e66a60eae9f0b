/**
 * What of the settings Chromium's rule limits leave out, for the options page: the writer's
 * refusals (rule-writer.ts) by the part of the settings a person knows them as. The channels'
 * own refusals are not here: the options page shows them with each channel.
 */
import type { LayerName } from './layout.js';
import type { LayerRefusal, RefusedOutcome } from './rule-writer.js';
import { LAYER_NAMES } from './layout.js';
import { USER_RULES_LEFT_OUT } from './settings-rules.js';

export interface RuleLimit {
  part: 'userRules' | 'sites' | 'rulesets' | 'knownHosts' | 'other';
  /** The writer's own words, for "Details". */
  detail: string;
}

export function ruleLimitsOf(
  refusals: readonly { layer: LayerName; message: string; outcome: RefusedOutcome | null }[],
): RuleLimit[] {
  const out: RuleLimit[] = [];
  for (const { layer, message, outcome } of refusals) {
    if (layer === 'channels') continue;
    for (const part of partsOf(layer, outcome)) out.push({ part, detail: message });
  }
  return out;
}

/** What a person knows the left-out part as: one layer's refusal may leave out two. */
function partsOf(layer: LayerName, outcome: RefusedOutcome | null): RuleLimit['part'][] {
  switch (layer) {
    case 'settings':
      if (outcome === null || outcome === 'kept-upgrades') return ['other'];
      if ('partial' in outcome || outcome.without === USER_RULES_LEFT_OUT) return ['userRules'];
      // Smaller still: the sites' entries and the user's rules both.
      return ['sites', 'userRules'];
    case 'overrides':
      return ['rulesets'];
    case 'protection':
      return ['knownHosts'];
    default:
      return ['other'];
  }
}

/**
 * The refusals stored by an earlier run of the worker, checked: storage is the extension's own,
 * but may hold anything an older version (or damage) left. Anything unlike one is dropped.
 */
export function parseRefusals(stored: unknown): LayerRefusal[] {
  if (!Array.isArray(stored)) return [];
  const out: LayerRefusal[] = [];
  for (const r of stored.slice(0, LAYER_NAMES.length)) {
    if (typeof r !== 'object' || r === null) continue;
    const { layer, message, outcome } = r as Record<string, unknown>;
    if (!(LAYER_NAMES as readonly unknown[]).includes(layer) || typeof message !== 'string')
      continue;
    out.push({
      layer: layer as LayerName,
      message: message.slice(0, MAX_TEXT),
      outcome: outcomeOf(outcome),
    });
  }
  return out;
}

/** The longest text kept of a stored refusal (the writer's own are a few hundred characters). */
const MAX_TEXT = 2_000;

function outcomeOf(v: unknown): RefusedOutcome | null {
  if (v === 'kept-upgrades') return v;
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (typeof o.without === 'string') return { without: o.without.slice(0, MAX_TEXT) };
  if (typeof o.partial === 'string') return { partial: o.partial.slice(0, MAX_TEXT) };
  return null;
}
