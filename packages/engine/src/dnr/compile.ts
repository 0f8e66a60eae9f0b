import { isDefaultActive, isTrivialRule, type Ruleset } from '../model/ruleset.js';
import { hostPatterns, hostShape, matchesChar, mayMatchChar, type HostShape } from './host-labels.js';
import { classifyTarget, labelCountRegex, patternHostsRegex, splitHttpPrefix, targetCovers, type ClassifiedTarget } from './hosts.js';
import { expandLiteralLanguage, literalPrefixes } from '../regex/literal-language.js';
import { fallthroughAction, literalAction, urlFilterSafe } from './actions.js';
import { analyzeLookaround, hasLookaround, type CarvedPrefix } from './lookaround.js';
import type { AST } from '@eslint-community/regexpp';
import { captureCount, topLevelElements } from '../regex/pattern-ast.js';
import { translateRegex, translateReplacement } from './re2.js';
import { rulesetRegexOrNull } from '../regex/safe-regex.js';
import { ALL_RESOURCE_TYPES, DNR_LIMITS, type DnrAction, type DnrCondition, type DnrRule } from './types.js';

export interface DnrCompileOptions {
  /** Which rulesets to compile; default: the reference default (no `default_off`, no `platform`). */
  isActive?: (ruleset: Ruleset) => boolean;
  /** Regex rules allowed in the output (Chromium: 1,000 per static or dynamic+session set). */
  regexLimit?: number;
  /** Estimated RE2 instructions above which a regex is assumed over Chromium's 2 KB. */
  maxRegexInstructions?: number;
  /** First rule id (ids are consecutive). */
  firstId?: number;
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
 * Calibrated against Chromium 156 `isRegexSupported` on the corpus: every translated regex the
 * estimate accepts compiles within the 2 KB budget (see test/dnr-browser).
 */
export const DEFAULT_MAX_REGEX_INSTRUCTIONS = 120;

/*
 * Priorities reproduce the reference order with DNR's "highest priority wins":
 * - a band per ruleset from its least specific target (exact > right/middle wildcard > left
 *   wildcard, longer suffix first), as candidate rulesets are tried in that order;
 * - inside a band, earlier rules rank higher (the first rule that changes the URL wins) and the
 *   ruleset's exclusions (`allow`) rank above all of its rules.
 */
const BAND_WIDTH = 256;
/** Plain exclusions; re-enabled carve-outs of negative-lookahead exclusions; those exclusions. */
const ALLOW_PRIORITY = 255;
const REENABLE_PRIORITY = 254;
const LOOKAHEAD_ALLOW_PRIORITY = 253;
const MAX_RULES_PER_RULESET = 120;
const EXACT_BAND = 40;
const PATTERN_BAND = 30;
const LEFT_BAND = 10;

function rulePriority(band: number, ruleIndex: number): number {
  return band * BAND_WIDTH + 250 - 2 * ruleIndex;
}

type Planned = Omit<DnrRule, 'id'>;

interface RulePlan {
  /** Trivial rule: hosts go into the shared label-count groups. */
  trivial: boolean;
  /** A scheme-only regex rule reduced to exact hosts (path must follow the host directly). */
  upgradeHosts?: string[];
  /** ...and `*.` targets all of whose hosts it upgrades (the path must follow the host directly). */
  upgradeSuffixes?: string[];
  rules: Planned[];
  regexes: number;
}

interface RulesetPlan {
  ruleset: Ruleset;
  band: number;
  targets: ClassifiedTarget[];
  allows: Planned[];
  /** Exclusions that need a regex but have a regex-free, wider stand-in. */
  widenable: ExclusionPlan[];
  rules: RulePlan[];
  regexes: number;
}

const caseSensitive = { isUrlFilterCaseSensitive: true } as const;

export function compileDnr(rulesets: Ruleset[], options: DnrCompileOptions = {}): DnrCompileResult {
  const isActive = options.isActive ?? ((r: Ruleset) => isDefaultActive(r));
  const regexLimit = options.regexLimit ?? DNR_LIMITS.regexRules;
  const maxInstructions = options.maxRegexInstructions ?? DEFAULT_MAX_REGEX_INSTRUCTIONS;
  const omissions: DnrOmission[] = [];
  const omit = (ruleset: Ruleset, what: DnrOmission['what'], index: number, source: string, reason: string): void => {
    const element = what === 'rule' ? ruleset.rules[index] : what === 'exclusion' ? ruleset.exclusions[index] : what === 'target' ? ruleset.targets[index] : undefined;
    const loc = element?.loc ?? ruleset.loc;
    omissions.push({ ruleset: ruleset.name, file: loc?.file, line: loc?.line, what, index, source, reason });
  };

  const plans: RulesetPlan[] = [];
  let considered = 0;
  let skipped = 0;
  for (const ruleset of rulesets) {
    if (!isActive(ruleset)) continue;
    considered++;
    const plan = planRuleset(ruleset, maxInstructions, omit);
    if (plan) plans.push(plan);
    else skipped++;
  }

  // The shared host-group regexes come first from the budget; the rest goes to rulesets,
  // cheapest first, so as many rulesets as possible are reproduced completely.
  const groupRegexes = trivialGroups(plans).length;
  // (Rulesets that need no regex of their own always stay; if even the host groups do not fit,
  // the report says the output is over the limit.)
  let budget = Math.max(0, regexLimit - groupRegexes);
  const density = (p: RulesetPlan) => (p.regexes === 0 ? Infinity : p.ruleset.targets.length / p.regexes);
  const order = plans.map((p, i) => i).sort((a, b) => density(plans[b]!) - density(plans[a]!) || plans[a]!.regexes - plans[b]!.regexes || a - b);
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
        omit(plan.ruleset, 'exclusion', w.index, plan.ruleset.exclusions[w.index]!.pattern, `regex budget exhausted; widened to all URLs starting with ${w.widened.prefixes.join(', ')}`);
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

  const planned: Planned[] = [...trivialGroups(plans)];
  for (const plan of plans) planned.push(...plan.allows, ...plan.rules.flatMap((r) => r.rules));
  const firstId = options.firstId ?? 1;
  const rules = planned.map((r, i) => ({ id: firstId + i, ...r }));

  const skippedNames = new Set(omissions.filter((o) => o.what === 'ruleset').map((o) => o.ruleset));
  const partialNames = new Set(omissions.filter((o) => o.what !== 'ruleset' && !skippedNames.has(o.ruleset)).map((o) => o.ruleset));
  const byAction: Record<string, number> = {};
  for (const r of rules) byAction[r.action.type] = (byAction[r.action.type] ?? 0) + 1;
  const regexRuleCount = rules.filter((r) => r.condition.regexFilter !== undefined).length;
  const overLimits: string[] = [];
  if (regexRuleCount > regexLimit) overLimits.push(`${regexRuleCount} regex rules > ${regexLimit}`);
  if (rules.length > DNR_LIMITS.guaranteedStaticRules) overLimits.push(`${rules.length} rules > ${DNR_LIMITS.guaranteedStaticRules} guaranteed static rules`);
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
  omit: (r: Ruleset, what: DnrOmission['what'], index: number, source: string, reason: string) => void,
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
    : [...new Set(targets.map((t) => (t.kind === 'exact' ? t.host : t.kind === 'left' ? t.suffix : '')))];
  const ctx: PlanContext = {
    ruleset,
    targets,
    maxInstructions,
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
    const planned = hasLookaround(pattern) ? planLookaroundExclusion(ctx, pattern, base, negativePrefixes) : planExclusion(ctx, pattern, base);
    const widened = widenExclusion(ctx, pattern, base);
    if (typeof planned === 'string') {
      // Without its exclusion the ruleset would rewrite URLs the reference leaves alone; a
      // wider exclusion leaves some of them unrewritten instead, which is safe.
      if (!widened) {
        omit(ruleset, 'exclusion', i, pattern, planned);
        omit(ruleset, 'ruleset', 0, ruleset.name, 'an exclusion cannot be expressed');
        return null;
      }
      omit(ruleset, 'exclusion', i, pattern, `${planned}; widened to all URLs starting with ${widened.prefixes.join(', ')}`);
      allows.push(...widened.rules);
      continue;
    }
    if (widened && planned.some((r) => r.condition.regexFilter !== undefined)) widenable.push({ index: i, exact: planned, widened });
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
    if (j >= MAX_RULES_PER_RULESET) planned = `more than ${MAX_RULES_PER_RULESET} rules in one ruleset`;
    else if (isTrivialRule(rule)) planned = { trivial: true, rules: [], regexes: 0 };
    else if (hasLookaround(rule.from)) planned = planLookaroundRule(ctx, j, rulePriority(band, j));
    else planned = planRule(ctx, j, rulePriority(band, j));
    if (typeof planned === 'string') {
      omit(ruleset, 'rule', j, rule.from, planned);
      // Later rules would take over URLs this one should have rewritten: keep only earlier ones.
      for (let k = j + 1; k < ruleset.rules.length; k++) omit(ruleset, 'rule', k, ruleset.rules[k]!.from, 'follows a rule that could not be translated');
      break;
    }
    rules.push(planned);
  }
  if (rules.length === 0) {
    if (ruleset.rules.length > 0) omit(ruleset, 'ruleset', 0, ruleset.name, 'no rule could be translated');
    return null;
  }
  // The fences keep the rules above (and the ruleset's exclusions) to the targets.
  allows.push(...ctx.fences.values());
  const regexes = allows.filter((a) => a.condition.regexFilter !== undefined).length + rules.reduce((s, r) => s + r.regexes, 0);
  return { ruleset, band, targets, allows, widenable, rules, regexes };
}

interface ExclusionPlan {
  index: number;
  exact: Planned[];
  widened: { prefixes: string[]; rules: Planned[] };
}

/**
 * A safe stand-in for an exclusion DNR cannot express exactly: `allow` everything under the
 * literal prefixes all its matches start with. More URLs stay unrewritten, none is rewritten
 * that the reference leaves alone. Null when the prefixes do not reach into the host name.
 */
function widenExclusion(ctx: PlanContext, pattern: string, base: number): { prefixes: string[]; rules: Planned[] } | null {
  const prefixes = literalPrefixes(pattern);
  if (!prefixes || prefixes.length === 0) return null;
  for (const p of prefixes) {
    const parts = splitHttpPrefix(p);
    if (!parts || !urlFilterSafe(p)) return null;
  }
  if (!ctx.domainCondition.requestDomains) return null;
  return {
    prefixes,
    rules: prefixes.map((p) => ({
      priority: base + ALLOW_PRIORITY,
      action: { type: 'allow' },
      condition: { urlFilter: `|${p}`, ...caseSensitive, ...ctx.domainCondition, ...ALL_TYPES() },
    })),
  };
}

function bandOf(targets: ClassifiedTarget[]): number {
  return Math.min(...targets.map((t) => (t.kind === 'exact' ? EXACT_BAND : t.kind === 'pattern' ? PATTERN_BAND : LEFT_BAND + Math.min(t.labels, 9))));
}

/**
 * The priority just above everything a ruleset's compiled rules use (its exclusions included):
 * an `allow` there switches the ruleset off for its hosts without touching more specific ones.
 */
export function rulesetCeilingPriority(ruleset: Ruleset): number | null {
  const targets = ruleset.targets.map((t) => classifyTarget(t.host)).filter((t): t is ClassifiedTarget => t !== null);
  if (targets.length === 0) return null;
  return bandOf(targets) * BAND_WIDTH + ALLOW_PRIORITY;
}

interface PlanContext {
  ruleset: Ruleset;
  targets: ClassifiedTarget[];
  maxInstructions: number;
  domainCondition: Partial<DnrCondition>;
  covered: (host: string) => boolean;
  /** The ruleset's exclusion priority, which its fences share. */
  allowPriority: number;
  /** `allow` rules for hosts the domain condition admits but no target covers, by host pattern. */
  fences: Map<string, Planned>;
}

/**
 * A DNR domain condition admits every subdomain of its entries, while the reference offers a
 * ruleset only for its targets. Where a rewrite could reach past them, `allow` fences (at the
 * ruleset's exclusion priority) take the ruleset off those hosts: below an exact target `a.b`
 * the hosts no other target covers (`|http://*.a.b^`, the covered ones excepted), `b` itself
 * under `*.b`, and more than one extra label under a single-label `*.b`; for https:// URLs too
 * when the rewrite may match them (`^https?://`, or a regex that says nothing). Other rulesets'
 * rules there may be hidden as well: missed, never rewritten differently.
 */
function fence(ctx: PlanContext, targets: readonly ClassifiedTarget[], https: boolean): void {
  const add = (key: string, filter: string, domain: string, below: boolean): void => {
    for (const scheme of https ? ['http', 'https'] : ['http']) fenceFor(`${scheme} ${key}`, `|${scheme}://${filter}`, domain, below);
  };
  const fenceFor = (key: string, urlFilter: string, domain: string, below: boolean): void => {
    if (ctx.fences.has(key)) return;
    // Hosts a target covers stay open (their own subtrees are fenced when reachable).
    const inside = below ? ctx.targets.flatMap((t) => (t.kind === 'exact' ? [t.host] : t.kind === 'left' ? [t.suffix] : [])).filter((h) => h.endsWith(`.${domain}`)) : [];
    ctx.fences.set(key, {
      priority: ctx.allowPriority,
      action: { type: 'allow' },
      condition: { urlFilter, ...caseSensitive, requestDomains: [domain], ...(inside.length > 0 ? { excludedRequestDomains: [...new Set(inside)].sort() } : {}), ...ALL_TYPES() },
    });
  };
  for (const t of targets) {
    if (t.kind === 'exact') add(`below ${t.host}`, `*.${t.host}^`, t.host, true);
    else if (t.kind === 'left') {
      if (!ctx.covered(t.suffix)) add(`at ${t.suffix}`, `${t.suffix}^`, t.suffix, false);
      if (t.labels === 1) add(`deep ${t.suffix}`, `*.*.${t.suffix}^`, t.suffix, false);
    }
  }
}

const ALL_TYPES = (): { resourceTypes: DnrCondition['resourceTypes'] } => ({ resourceTypes: [...ALL_RESOURCE_TYPES] });

function prefixFilter(text: string, exact: boolean): string {
  return `|${text}${exact ? '|' : ''}`;
}

/**
 * A regex condition, or the reason it cannot be one; null when the regex matches no URL of a
 * host the ruleset targets (the reference never applies it: nothing to compile).
 */
function regexCondition(ctx: PlanContext, source: string, use: 'allow' | 'rewrite'): { condition: DnrCondition; captures: number } | string | null {
  const tr = translateRegex(source);
  if (!tr.ok) return tr.reason;
  if (tr.estimatedInstructions > ctx.maxInstructions) return 'regex over the 2 KB RE2 budget (estimated)';
  const prefixes = literalPrefixes(source);
  // An `allow` that reaches too far only leaves URLs alone; a rewrite must stay on the targets.
  const domains = use === 'allow' ? hostCondition(ctx, prefixes) : rewriteDomains(ctx, prefixes, source);
  if (domains === null || typeof domains === 'string') return domains;
  return { condition: { regexFilter: tr.re2, ...caseSensitive, ...domains, ...ALL_TYPES() }, captures: tr.captures };
}

/**
 * The domain condition of a rewrite whose URLs start with one of `prefixes` (null: unknown),
 * by `regex` (null: a URL filter with those prefixes). Where it is the ruleset-wide one, what
 * the rewrite could reach past the targets is fenced off. With no domain list to fence (right
 * or middle wildcard targets) every host pattern the regex spells must be a covered one, or
 * that is the reason it cannot be compiled.
 */
function rewriteDomains(ctx: PlanContext, prefixes: readonly string[] | null, regex: string | null): Partial<DnrCondition> | string | null {
  const domains = hostCondition(ctx, prefixes);
  if (domains !== ctx.domainCondition) return domains;
  if (ctx.domainCondition.requestDomains === undefined) {
    const patterns = regex === null ? null : hostPatterns(regex);
    if (patterns === null || !patterns.every((p) => patternCovered(ctx.targets, p))) return 'may match hosts no target covers (right or middle wildcard targets have no DNR domain list)';
    return domains;
  }
  const shape = regex === null ? null : hostShape(regex);
  fence(ctx, uncoveredReach(ctx, shape), shape?.https ?? true);
  return domains;
}

/** Whether one target covers every host of `pattern` (labels, `*` for an unknown one). */
function patternCovered(targets: readonly ClassifiedTarget[], pattern: string): boolean {
  const labels = pattern.split('.');
  return targets.some((t) => {
    if (t.kind === 'exact') return !labels.includes('*') && pattern === t.host;
    if (t.kind === 'left') {
      const extra = labels.length - t.labels;
      return (extra === 1 || (extra > 1 && t.labels >= 2)) && !labels.slice(extra).includes('*') && labels.slice(extra).join('.') === t.suffix;
    }
    const want = t.host.split('.');
    return want.length === labels.length && want.every((label, i) => label === '*' || (labels[i] !== '*' && labels[i] === label));
  });
}

/**
 * The domain condition of a filter whose URLs all start with one of `prefixes`. The
 * ruleset-wide `requestDomains` also admits every subdomain of a target, so a regex naming an
 * untargeted subdomain (`^http://wwwimages\.adobe\.com/` beside the target `adobe.com`) would
 * fire where the reference never offers the ruleset. When each prefix spells out its whole
 * host, the condition lists just the covered ones among them (and excludes uncovered ones
 * beneath them); null when none is covered. Open-ended hosts keep the ruleset-wide condition.
 */
function hostCondition(ctx: PlanContext, prefixes: readonly string[] | null): Partial<DnrCondition> | null {
  const hosts = prefixes === null ? null : wholeHosts(prefixes);
  if (hosts === null) return ctx.domainCondition;
  const covered = hosts.filter(ctx.covered).sort();
  if (covered.length === 0) return null;
  const excluded = hosts.filter((h) => !ctx.covered(h) && covered.some((c) => h.endsWith(`.${c}`))).sort();
  return excluded.length > 0 ? { requestDomains: covered, excludedRequestDomains: excluded } : { requestDomains: covered };
}

/**
 * The targets under which a rewrite of hosts shaped so (null: unknown) may match hosts that the
 * ruleset-wide domain list admits but no target covers. Below an exact target `a.b` the regex
 * must not reach (more labels than the target has, under a suffix compatible with it) unless a
 * `*.` target covers everything there; at `*.b` it must not match `b` itself (unless `b` is a
 * target too), nor more than one extra label when `b` is a single label. (Rulesets with right or
 * middle wildcards have no domain list; their rules are checked by host pattern instead.)
 */
function uncoveredReach(ctx: PlanContext, shape: HostShape | null): ClassifiedTarget[] {
  // A host nothing is known of may be any host.
  const { min, max, suffix } = shape ?? { min: 0, max: Infinity, suffix: '' };
  // Could a host below `host` match, given the literal suffix the regex's hosts end with?
  const belowMatches = (host: string) => `.${host}`.endsWith(suffix) || suffix.endsWith(`.${host}`);
  // Every host below `*.b` is covered when `b` has two labels or more.
  const subtreeCovered = (host: string) => ctx.targets.some((t) => t.kind === 'left' && t.labels >= 2 && (host === t.suffix || host.endsWith(`.${t.suffix}`)));
  return ctx.targets.filter((t) => {
    if (t.kind === 'exact') return !(max <= t.labels || !belowMatches(t.host) || subtreeCovered(t.host));
    if (t.kind === 'left') {
      const selfMatches = min <= t.labels && max >= t.labels && t.suffix.endsWith(suffix);
      return !((!selfMatches || ctx.covered(t.suffix)) && (t.labels >= 2 || max <= t.labels + 1 || !belowMatches(t.suffix)));
    }
    return true;
  });
}

/** The hosts of URL prefixes that each name a whole host (`http://host/…`, `http://host:…`), else null. */
function wholeHosts(prefixes: readonly string[]): string[] | null {
  const hosts = new Set<string>();
  for (const p of prefixes) {
    const parts = splitHttpPrefix(p);
    if (!parts || !/^[/:?#]/.test(parts.rest)) return null;
    hosts.add(parts.host);
  }
  return [...hosts];
}

function planExclusion(ctx: PlanContext, pattern: string, base: number): Planned[] | string {
  const priority = base + ALLOW_PRIORITY;
  const lit = expandLiteralLanguage(pattern);
  if (lit && lit.expansions.every((e) => urlFilterSafe(e.text))) {
    return lit.expansions.map((e) => ({
      priority,
      action: { type: 'allow' },
      condition: { urlFilter: prefixFilter(e.text, e.exact === true), ...caseSensitive, ...ctx.domainCondition, ...ALL_TYPES() },
    }));
  }
  const rc = regexCondition(ctx, pattern, 'allow');
  if (typeof rc === 'string') return rc;
  return rc === null ? [] : [{ priority, action: { type: 'allow' }, condition: rc.condition }];
}

/**
 * `P(?!A)` excludes URLs under P except those under P+A: an `allow` for P below a re-enabling
 * rule for P+A that does what the ruleset's rules do there. `P(?=A)` just excludes P+A.
 */
function planLookaroundExclusion(ctx: PlanContext, pattern: string, base: number, negativePrefixes: string[][]): Planned[] | string {
  const shape = analyzeLookaround(pattern);
  if (!shape) return 'lookaround that cannot be rewritten without it';
  const out: Planned[] = [];
  const allowAt = (priority: number, urlFilter: string): Planned => ({
    priority,
    action: { type: 'allow' },
    condition: { urlFilter, ...caseSensitive, ...ctx.domainCondition, ...ALL_TYPES() },
  });
  if (shape.kind === 'trailing' && !shape.negate) {
    if (!shape.prefix) {
      const rc = regexCondition(ctx, shape.capturingSource!, 'allow');
      if (typeof rc === 'string') return rc;
      return rc === null ? [] : [{ priority: base + ALLOW_PRIORITY, action: { type: 'allow' }, condition: rc.condition }];
    }
    for (const c of shape.carved) {
      if (!urlFilterSafe(c.prefix.text)) return 'lookahead text cannot be a URL filter';
      out.push(allowAt(base + ALLOW_PRIORITY, prefixFilter(c.prefix.text, c.prefix.exact)));
    }
    return out;
  }
  let carved: CarvedPrefix[];
  if (shape.kind === 'trailing') {
    if (!shape.prefix) return 'negative lookahead after a prefix that needs a regex';
    const prefixes = shape.prefix.expansions.map((e) => e.text);
    if (!prefixes.every(urlFilterSafe)) return 'lookahead prefix cannot be a URL filter';
    negativePrefixes.push(prefixes);
    for (const p of prefixes) out.push(allowAt(base + LOOKAHEAD_ALLOW_PRIORITY, prefixFilter(p, false)));
    carved = shape.carved.map((c) => c.prefix);
  } else {
    const rc = regexCondition(ctx, shape.restSource, 'allow');
    if (typeof rc === 'string') return rc;
    // The carved URLs lie among the rest's, so they cannot reach a target either.
    if (rc === null) return [];
    negativePrefixes.push(['http://']);
    out.push({ priority: base + LOOKAHEAD_ALLOW_PRIORITY, action: { type: 'allow' }, condition: rc.condition });
    carved = shape.carved;
  }
  for (const c of carved) {
    if (!urlFilterSafe(c.text)) return 'lookahead text cannot be a URL filter';
    const action = fallthroughAction(ctx.ruleset.rules, 0, c.text, c.exact);
    if (action === null) return 'the rules under a negative lookahead differ across its URLs';
    if (action === 'none') continue;
    const domains = rewriteDomains(ctx, [c.text], null);
    if (typeof domains === 'string') return `re-enabled URLs ${domains}`;
    if (domains === null) continue;
    out.push({
      priority: base + REENABLE_PRIORITY,
      action,
      condition: { urlFilter: prefixFilter(c.text, c.exact), ...caseSensitive, ...domains, ...ALL_TYPES() },
    });
  }
  return out;
}

/** Two negative-lookahead exclusions whose prefixes nest would re-enable each other's URLs. */
function prefixSetsIndependent(sets: string[][]): boolean {
  for (let a = 0; a < sets.length; a++) {
    for (let b = a + 1; b < sets.length; b++) {
      for (const x of sets[a]!) for (const y of sets[b]!) if (x.startsWith(y) || y.startsWith(x)) return false;
    }
  }
  return true;
}

/**
 * `^http://HOST/` rules whose replacement only changes the scheme (`(www\.)?example\.com/` →
 * `https://$1example.com/`) are upgrades of the target hosts they match: as such they join the
 * shared host groups instead of spending a regex. Exact targets are listed when they match; a
 * `*.b` target joins when the rule takes every host below it (`([^/:@]+\.)?b/`) and is left
 * out when, by its literal end, the rule takes none. Null for anything else (right or middle
 * wildcards among them), which needs the regex.
 */
function schemeOnlyHosts(from: string, to: string, targets: readonly ClassifiedTarget[]): { hosts: string[]; suffixes: string[] } | null {
  if (targets.some((t) => t.kind === 'pattern')) return null;
  const els = topLevelElements(from);
  if (!els) return null;
  const head = els.slice(0, 8).map((e) => e.raw).join('');
  if (head.replace(/\\\//g, '/') !== '^http://' || els[els.length - 1]?.type !== 'Character' || els[els.length - 1]!.raw.replace('\\', '') !== '/') return null;
  // The replacement must spell the match back: literal characters as they are, each capturing
  // group (optional or not) as its `$n`.
  let expected = 'https://';
  let group = 0;
  for (const el of els.slice(8)) {
    if (el.type === 'Character') expected += String.fromCharCode(el.value);
    else if (el.type === 'CapturingGroup' || (el.type === 'Quantifier' && el.min === 0 && el.max === 1 && el.element.type === 'CapturingGroup')) {
      const g = el.type === 'CapturingGroup' ? el : (el.element as AST.CapturingGroup);
      if (/\((?!\?)/.test(g.alternatives.map((a) => a.raw).join('|').replace(/\\./g, ''))) return null;
      expected += `$${++group}`;
    } else return null;
  }
  if (group > 9 || to !== expected || /\$/.test(expected.replace(/\$\d/g, '')) ) return null;
  // The reduction holds only for port-less URLs: a host piece that can match ':' could take a port.
  if (els.slice(8, -1).some((e) => mayMatchChar(e, ':'))) return null;
  const re = rulesetRegexOrNull(from);
  if (re === null) return null;
  const hosts: string[] = [];
  const suffixes: string[] = [];
  const below = openBelow(els.slice(8, -1));
  for (const t of targets) {
    if (t.kind === 'exact') {
      if (re.test(`http://${t.host}/`)) hosts.push(t.host);
      continue;
    }
    const { suffix } = t as { suffix: string };
    // Everything below `*.b` matches, or (by its literal end) nothing can; else a regex it is.
    if (below !== null && (suffix === below || suffix.endsWith(`.${below}`))) suffixes.push(suffix);
    else if (below === null || !(below.endsWith(`.${suffix}`) || suffix.endsWith(`.${below}`))) {
      const shape = hostShape(from);
      if (shape === null || `.${suffix}`.endsWith(shape.suffix) || shape.suffix.endsWith(`.${suffix}`)) return null;
    } else return null;
  }
  // Empty lists: the rule matches none of the hosts the ruleset is offered for.
  return { hosts, suffixes };
}

/** Canonical host characters: lowercase letters, digits, `.`, `-`, `_` (punycode for the rest). */
const HOST_CHARS = [...'abcdefghijklmnopqrstuvwxyz0123456789.-_'];

/**
 * The domain `d` when a host part matches every host below it: `(X+)?\.d` or `(X+\.)?d`, where
 * X is a class that takes every host character (dots included). Null for any other shape.
 */
function openBelow(host: readonly AST.Element[]): string | null {
  const [first, ...rest] = host;
  if (first === undefined || rest.length === 0 || !rest.every((e) => e.type === 'Character')) return null;
  let literal = rest.map((e) => String.fromCharCode((e as AST.Character).value)).join('');
  const group = first.type === 'Quantifier' && first.min === 0 && first.max === 1 ? first.element : first;
  if (group.type !== 'CapturingGroup' || group.alternatives.length !== 1) return null;
  const [run, dot, ...more] = group.alternatives[0]!.elements;
  if (more.length > 0 || run?.type !== 'Quantifier' || run.min > 1 || run.max !== Infinity) return null;
  const cls = run.element;
  if ((cls.type !== 'CharacterClass' && cls.type !== 'CharacterSet') || !HOST_CHARS.every((c) => matchesChar(cls, c))) return null;
  if (dot !== undefined) {
    if (dot.type !== 'Character' || dot.value !== 0x2e) return null;
  } else {
    if (!literal.startsWith('.')) return null;
    literal = literal.slice(1);
  }
  return literal === '' || literal.startsWith('.') ? null : literal;
}

function planRule(ctx: PlanContext, j: number, priority: number): RulePlan | string {
  const rule = ctx.ruleset.rules[j]!;
  const literal = literalRule(rule.from, rule.to, priority, ctx.covered) ?? slashRunRule(rule.from, rule.to, priority, ctx.covered);
  if (literal) return { trivial: false, rules: literal, regexes: 0 };
  const upgrade = schemeOnlyHosts(rule.from, rule.to, ctx.targets);
  if (upgrade) return { trivial: false, upgradeHosts: upgrade.hosts, upgradeSuffixes: upgrade.suffixes, rules: [], regexes: 0 };
  const rc = regexCondition(ctx, rule.from, 'rewrite');
  if (typeof rc === 'string') return rc;
  if (rc === null) return { trivial: false, rules: [], regexes: 0 };
  const substitution = translateReplacement(rule.to, rc.captures);
  if (substitution === null) return "replacement uses $`, $' or a group number RE2 cannot substitute";
  return { trivial: false, regexes: 1, rules: [{ priority, action: { type: 'redirect', redirect: { regexSubstitution: substitution } }, condition: rc.condition }] };
}

/**
 * Rules with a lookahead: the prefix before a trailing lookahead becomes filters (positive: only
 * the carved URLs; negative: everything else, with the carved URLs handed one priority step up
 * to whatever the following rules do); `^http://(?!A)rest` becomes a regex for `rest` plus
 * carve-outs. A positive lookahead that needs a substitution is captured and put back (`\N`).
 */
function planLookaroundRule(ctx: PlanContext, j: number, priority: number): RulePlan | string {
  const rule = ctx.ruleset.rules[j]!;
  const shape = analyzeLookaround(rule.from);
  if (!shape) return 'lookaround that cannot be rewritten without it';
  const captures = captureCount(rule.from);
  const filterRule = (p: number, action: DnrAction, text: string, exact: boolean, domains: Partial<DnrCondition> = {}): Planned => ({
    priority: p,
    action,
    condition: { urlFilter: prefixFilter(text, exact), ...caseSensitive, ...domains, ...ALL_TYPES() },
  });
  const carveOuts = (carved: CarvedPrefix[], scoped: boolean): Planned[] | string => {
    const out: Planned[] = [];
    for (const c of carved) {
      if (!urlFilterSafe(c.text)) return 'lookahead text cannot be a URL filter';
      let domains: Partial<DnrCondition> = {};
      if (!scoped) {
        const host = splitHttpPrefix(c.text)?.host;
        if (host === undefined || !ctx.covered(host)) continue;
      }
      const action = fallthroughAction(ctx.ruleset.rules, j + 1, c.text, c.exact);
      if (action === null) return 'the rules after a negative lookahead differ across its URLs';
      if (scoped) {
        const d = action === 'none' ? hostCondition(ctx, [c.text]) : rewriteDomains(ctx, [c.text], null);
        if (typeof d === 'string') return `carved-out URLs ${d}`;
        if (d === null) continue;
        domains = d;
      }
      // No later rule applies: the ruleset leaves these URLs alone.
      out.push(filterRule(priority + 1, action === 'none' ? { type: 'allow' } : action, c.text, c.exact, domains));
    }
    return out;
  };

  if (shape.kind === 'leading') {
    const rc = regexCondition(ctx, shape.restSource, 'rewrite');
    if (typeof rc === 'string') return rc;
    if (rc === null) return { trivial: false, rules: [], regexes: 0 };
    const substitution = translateReplacement(rule.to, rc.captures);
    if (substitution === null) return "replacement uses $`, $' or a group number RE2 cannot substitute";
    const carved = carveOuts(shape.carved, true);
    if (typeof carved === 'string') return carved;
    const main: Planned = { priority, action: { type: 'redirect', redirect: { regexSubstitution: substitution } }, condition: rc.condition };
    return { trivial: false, regexes: 1, rules: [main, ...carved] };
  }

  const out: Planned[] = [];
  if (!shape.negate) {
    let literalOk = shape.prefix !== null;
    for (const c of literalOk ? shape.carved : []) {
      const e = shape.prefix!.expansions[c.prefixIndex]!;
      const host = splitHttpPrefix(c.prefix.text)?.host;
      const action = literalAction(e, false, rule.to, captures);
      if (!action || !urlFilterSafe(c.prefix.text) || host === undefined) {
        literalOk = false;
        break;
      }
      if (ctx.covered(host)) out.push(filterRule(priority, action, c.prefix.text, c.prefix.exact));
    }
    if (literalOk) return { trivial: false, rules: out, regexes: 0 };
    if (!shape.capturingSource) return 'lookahead cannot be captured';
    const rc = regexCondition(ctx, shape.capturingSource, 'rewrite');
    if (typeof rc === 'string') return rc;
    if (rc === null) return { trivial: false, rules: [], regexes: 0 };
    const substitution = translateReplacement(rule.to, captures);
    if (substitution === null || captures + 1 > 9) return "replacement uses $`, $' or a group number RE2 cannot substitute";
    return {
      trivial: false,
      regexes: 1,
      rules: [{ priority, action: { type: 'redirect', redirect: { regexSubstitution: `${substitution}\\${captures + 1}` } }, condition: rc.condition }],
    };
  }

  if (!shape.prefix) return 'negative lookahead after a prefix that needs a regex';
  const run = shape.collapsedRun;
  for (const e of shape.prefix.expansions) {
    const parts = splitHttpPrefix(e.text);
    const action = literalAction(e, false, rule.to, captures);
    if (!parts || parts.rest === '' || !action || !urlFilterSafe(e.text)) return 'negative lookahead after a prefix that needs a regex';
    if (!ctx.covered(parts.host)) continue;
    out.push(filterRule(priority, action, e.text, false));
    // `/+(?!A)` replaces the whole run of slashes, which a prefix action cannot: a URL with two
    // or more is left alone (missed, never rewritten differently from the reference).
    if (run !== null) {
      if (!urlFilterSafe(e.text + run)) return 'negative lookahead after a run that cannot be a URL filter';
      out.push(filterRule(priority + 1, { type: 'allow' }, e.text + run, false));
    }
  }
  const carved = carveOuts(
    shape.carved.map((c) => c.prefix),
    false,
  );
  if (typeof carved === 'string') return carved;
  return { trivial: false, rules: [...out, ...carved], regexes: 0 };
}

/**
 * A rule whose `from` is a finite set of URL prefixes becomes regex-free DNR rules (see
 * `literalAction`). Null when any prefix needs a real substitution.
 */
function literalRule(from: string, to: string, priority: number, covered: (host: string) => boolean): Planned[] | null {
  const lit = expandLiteralLanguage(from);
  // `$&` would be the whole URL, which a filter does not know.
  if (!lit || (lit.consumesRest && to.includes('$&'))) return null;
  const captures = captureCount(from);
  const out: Planned[] = [];
  for (const e of lit.expansions) {
    const parts = splitHttpPrefix(e.text);
    if (!parts || !urlFilterSafe(e.text)) return null;
    const exact = e.exact === true;
    const action = literalAction(e, exact || lit.consumesRest, to, captures);
    if (!action) return null;
    // The reference only applies a ruleset to its targets; prefixes for other hosts never fire.
    if (!covered(parts.host)) continue;
    // A prefix ending inside the host name cannot be told apart from longer hosts by a filter;
    // `^` pins it to exactly this host (a longer host is left unrewritten, never mis-rewritten).
    const boundary = parts.rest === '' && !exact ? '^' : '';
    out.push({ priority, action, condition: { urlFilter: `|${e.text}${boundary}${exact ? '|' : ''}`, ...caseSensitive, ...ALL_TYPES() } });
  }
  return out;
}

/**
 * `^http://host/+`, whose replacement swallows a whole run of slashes (`^http://example\.com/+`
 * → `https://www.example.com/`): the one-slash URLs as literalRule has them, and an `allow` one
 * step up for two slashes or more, which a prefix action would keep (missed, never rewritten
 * differently). Null when the rule has another shape.
 */
function slashRunRule(from: string, to: string, priority: number, covered: (host: string) => boolean): Planned[] | null {
  const els = topLevelElements(from);
  const last = els?.[els.length - 1];
  if (last?.type !== 'Quantifier' || last.min !== 1 || last.max !== Infinity || !last.greedy) return null;
  if (last.element.type !== 'Character' || last.element.value !== 0x2f) return null;
  const rules = literalRule(from.slice(0, last.start) + last.element.raw, to, priority, covered);
  if (!rules || rules.some((r) => !r.condition.urlFilter?.endsWith('/'))) return null;
  return rules.flatMap((r) => [r, { priority: priority + 1, action: { type: 'allow' }, condition: { ...r.condition, urlFilter: `${r.condition.urlFilter}/` } }]);
}

/** Trivial rules of all rulesets merged: one upgradeScheme rule per (priority, host shape). */
function trivialGroups(plans: RulesetPlan[]): Planned[] {
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
