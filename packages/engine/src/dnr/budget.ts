/** Spending the regex budget over the rulesets' plans. */
import type { Ruleset } from '../model/ruleset.js';
import type { DnrOmission } from './compile.js';
import type { RulesetPlan } from './plan.js';
import { rulesetRegexOrNull } from '../regex/safe-regex.js';

export type Omitter = (
  ruleset: Ruleset,
  what: DnrOmission['what'],
  index: number,
  source: string,
  reason: string,
) => void;

/**
 * How many of a ruleset's sample URLs (`http://host/` of each exact target, and its test URLs:
 * the authors' sample of the URLs it sees) its regexes serve: every URL it rewrites when its
 * exclusions need regexes (without them it is left out whole), else the URLs whose rewriting
 * rule needs one. A URL rewritten without a regex costs nothing, so it weighs nothing.
 */
function regexServed(plan: RulesetPlan): number {
  const known = served.get(plan);
  if (known !== undefined) return known;
  const n = countServed(plan);
  served.set(plan, n);
  return n;
}

/** The budget is spent several times over the same plans (compile.ts). */
const served = new WeakMap<RulesetPlan, number>();

function countServed(plan: RulesetPlan): number {
  const { ruleset } = plan;
  const samples = [
    ...plan.targets.flatMap((t) => (t.kind === 'exact' ? [`http://${t.host}/`] : [])),
    ...ruleset.tests.map((t) => t.url),
  ];
  const allowsNeedRegex = plan.allows.some((r) => r.condition.regexFilter !== undefined);
  const exclusions = ruleset.exclusions.map((e) => rulesetRegexOrNull(e.pattern));
  const froms = ruleset.rules.map((r) => rulesetRegexOrNull(r.from, { use: 'replace', to: r.to }));
  let n = 0;
  for (const url of samples) {
    if (exclusions.some((re) => re?.test(url) === true)) continue;
    const j = ruleset.rules.findIndex(
      (r, k) => froms[k] !== null && froms[k]!.replace(url, r.to) !== url,
    );
    if (j < 0) continue;
    if (allowsNeedRegex || (plan.rules[j]?.regexes ?? 0) > 0) n++;
  }
  // Half a URL more, so a ruleset whose sample misses what its regexes do still ranks above none.
  return n + 0.5;
}

/**
 * Gives `budget` regexes to the plans, the rulesets that serve the most sample URLs per regex
 * first (regexServed). A ruleset that does not fit keeps the rules before
 * its first one that does not (its exclusions widened if that saves them). Rewrites `plans` in
 * place and returns how many rulesets were left out whole.
 */
export function spendRegexBudget(plans: RulesetPlan[], budget: number, omit: Omitter): number {
  let skipped = 0;
  // (Rulesets that need no regex of their own always stay; if even the host groups do not fit,
  // the report says the output is over the limit.)
  const density = plans.map((p) => (p.regexes === 0 ? Infinity : regexServed(p) / p.regexes));
  const order = plans
    .map((_, i) => i)
    .sort((a, b) => density[b]! - density[a]! || plans[a]!.regexes - plans[b]!.regexes || a - b);
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
      const allows = [
        ...plan.allows.filter((r) => !swap.has(r)),
        ...plan.widenable.flatMap((w) => w.widened.rules),
      ];
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
      omit(
        plan.ruleset,
        'ruleset',
        0,
        plan.ruleset.name,
        'regex budget exhausted (its exclusions need regexes)',
      );
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
      omit(
        plan.ruleset,
        'rule',
        j,
        plan.ruleset.rules[j]!.from,
        j === kept ? 'regex budget exhausted' : 'follows a rule that did not fit',
      );
    }
    plans[i] = { ...plan, rules: plan.rules.slice(0, kept) };
  }
  return skipped;
}
