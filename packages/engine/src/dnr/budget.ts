/** Spending the regex budget over the rulesets' plans. */
import type { Ruleset } from '../model/ruleset.js';
import type { DnrOmission } from './compile.js';
import type { RulesetPlan } from './plan.js';

export type Omitter = (ruleset: Ruleset, what: DnrOmission['what'], index: number, source: string, reason: string) => void;

/**
 * Gives `budget` regexes to the plans, the rulesets that serve the most per regex first: their
 * targets and test URLs (the authors' sample of the URLs a ruleset sees, and most of them are
 * under `*.` targets, which count once). A ruleset that does not fit keeps the rules before
 * its first one that does not (its exclusions widened if that saves them). Rewrites `plans` in
 * place and returns how many rulesets were left out whole.
 */
export function spendRegexBudget(plans: RulesetPlan[], budget: number, omit: Omitter): number {
  let skipped = 0;
  // (Rulesets that need no regex of their own always stay; if even the host groups do not fit,
  // the report says the output is over the limit.)
  const density = (p: RulesetPlan) => (p.regexes === 0 ? Infinity : (p.ruleset.targets.length + p.ruleset.tests.length) / p.regexes);
  const order = plans.map((_, i) => i).sort((a, b) => density(plans[b]!) - density(plans[a]!) || plans[a]!.regexes - plans[b]!.regexes || a - b);
  for (const i of order) {
    let plan = plans[i]!;
    if (plan.regexes <= budget) {
      budget -= plan.regexes;
      continue;
    }
    let allowRegexes = plan.allows.filter((r) => r.condition.regexFilter !== undefined).length;
    if (allowRegexes > budget && allowRegexes - plan.widenable.length <= budget) {
      // Out of regexes for the exclusions: their wider, regex-free stand-ins keep the rest.
      const swap = new Set(plan.widenable.flatMap((w) => w.exact));
      const allows = [...plan.allows.filter((r) => !swap.has(r)), ...plan.widenable.flatMap((w) => w.widened.rules)];
      for (const w of plan.widenable) {
        omit(
          plan.ruleset,
          'exclusion',
          w.index,
          plan.ruleset.exclusions[w.index]!.pattern,
          `regex budget exhausted; widened to all URLs starting with ${w.widened.prefixes.join(', ')}`,
        );
      }
      plans[i] = plan = { ...plan, allows, widenable: [] };
      allowRegexes = allows.filter((r) => r.condition.regexFilter !== undefined).length;
    }
    if (allowRegexes > budget) {
      omit(plan.ruleset, 'ruleset', 0, plan.ruleset.name, 'regex budget exhausted (its exclusions need regexes)');
      plans[i] = { ...plan, allows: [], widenable: [], rules: [], regexes: 0 };
      skipped++;
      continue;
    }
    budget -= allowRegexes;
    let kept = 0;
    for (; kept < plan.rules.length; kept++) {
      const r = plan.rules[kept]!;
      if (r.regexes > budget) break;
      budget -= r.regexes;
    }
    for (let j = kept; j < plan.rules.length; j++) {
      omit(plan.ruleset, 'rule', j, plan.ruleset.rules[j]!.from, j === kept ? 'regex budget exhausted' : 'follows a rule that did not fit');
    }
    plans[i] = { ...plan, rules: plan.rules.slice(0, kept) };
  }
  return skipped;
}
