/**
 * What of the settings Chromium's rule limits leave out, for the options page: the writer's
 * refusals (rule-writer.ts) by the part of the settings a person knows them as. The channels'
 * own refusals are not here: the options page shows them with each channel.
 */
import type { LayerName } from './layout.js';
import type { RefusedOutcome } from './rule-writer.js';
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
      // Without the user's rules the sites still hold; anything less leaves sites out too.
      return outcome !== null &&
        outcome !== 'kept-still-asked' &&
        outcome.without === USER_RULES_LEFT_OUT
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
