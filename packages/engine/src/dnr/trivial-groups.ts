/** Trivial rules of all rulesets merged into shared upgradeScheme host groups. */
import { labelCountRegex, oneBelowRegex, patternHostsRegex } from './hosts.js';
import { ALL_RESOURCE_TYPES } from './types.js';
import type { Planned, RulesetPlan } from './plan.js';
import { rulePriority } from './priorities.js';

interface HostGroup {
  priority: number;
  regex: string;
  /** Exact hosts (`e`, `s` shapes) or `*.` suffixes (`l`, `S`); null for right/middle wildcards. */
  domains: Set<string> | null;
  patterns: string[];
  /**
   * What must follow an exact host for a literal rule to match what the regex does (`^`: port,
   * path, query or end; `/`: the path); null when only the regex can say it (`*.` suffixes).
   */
  literalEnd: '^' | '/' | null;
}

/** Trivial rules of all rulesets by (priority, host shape). */
function collectGroups(plans: readonly RulesetPlan[]): Map<string, HostGroup> {
  const groups = new Map<string, HostGroup>();
  const add = (
    key: string,
    priority: number,
    regex: string,
    literalEnd: HostGroup['literalEnd'],
    domain: string | null,
    pattern?: string,
  ): void => {
    let g = groups.get(key);
    if (!g) {
      g = {
        priority,
        regex,
        domains: domain === null ? null : new Set(),
        patterns: [],
        literalEnd,
      };
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
        add(`${priority}|s${labels}`, priority, labelCountRegex(labels, false, '/'), '/', host);
      }
      for (const suffix of r.upgradeSuffixes ?? []) {
        const labels = suffix.split('.').length;
        add(
          `${priority}|S${labels}`,
          priority,
          labelCountRegex(labels + 1, labels >= 2, '/'),
          null,
          suffix,
        );
      }
      for (const { suffix, label } of r.upgradeOneBelow ?? []) {
        const labels = suffix.split('.').length;
        add(
          `${priority}|o${labels}|${label}`,
          priority,
          oneBelowRegex(labels, label),
          null,
          suffix,
        );
      }
      if (!r.trivial) return;
      for (const t of plan.targets) {
        if (t.kind === 'exact')
          add(`${priority}|e${t.labels}`, priority, labelCountRegex(t.labels, false), '^', t.host);
        // `*.x` with a one-label x covers exactly one more label; otherwise any depth.
        else if (t.kind === 'left')
          add(
            `${priority}|l${t.labels}`,
            priority,
            labelCountRegex(t.labels + 1, t.labels >= 2),
            null,
            t.suffix,
          );
        else add(`${priority}|p`, priority, '', null, null, t.host);
      }
    });
  }
  return groups;
}

/**
 * The exact-host groups to spell as one literal rule per host instead of a regex: the smallest
 * first, as long as their hosts fit in `ruleRoom` rules. A regex saved this way goes to a
 * ruleset that has no other form.
 */
export function literalGroupKeys(plans: readonly RulesetPlan[], ruleRoom: number): Set<string> {
  const sizes = [...collectGroups(plans)]
    .filter(([, g]) => g.literalEnd !== null && g.domains !== null)
    .map(([key, g]) => ({ key, size: g.domains!.size }))
    .sort((a, b) => a.size - b.size || (a.key < b.key ? -1 : 1));
  const out = new Set<string>();
  let room = ruleRoom;
  for (const { key, size } of sizes) {
    // A literal rule per host costs rules, the regex it replaces one of them.
    if (size - 1 > room) break;
    room -= size - 1;
    out.add(key);
  }
  return out;
}

/**
 * Trivial rules of all rulesets merged: one upgradeScheme rule per (priority, host shape), or
 * for the groups in `literal`, one regex-free rule per host (`|http://host^` on that domain:
 * the anchor and the separator after the host admit no other host, exactly as the label-count
 * regex does).
 */
export function trivialGroups(
  plans: readonly RulesetPlan[],
  literal: ReadonlySet<string> = new Set(),
): Planned[] {
  const out: Planned[] = [];
  for (const [key, g] of collectGroups(plans)) {
    if (g.domains && g.literalEnd !== null && literal.has(key)) {
      for (const host of [...g.domains].sort()) {
        out.push({
          priority: g.priority,
          action: { type: 'upgradeScheme' },
          condition: {
            urlFilter: `|http://${host}${g.literalEnd}`,
            requestDomains: [host],
            resourceTypes: [...ALL_RESOURCE_TYPES],
          },
        });
      }
      continue;
    }
    if (g.domains) {
      out.push({
        priority: g.priority,
        action: { type: 'upgradeScheme' },
        condition: {
          regexFilter: g.regex,
          requestDomains: [...g.domains].sort(),
          resourceTypes: [...ALL_RESOURCE_TYPES],
        },
      });
      continue;
    }
    // Right/middle wildcards: a few alternatives per regex keeps each one small.
    const unique = [...new Set(g.patterns)].sort();
    for (let i = 0; i < unique.length; i += 8) {
      out.push({
        priority: g.priority,
        action: { type: 'upgradeScheme' },
        condition: {
          regexFilter: patternHostsRegex(unique.slice(i, i + 8)),
          resourceTypes: [...ALL_RESOURCE_TYPES],
        },
      });
    }
  }
  return out;
}
