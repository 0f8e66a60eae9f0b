/**
 * Rulesets to Chromium declarativeNetRequest rules: plans each ruleset (exclusions.ts, rules.ts,
 * fences.ts), spends the regex budget (budget.ts), merges trivial rules (trivial-groups.ts) and
 * reports what was left out. Priorities: priorities.ts.
 */
import { isDefaultActive, isTrivialRule, type Ruleset } from '../model/ruleset.js';
import { classifyTarget, targetCovers, type ClassifiedTarget } from './hosts.js';
import { hasLookaround } from './lookaround.js';
import { ALL_RESOURCE_TYPES, DNR_LIMITS, type DnrRule } from './types.js';
import type { ExclusionPlan, PlanContext, Planned, RulePlan, RulesetPlan } from './plan.js';
import {
  ALLOW_PRIORITY,
  BAND_WIDTH,
  bandOf,
  MAX_RULES_PER_RULESET,
  rulePriority,
} from './priorities.js';
import {
  planExclusion,
  planLookaroundExclusion,
  prefixSetsIndependent,
  widenExclusion,
  widenWithoutLookarounds,
} from './exclusions.js';
import { planLookaroundRule, planRule } from './rules.js';
import { literalGroupKeys, trivialGroups } from './trivial-groups.js';
import { spendRegexBudget } from './budget.js';
import { mergeRegexRules } from './merge-regexes.js';
import { groupHostRedirects, redirectGroupsNeeded } from './redirect-groups.js';
import { dottedGroups, shapeKey, trailingDotRule } from './trailing-dots.js';
import { fragmentDependentGroups } from '../regex/fragment-groups.js';

/**
 * A `to` that copies a group able to reach the URL's end anywhere but once at its end: the
 * reference's result then depends on the fragment, which DNR never sees (missed, never wrong).
 */
const FRAGMENT_DEPENDENT =
  'replacement copies a group that can reach into the fragment, which DNR never sees';

export interface DnrCompileOptions {
  /** Which rulesets to compile; default: the reference default (no `default_off`, no `platform`). */
  isActive?: (ruleset: Ruleset) => boolean;
  /** Regex rules allowed in the output (Chromium: 1,000 per static or dynamic+session set). */
  regexLimit?: number;
  /** RE2 instructions (re2-size.ts) above which a regex is taken to be over Chromium's 2 KB. */
  maxRegexInstructions?: number;
  /**
   * Rules allowed in the output (static: 30,000 guaranteed); the room left is spent on literal
   * host rules that save regexes when the regex limit runs short.
   */
  ruleLimit?: number;
  /**
   * Redirect rules allowed in the output (Chromium: 5,000 "unsafe" dynamic rules; static sets
   * have no such limit). Host-swap redirects are grouped to fit (redirect-groups.ts), one regex
   * of the budget per group. Unset: no limit.
   */
  redirectLimit?: number;
  /**
   * Regexes the browser said it refuses (`isRegexSupported`, asked for what an earlier compile
   * gave): a ruleset that needs one is left out, and no merge makes one.
   */
  refusedRegexes?: ReadonlySet<string>;
  /** First rule id (ids are consecutive). */
  firstId?: number;
  /**
   * Add the rule that takes trailing dots off the targets' hosts (trailing-dots.ts), for one
   * regex of the budget. For the static set; the dynamic sets leave it out.
   */
  trailingDots?: boolean;
  /**
   * For a progress display: `plan` as each ruleset's plan starts (`done` of `total` rulesets),
   * then `fit` as each round of fitting the plans to the limits starts (`done` of at most
   * `total` rounds; fewer when one fits exactly).
   */
  onProgress?: (step: 'plan' | 'fit', done: number, total: number) => void;
}

/** Something from a ruleset that the compiled rules do not carry, and why. */
export interface DnrOmission {
  ruleset: string;
  file?: string;
  line?: number;
  what: 'ruleset' | 'rule' | 'exclusion' | 'target';
  /** Position among the ruleset's rules / exclusions / targets (0-based). */
  index: number;
  source: string;
  reason: string;
}

export interface DnrReport {
  rulesetsConsidered: number;
  rulesetsComplete: number;
  rulesetsPartial: number;
  rulesetsSkipped: number;
  ruleCount: number;
  regexRuleCount: number;
  regexLimit: number;
  byAction: Record<string, number>;
  omissions: DnrOmission[];
  /** Limits the output exceeds (empty when it fits). */
  overLimits: string[];
}

export interface DnrCompileResult {
  rules: DnrRule[];
  report: DnrReport;
}

/**
 * RE2 instructions (re2-size.ts) a regex may take. Chromium 156's `isRegexSupported` accepts
 * 113 and refuses 114 (one-range classes after `^`); over every regex the 2018 corpus compiles
 * to at any size, each one counted at 113 or less is accepted, each at 114 or more refused.
 * A few to spare for what the count does not model.
 */
export const DEFAULT_MAX_REGEX_INSTRUCTIONS = 110;

export { MAX_COMPILED_PRIORITY, rulesetCeilingPriority } from './priorities.js';
import { MAX_COMPILED_PRIORITY } from './priorities.js';

/**
 * The reference rewrites a URL's credentials aside and puts them back; a regex substitution
 * would drop them (or match them as part of the host). URLs with credentials are left alone
 * instead (missed, never rewritten differently); Chromium sends such main frames to the
 * extension's handoff page, above this.
 */
const CREDENTIALS_ALLOW: Planned = {
  priority: MAX_COMPILED_PRIORITY,
  action: { type: 'allow' },
  condition: { regexFilter: '^http://[^/?#]*@', resourceTypes: [...ALL_RESOURCE_TYPES] },
};

export function compileDnr(rulesets: Ruleset[], options: DnrCompileOptions = {}): DnrCompileResult {
  const isActive = options.isActive ?? ((r: Ruleset) => isDefaultActive(r));
  const regexLimit = options.regexLimit ?? DNR_LIMITS.regexRules;
  const maxInstructions = options.maxRegexInstructions ?? DEFAULT_MAX_REGEX_INSTRUCTIONS;
  const refused = options.refusedRegexes ?? new Set<string>();
  const omissions: DnrOmission[] = [];
  const incomplete = new Set<Ruleset>();
  const omit = (
    ruleset: Ruleset,
    what: DnrOmission['what'],
    index: number,
    source: string,
    reason: string,
  ): void => {
    incomplete.add(ruleset);
    const element =
      what === 'rule'
        ? ruleset.rules[index]
        : what === 'exclusion'
          ? ruleset.exclusions[index]
          : what === 'target'
            ? ruleset.targets[index]
            : undefined;
    const loc = element?.loc ?? ruleset.loc;
    omissions.push({
      ruleset: ruleset.name,
      file: loc?.file,
      line: loc?.line,
      what,
      index,
      source,
      reason,
    });
  };

  // Several literal redirects for one regex only where no redirect limit counts them.
  const redirectsUncounted = options.redirectLimit === undefined;
  const plans: RulesetPlan[] = [];
  const active: { ruleset: Ruleset; targets: ClassifiedTarget[] }[] = [];
  let considered = 0;
  let skipped = 0;
  for (const [i, ruleset] of rulesets.entries()) {
    // Before the work on it: the last ruleset's planning is a small part of the whole.
    options.onProgress?.('plan', i, rulesets.length);
    if (!isActive(ruleset)) continue;
    considered++;
    const targets = ruleset.targets
      .map((t) => classifyTarget(t.host))
      .filter((t): t is ClassifiedTarget => t !== null);
    active.push({ ruleset, targets });
    const plan = planRuleset(ruleset, maxInstructions, omit, refused, redirectsUncounted);
    if (plan) plans.push(plan);
    else skipped++;
  }

  // The shared host-group regexes come first from the budget; the rest goes to rulesets,
  // cheapest first, so as many rulesets as possible are reproduced completely.
  // Small host groups become one literal rule per host, as far as the rule limit leaves room
  // (before the budget: it only removes rules; 100 spare for the trailing-dot rules).
  const ruleLimit = options.ruleLimit ?? DNR_LIMITS.guaranteedStaticRules;
  const plannedRules =
    trivialGroups(plans).length +
    plans.reduce(
      (n, p) => n + p.allows.length + p.rules.reduce((m, r) => m + r.rules.length, 0),
      0,
    );
  // Only when regexes run short: a literal rule needs the credentials rule's regex.
  const wantedRegexes =
    trivialGroups(plans).filter((r) => r.condition.regexFilter !== undefined).length +
    plans.reduce((n, p) => n + p.regexes, 0) +
    1;
  const literalKeys =
    wantedRegexes > regexLimit
      ? literalGroupKeys(
          plans,
          ruleLimit - plannedRules - 1 - (options.trailingDots === true ? 100 : 0),
        )
      : new Set<string>();
  // A rule that rewrites by regex (a redirect, or an upgrade whose regex may reach past `@`),
  // or a literal host rule (`|http://host^` also matches `http://host:pw@sub.host/`), needs
  // URLs with credentials taken off first.
  const rewritesCredentials = (x: Planned) =>
    x.action.type !== 'allow' &&
    (x.condition.regexFilter !== undefined ||
      (x.condition.requestDomains?.length === 1 && x.condition.urlFilter?.endsWith('^') === true));
  const needsCredentialsAllow =
    literalKeys.size > 0 ||
    plans.some((p) => p.rules.some((r) => r.rules.some(rewritesCredentials)));
  // Hosts whose dotted form may lose its dots: one regex per host shape, counted before the
  // budget (a ruleset the budget then cuts drops out, so the final groups are no more).
  const sharedRegexes =
    trivialGroups(plans, literalKeys).filter((r) => r.condition.regexFilter !== undefined).length +
    (needsCredentialsAllow ? 1 : 0);
  // Regexes for the redirect groups, set aside before the budget like the shared ones (cutting
  // rulesets only removes redirects, so no more are needed after it).
  const redirectLimit = options.redirectLimit;
  const groupRegexes =
    redirectLimit === undefined
      ? 0
      : redirectGroupsNeeded(
          [
            ...trivialGroups(plans, literalKeys),
            ...plans.flatMap((p) => p.rules.flatMap((r) => r.rules)),
          ],
          redirectLimit,
        );
  const dotted = (trial: RulesetPlan[], complete: (p: RulesetPlan) => boolean) =>
    options.trailingDots === true ? dottedGroups(trial, active, complete) : [];

  /**
   * The budget spent with `extra` regexes more than the limit leaves, on a copy of the plans
   * (omissions recorded, not yet reported), and the rules it gives once regex rules are merged.
   */
  const spend = (extra: number) => {
    const trial = [...plans];
    const recorded: Parameters<typeof omit>[] = [];
    const cut = new Set<Ruleset>();
    const complete = (p: RulesetPlan) => !incomplete.has(p.ruleset) && !cut.has(p.ruleset);
    // The shapes with the most hosts, as many as the limit leaves room for.
    const dotShapes = new Set(
      dotted(trial, complete)
        .sort((a, b) => b.domains.length - a.domains.length)
        .slice(0, Math.max(0, regexLimit - sharedRegexes))
        .map(shapeKey),
    );
    const cuts = spendRegexBudget(
      trial,
      Math.max(0, regexLimit - sharedRegexes - groupRegexes - dotShapes.size + extra),
      (...args) => {
        cut.add(args[0]);
        recorded.push(args);
      },
    );
    const planned: Planned[] = [...trivialGroups(trial, literalKeys)];
    for (const plan of trial) planned.push(...plan.allows, ...plan.rules.flatMap((r) => r.rules));
    if (needsCredentialsAllow && planned.some(rewritesCredentials)) planned.push(CREDENTIALS_ALLOW);
    // After the budget: a ruleset it left out has nothing to apply to the undotted URL.
    for (const g of dotted(trial, complete))
      if (dotShapes.has(shapeKey(g))) planned.push(trailingDotRule(g, MAX_COMPILED_PRIORITY));
    const merged =
      redirectLimit === undefined
        ? mergeRegexRules(planned, maxInstructions, refused)
        : groupHostRedirects(mergeRegexRules(planned, maxInstructions, refused), redirectLimit);
    return {
      merged,
      recorded,
      cuts,
      regexes: merged.filter((r) => r.condition.regexFilter !== undefined).length,
    };
  };
  // Merging frees regexes the budget can give out again, which merge in turn: a few rounds,
  // keeping the last that fits.
  const rounds = 6;
  options.onProgress?.('fit', 0, rounds + 1);
  let best = spend(0);
  for (let extra = regexLimit - best.regexes, round = 0; extra > 0 && round < rounds; round++) {
    options.onProgress?.('fit', round + 1, rounds + 1);
    const next = spend(extra);
    if (next.regexes > regexLimit) {
      extra -= Math.max(1, Math.ceil((next.regexes - regexLimit) / 2));
      continue;
    }
    best = next;
    extra += regexLimit - next.regexes;
    if (next.regexes === regexLimit) break;
  }
  for (const args of best.recorded) omit(...args);
  skipped += best.cuts;
  const planned = best.merged;
  const firstId = options.firstId ?? 1;
  const rules = planned.map((r, i) => ({ id: firstId + i, ...r }));

  const skippedNames = new Set(omissions.filter((o) => o.what === 'ruleset').map((o) => o.ruleset));
  const partialNames = new Set(
    omissions
      .filter((o) => o.what !== 'ruleset' && !skippedNames.has(o.ruleset))
      .map((o) => o.ruleset),
  );
  const byAction: Record<string, number> = {};
  for (const r of rules) byAction[r.action.type] = (byAction[r.action.type] ?? 0) + 1;
  const regexRuleCount = rules.filter((r) => r.condition.regexFilter !== undefined).length;
  const overLimits: string[] = [];
  if (regexRuleCount > regexLimit) overLimits.push(`${regexRuleCount} regex rules > ${regexLimit}`);
  const redirectCount = rules.filter((r) => r.action.type === 'redirect').length;
  if (redirectLimit !== undefined && redirectCount > redirectLimit)
    overLimits.push(`${redirectCount} redirect rules > ${redirectLimit}`);
  if (rules.length > DNR_LIMITS.guaranteedStaticRules)
    overLimits.push(
      `${rules.length} rules > ${DNR_LIMITS.guaranteedStaticRules} guaranteed static rules`,
    );
  const rulesetsPartial = partialNames.size;
  return {
    rules,
    report: {
      rulesetsConsidered: considered,
      rulesetsComplete: considered - skipped - rulesetsPartial,
      rulesetsPartial,
      rulesetsSkipped: skipped,
      ruleCount: rules.length,
      regexRuleCount,
      regexLimit,
      byAction,
      omissions,
      overLimits,
    },
  };
}

function planRuleset(
  ruleset: Ruleset,
  maxInstructions: number,
  omit: (
    r: Ruleset,
    what: DnrOmission['what'],
    index: number,
    source: string,
    reason: string,
  ) => void,
  refused: ReadonlySet<string>,
  redirectsUncounted: boolean,
): RulesetPlan | null {
  const targets: ClassifiedTarget[] = [];
  ruleset.targets.forEach((t, i) => {
    const c = classifyTarget(t.host);
    if (c) targets.push(c);
    else omit(ruleset, 'target', i, t.host, 'not a host name DNR can match');
  });
  if (targets.length === 0) return null;
  const band = bandOf(targets);
  // Right/middle wildcards have no domain-list form; then only the rule regexes restrict hosts.
  const domains = targets.some((t) => t.kind === 'pattern')
    ? undefined
    : [
        ...new Set(
          targets.map((t) => (t.kind === 'exact' ? t.host : t.kind === 'left' ? t.suffix : '')),
        ),
      ];
  const ctx: PlanContext = {
    ruleset,
    targets,
    maxInstructions,
    redirectsUncounted,
    domainCondition: domains ? { requestDomains: domains } : {},
    covered: (host: string) => targets.some((t) => targetCovers(t, host)),
    allowPriority: band * BAND_WIDTH + ALLOW_PRIORITY,
    fences: new Map(),
  };

  const allows: Planned[] = [];
  const widenable: ExclusionPlan[] = [];
  const base = band * BAND_WIDTH;
  const negativePrefixes: string[][] = [];
  for (let i = 0; i < ruleset.exclusions.length; i++) {
    const pattern = ruleset.exclusions[i]!.pattern;
    const planned = hasLookaround(pattern)
      ? planLookaroundExclusion(ctx, pattern, base, negativePrefixes)
      : planExclusion(ctx, pattern, base);
    const widened = widenExclusion(ctx, pattern, base);
    if (typeof planned === 'string') {
      // Without its exclusion the ruleset would rewrite URLs the reference leaves alone; a
      // wider exclusion leaves some of them unrewritten instead, which is safe.
      const loose = widened ? null : widenWithoutLookarounds(ctx, pattern, base);
      if (loose) {
        omit(
          ruleset,
          'exclusion',
          i,
          pattern,
          `${planned}; widened to the pattern without its lookarounds`,
        );
        allows.push(...loose);
        continue;
      }
      if (!widened) {
        omit(ruleset, 'exclusion', i, pattern, planned);
        omit(ruleset, 'ruleset', 0, ruleset.name, 'an exclusion cannot be expressed');
        return null;
      }
      omit(
        ruleset,
        'exclusion',
        i,
        pattern,
        `${planned}; widened to all URLs starting with ${widened.prefixes.join(', ')}`,
      );
      allows.push(...widened.rules);
      continue;
    }
    if (widened && planned.some((r) => r.condition.regexFilter !== undefined))
      widenable.push({ index: i, exact: planned, widened });
    allows.push(...planned);
  }
  if (!prefixSetsIndependent(negativePrefixes)) {
    omit(ruleset, 'ruleset', 0, ruleset.name, 'overlapping exclusions with negative lookahead');
    return null;
  }

  const rules: RulePlan[] = [];
  for (let j = 0; j < ruleset.rules.length; j++) {
    const rule = ruleset.rules[j]!;
    let planned: RulePlan | string;
    if (j >= MAX_RULES_PER_RULESET)
      planned = `more than ${MAX_RULES_PER_RULESET} rules in one ruleset`;
    else if (isTrivialRule(rule)) planned = { trivial: true, rules: [], regexes: 0 };
    else if (fragmentDependentGroups(rule.from, rule.to).length > 0) planned = FRAGMENT_DEPENDENT;
    else if (hasLookaround(rule.from)) planned = planLookaroundRule(ctx, j, rulePriority(band, j));
    else planned = planRule(ctx, j, rulePriority(band, j));
    if (typeof planned === 'string') {
      omit(ruleset, 'rule', j, rule.from, planned);
      // Later rules would take over URLs this one should have rewritten: keep only earlier ones.
      for (let k = j + 1; k < ruleset.rules.length; k++)
        omit(
          ruleset,
          'rule',
          k,
          ruleset.rules[k]!.from,
          'follows a rule that could not be translated',
        );
      break;
    }
    rules.push(planned);
  }
  if (rules.length === 0) {
    if (ruleset.rules.length > 0)
      omit(ruleset, 'ruleset', 0, ruleset.name, 'no rule could be translated');
    return null;
  }
  // The fences keep the rules above (and the ruleset's exclusions) to the targets.
  allows.push(...ctx.fences.values());
  if (
    refused.size > 0 &&
    [...allows, ...rules.flatMap((r) => r.rules)].some((r) =>
      refused.has(r.condition.regexFilter ?? ''),
    )
  ) {
    omit(ruleset, 'ruleset', 0, ruleset.name, 'the browser refuses one of its regexes');
    return null;
  }
  const regexes =
    allows.filter((a) => a.condition.regexFilter !== undefined).length +
    rules.reduce((s, r) => s + r.regexes, 0);
  return { ruleset, band, targets, allows, widenable, rules, regexes };
}
