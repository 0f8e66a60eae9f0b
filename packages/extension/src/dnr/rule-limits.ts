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
    out.push({ part: partOf(layer, outcome), detail: message });
  }
  return out;
}

function partOf(layer: LayerName, outcome: RefusedOutcome | null): RuleLimit['part'] {
  switch (layer) {
    case 'settings':
      // The user's rules left out or cut (their pages still go to the rulesets); anything
      // smaller leaves the sites' entries out too.
      return outcome !== null &&
        outcome !== 'kept-upgrades' &&
        ('partial' in outcome || outcome.without === USER_RULES_LEFT_OUT)
        ? 'userRules'
        : 'sites';
    case 'overrides':
      return 'rulesets';
    case 'protection':
      return 'knownHosts';
    default:
      return 'other';
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
      message: message.slice(0, 2000),
      outcome: outcomeOf(outcome),
    });
  }
  return out;
}

function outcomeOf(v: unknown): RefusedOutcome | null {
  if (v === 'kept-upgrades') return v;
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (typeof o.without === 'string') return { without: o.without };
  if (typeof o.partial === 'string') return { partial: o.partial };
  return null;
}
