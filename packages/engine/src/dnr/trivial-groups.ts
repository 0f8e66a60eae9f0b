/** Trivial rules of all rulesets merged into shared upgradeScheme host groups. */
import { labelCountRegex, patternHostsRegex } from './hosts.js';
import { ALL_RESOURCE_TYPES } from './types.js';
import type { Planned, RulesetPlan } from './plan.js';
import { rulePriority } from './priorities.js';

/** Trivial rules of all rulesets merged: one upgradeScheme rule per (priority, host shape). */
export function trivialGroups(plans: RulesetPlan[]): Planned[] {
  const groups = new Map<string, { priority: number; regex: string; domains: Set<string> | null; patterns: string[] }>();
  const add = (key: string, priority: number, regex: string, domain: string | null, pattern?: string): void => {
    let g = groups.get(key);
    if (!g) {
      g = { priority, regex, domains: domain === null ? null : new Set(), patterns: [] };
      groups.set(key, g);
    }
    if (domain !== null) g.domains!.add(domain);
    if (pattern) g.patterns.push(pattern);
  };
  for (const plan of plans) {
    plan.rules.forEach((r, j) => {
      const priority = rulePriority(plan.band, j);
      for (const host of r.upgradeHosts ?? []) {
        const labels = host.split('.').length;
        add(`${priority}|s${labels}`, priority, labelCountRegex(labels, false, '/'), host);
      }
      for (const suffix of r.upgradeSuffixes ?? []) {
        const labels = suffix.split('.').length;
        add(`${priority}|S${labels}`, priority, labelCountRegex(labels + 1, labels >= 2, '/'), suffix);
      }
      if (!r.trivial) return;
      for (const t of plan.targets) {
        if (t.kind === 'exact') add(`${priority}|e${t.labels}`, priority, labelCountRegex(t.labels, false), t.host);
        // `*.x` with a one-label x covers exactly one more label; otherwise any depth.
        else if (t.kind === 'left') add(`${priority}|l${t.labels}`, priority, labelCountRegex(t.labels + 1, t.labels >= 2), t.suffix);
        else add(`${priority}|p`, priority, '', null, t.host);
      }
    });
  }
  const out: Planned[] = [];
  for (const g of groups.values()) {
    if (g.domains) {
      out.push({
        priority: g.priority,
        action: { type: 'upgradeScheme' },
        condition: { regexFilter: g.regex, requestDomains: [...g.domains].sort(), resourceTypes: [...ALL_RESOURCE_TYPES] },
      });
      continue;
    }
    // Right/middle wildcards: a few alternatives per regex keeps each one small.
    const unique = [...new Set(g.patterns)].sort();
    for (let i = 0; i < unique.length; i += 8) {
      out.push({
        priority: g.priority,
        action: { type: 'upgradeScheme' },
        condition: { regexFilter: patternHostsRegex(unique.slice(i, i + 8)), resourceTypes: [...ALL_RESOURCE_TYPES] },
      });
    }
  }
  return out;
}
