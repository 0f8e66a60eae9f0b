import { ALL_RESOURCE_TYPES, type DnrRule } from '@httpsify/engine/dnr';

/*
 * Chromium rules of the protection mode, with their ids and priorities in one place.
 *
 * Priorities (see ui-dnr-rules.ts for the rest): rulesets reach ~10,500, channels and user
 * rules sit above them, the loop guard's allow at 1,000,000, disabled sites at 1,500,000. The
 * mode's own upgrades are the lowest of all so that every ruleset rule, exclusion, site
 * setting and loop-guard allow outranks them ("rulesets still apply first"):
 *   1  HTTPS_FIRST_PRIORITY: every top-level http:// navigation;
 *   2  KNOWN_HTTPS_PRIORITY: subresources of hosts that answered over HTTPS;
 *   3  HTTPS_FIRST_EXEMPT_PRIORITY: main-frame allows for local names and sites left on
 *      "rulesets only" (such sites are also left out of the known hosts).
 */
export const KNOWN_HTTPS_PRIORITY = 2;
/**
 * Dynamic rule ids of the known-hosts rules, [BASE, LIMIT): the range i14-chromium's
 * dnr-layout.ts reserves for this mode (the settings' rules lie below).
 */
export const PROTECTION_RULE_ID_BASE = 6_500_000;
export const PROTECTION_RULE_ID_LIMIT = 7_000_000;
/** The most label-count groups (one regex rule each); longer names are not upgraded this way. */
export const MAX_LABELS = 12;

const SUBRESOURCE_TYPES = ALL_RESOURCE_TYPES.filter((t) => t !== 'main_frame');

/**
 * `upgradeScheme` for the known hosts' subresources. `requestDomains` also matches every
 * subdomain, so hosts are grouped by label count and each group's rule carries a regex that
 * admits exactly that many labels: `a.example.com` is not upgraded because `example.com` is
 * known. Any port (the upgrade keeps a non-default one, as the rulesets do).
 */
export function knownHttpsRules(hosts: readonly string[]): DnrRule[] {
  const groups = new Map<number, string[]>();
  for (const h of hosts) {
    const labels = h.split('.').length;
    if (labels < 2 || labels > MAX_LABELS) continue;
    groups.set(labels, [...(groups.get(labels) ?? []), h]);
  }
  const rules: DnrRule[] = [];
  for (const [labels, domains] of [...groups].sort((a, b) => a[0] - b[0])) {
    rules.push({
      id: PROTECTION_RULE_ID_BASE + rules.length,
      priority: KNOWN_HTTPS_PRIORITY,
      action: { type: 'upgradeScheme' },
      condition: {
        regexFilter: `^http://[^./:@]+(\\.[^./:@]+){${labels - 1}}(:[0-9]+)?/`,
        requestDomains: [...domains].sort(),
        resourceTypes: [...SUBRESOURCE_TYPES],
      },
    });
  }
  return rules;
}
