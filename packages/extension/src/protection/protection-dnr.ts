import type { Engine } from '@httpsify/engine';
import { ALL_RESOURCE_TYPES } from '@httpsify/engine/dnr';
import { PROTECTION_PRIORITY } from '../dnr/layout.js';
import type { RuleBody } from '../dnr/rules.js';
import { inHandoffScope, type HandoffScope } from '../dnr/handoff-rules.js';

/*
 * Chromium rules of the protection mode. Their priority (PROTECTION_PRIORITY, the lowest but
 * HTTPS-first's) and layer live with every other rule's in dnr/layout.ts: every
 * ruleset rule, exclusion, site setting and loop-guard allow outranks them, so rulesets still
 * apply first.
 */
/** The most label-count groups (one regex rule each); longer names are not upgraded this way. */
export const MAX_LABELS = 12;

const SUBRESOURCE_TYPES = ALL_RESOURCE_TYPES.filter((t) => t !== 'main_frame');

/**
 * `upgradeScheme` for the known hosts' subresources. `requestDomains` also matches every
 * subdomain, so hosts are grouped by label count and each group's rule carries a regex that
 * admits exactly that many labels: `a.example.com` is not upgraded because `example.com` is
 * known. Any port (the upgrade keeps a non-default one, as the rulesets do).
 */
export function knownHttpsRules(hosts: readonly string[]): RuleBody[] {
  const groups = new Map<number, string[]>();
  for (const h of hosts) {
    const labels = h.split('.').length;
    if (labels < 2 || labels > MAX_LABELS) continue;
    groups.set(labels, [...(groups.get(labels) ?? []), h]);
  }
  const rules: RuleBody[] = [];
  for (const [labels, domains] of [...groups].sort((a, b) => a[0] - b[0])) {
    rules.push({
      priority: PROTECTION_PRIORITY,
      action: { type: 'upgradeScheme' },
      condition: {
        // Trailing dots name the same host (decide() reads it without them).
        regexFilter: `^http://[^./:@]+(\\.[^./:@]+){${labels - 1}}\\.*(:[0-9]+)?/`,
        requestDomains: [...domains].sort(),
        resourceTypes: [...SUBRESOURCE_TYPES],
      },
    });
  }
  return rules;
}

/**
 * Whether a known host must get no upgrade rule because DNR may not honour a ruleset's
 * exclusion there: an active default ruleset covering it has exclusions and did not compile
 * completely (the host is in the handoff scope; an exclusion DNR cannot express leaves its
 * whole ruleset out). Navigations are safe (the handoff page asks the engine); a subresource
 * rule at PROTECTION_PRIORITY would find no `allow` above it and upgrade the excluded URLs.
 */
export function exclusionsMayBeMissed(engine: Engine, scope: HandoffScope, host: string): boolean {
  return (
    inHandoffScope(scope, host) &&
    engine.candidateRulesets(host).some((id) => engine.isActive(id) && engine.hasExclusions(id))
  );
}
