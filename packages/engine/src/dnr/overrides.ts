import type { Ruleset } from '../model/ruleset.js';
import { compileDnr, rulesetCeilingPriority, type DnrReport } from './compile.js';
import { AFTER_HOST_DOTS, classifyTarget, labelCountRegex, patternHostsRegex } from './hosts.js';
import { ALL_RESOURCE_TYPES, DNR_LIMITS, type DnrRule } from './types.js';

export interface DnrOverrides {
  rules: DnrRule[];
  report: DnrReport;
}

/**
 * Dynamic rules for user choices on top of the static default rules: rulesets switched on
 * (off by default) are compiled as usual; rulesets switched off get `allow` rules for their
 * targets at their own ceiling priority, so their static rules (shared with other rulesets in
 * merged host groups) stop firing while more specific rulesets keep working.
 */
export function compileDnrOverrides(
  enable: Ruleset[],
  disable: Ruleset[],
  options: { firstId?: number; regexLimit?: number } = {},
): DnrOverrides {
  const firstId = options.firstId ?? 1;
  const allows: Omit<DnrRule, 'id'>[] = [];
  for (const rs of disable) {
    const priority = rulesetCeilingPriority(rs);
    if (priority === null) continue;
    for (const t of rs.targets) {
      const c = classifyTarget(t.host);
      if (!c) continue;
      // Trailing dots too: the static rules take them off (trailing-dots.ts), then would upgrade.
      const condition =
        c.kind === 'exact'
          ? {
              regexFilter: labelCountRegex(c.labels, false, AFTER_HOST_DOTS),
              requestDomains: [c.host],
            }
          : c.kind === 'left'
            ? {
                regexFilter: labelCountRegex(c.labels + 1, c.labels >= 2, AFTER_HOST_DOTS),
                requestDomains: [c.suffix],
              }
            : { regexFilter: patternHostsRegex([c.host], AFTER_HOST_DOTS) };
      allows.push({
        priority,
        action: { type: 'allow' },
        condition: { ...condition, resourceTypes: [...ALL_RESOURCE_TYPES] },
      });
    }
  }
  const regexLimit = (options.regexLimit ?? DNR_LIMITS.regexRules) - allows.length;
  const compiled = compileDnr(enable, {
    isActive: () => true,
    regexLimit: Math.max(0, regexLimit),
    firstId: firstId + allows.length,
  });
  const rules = [...allows.map((r, i) => ({ id: firstId + i, ...r })), ...compiled.rules];
  // Dynamic rules have their own caps: 30,000 in all, 5,000 "unsafe" (redirect) ones.
  const overLimits = [...compiled.report.overLimits];
  const unsafe = rules.filter((r) => r.action.type === 'redirect').length;
  if (unsafe > DNR_LIMITS.unsafeDynamicRules)
    overLimits.push(
      `${unsafe} redirect rules > ${DNR_LIMITS.unsafeDynamicRules} unsafe dynamic rules`,
    );
  if (rules.length > DNR_LIMITS.dynamicRules)
    overLimits.push(`${rules.length} rules > ${DNR_LIMITS.dynamicRules} dynamic rules`);
  return {
    rules,
    report: {
      ...compiled.report,
      ruleCount: rules.length,
      regexRuleCount: rules.filter((r) => r.condition.regexFilter).length,
      overLimits,
    },
  };
}
