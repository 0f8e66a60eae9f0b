import { type Ruleset } from '@httpsify/engine';
import { compileDnr, DNR_LIMITS, type DnrRule } from '@httpsify/engine/dnr';
import {
  compiledDestination,
  destinationPolicy,
  readDestination,
  type RuleDestination,
  ruleDestination,
} from '@httpsify/engine/channels';
import {
  CHANNEL_PRIORITY_BASE,
  CHANNEL_PRIORITY_STEP,
  CHANNEL_RULE_ID_BASE,
  MAX_DNR_CHANNELS,
} from '../dnr/layout.js';
import { type DnrUsage, usageOf } from '../dnr/rules.js';
import {
  type DnrScope,
  restrictRulesToScope,
  scopeToDnr,
  targetMayBeInScope,
} from './scope-dnr.js';

/** Regex rules left free for the settings' own rules (user rules, HTTPS-first) to grow into later. */
export const REGEX_RESERVED_FOR_SETTINGS = 100;

/** The rulesets of a library that Chromium does not apply whole, by what it does with them. */
export interface RulesetCoverage {
  /** Rulesets compiled (the library's rulesets that are on). */
  rulesets: number;
  /** Their page loads go to the handoff page (the engine decides them); subresources in part or not. */
  pageLoadsOnly: string[];
  /** Applied in part only (a target with a wildcard on the right, which the handoff rule cannot list). */
  inPart: string[];
}

/**
 * `incomplete`: the names of the rulesets the rules do not carry whole (left out, cut or
 * partial); `coverage` says what becomes of them (the library). `note`, when given, is shown
 * instead of the count of rules left out (the library says what part applies).
 */
export type ChannelRulesResult =
  | {
      ok: true;
      rules: DnrRule[];
      leftOut: number;
      incomplete?: string[];
      coverage?: RulesetCoverage;
      note?: string;
    }
  | { ok: false; reason: string };

/**
 * Whether Chromium may run a rule of an installed (so destination-checked) bundle. Chromium
 * redirects without showing the result, so a destination must be known in advance: literal ones
 * were checked at install; "some subdomain of D" must lie within a scope host taken with its
 * subdomains, or a `*.` destination; others (`https://$1.attacker.example/`) cannot be kept in.
 * Literal ones must also read the same to Chromium's URL parser as to a plain reading (the
 * install check judged them parsed; a bundle stored by an older version was judged as a string).
 */
function destinationKnownSafe(
  to: string,
  from: string,
  dnr: DnrScope,
  destinations: readonly string[],
): boolean {
  return destinationSafe(ruleDestination(to, from), dnr, destinations);
}

function destinationSafe(
  dest: RuleDestination,
  dnr: DnrScope,
  destinations: readonly string[],
): boolean {
  if (dest.kind === 'same-url') return true;
  if (dest.kind === 'literal') return dest.urls.every((url) => readDestination(url) !== null);
  if (dnr.kind === 'everything') return true;
  if (dest.kind === 'computed') return false;
  const within = (d: string, base: string) => d === base || d.endsWith(`.${base}`);
  return (
    dnr.scope.hosts.some((h) => h.subdomains && within(dest.of, h.host)) ||
    destinations.some((d) => d.startsWith('*.') && within(dest.of, d.slice(2)))
  );
}

/** A compiled rule's destination: known safe as a source rule's is, literal ones inside the policy too. */
function compiledRuleSafe(
  rule: DnrRule,
  dnr: DnrScope,
  destinations: readonly string[],
  policy: { allows(url: string): boolean },
): boolean {
  const dest = compiledDestination(rule);
  if (dest === null) return true;
  if (dest.kind === 'literal' && !dest.urls.every((u) => policy.allows(u))) return false;
  return destinationSafe(dest, dnr, destinations);
}

export interface ChannelRuleLimits {
  /** Rules the compiler may spend on literal host rules to save regexes. */
  ruleLimit?: number;
  /** Redirects ("unsafe" rules) allowed; host swaps are grouped to fit, a regex per group. */
  redirectLimit?: number;
  /** Regexes the browser refuses (`isRegexSupported`): rulesets that need one are left out. */
  refusedRegexes?: ReadonlySet<string>;
}

/**
 * A channel's active rulesets as DNR rules confined to its scope, priorities relative to the
 * channel (0 .. CHANNEL_PRIORITY_STEP), ids unassigned. Rulesets whose regexes do not fit
 * `regexLimit` are left out and counted, as for the default static ruleset. So are rulesets
 * with a rule whose destination cannot be shown to stay inside the scope and destinations
 * (see destinationKnownSafe; the engine on Firefox checks those on every rewrite).
 */
export function compileChannelRules(
  rulesets: Ruleset[],
  scope: string,
  regexLimit: number,
  destinations: readonly string[] = [],
  limits: ChannelRuleLimits = {},
): ChannelRulesResult {
  const {
    ruleLimit = DNR_LIMITS.dynamicRules,
    redirectLimit = DNR_LIMITS.unsafeDynamicRules,
    refusedRegexes,
  } = limits;
  const dnrScope = scopeToDnr(scope);
  if (!dnrScope.ok)
    return { ok: false, reason: `its scope cannot be enforced on Chromium: ${dnrScope.reason}` };
  const inScope = rulesets.filter((r) =>
    r.targets.some((t) => targetMayBeInScope(t.host, dnrScope.dnr)),
  );
  let relevant = inScope.filter((r) =>
    r.rules.every((rule) => destinationKnownSafe(rule.to, rule.from, dnrScope.dnr, destinations)),
  );
  const options = {
    isActive: () => true,
    regexLimit: Math.max(0, regexLimit),
    ruleLimit: Math.max(0, ruleLimit),
    redirectLimit: Math.max(0, redirectLimit),
    ...(refusedRegexes === undefined ? {} : { refusedRegexes }),
    firstId: 1,
  };
  // Judged again as Chromium will run them, confined to the scope (the redirect, substitution or
  // transform): a ruleset whose compiled form may leave the scope and destinations is left out,
  // found one by one.
  const policy = destinationPolicy(scope, destinations);
  const compiledSafe = (rules: readonly DnrRule[]) => {
    const confined = restrictRulesToScope(rules, dnrScope.dnr);
    return (
      !confined.ok ||
      confined.rules.every((r) => compiledRuleSafe(r, dnrScope.dnr, destinations, policy))
    );
  };
  let compiled = compileDnr(relevant, options);
  if (!compiledSafe(compiled.rules)) {
    relevant = relevant.filter((r) =>
      compiledSafe(compileDnr([r], { isActive: () => true }).rules),
    );
    compiled = compileDnr(relevant, options);
  }
  const unchecked = inScope.length - relevant.length;
  const restricted = restrictRulesToScope(compiled.rules, dnrScope.dnr);
  if (!restricted.ok)
    return { ok: false, reason: `its scope cannot be enforced on Chromium: ${restricted.reason}` };
  // Whatever the grouping of the whole set, nothing compiled may leave (checked, not assumed).
  if (!restricted.rules.every((r) => compiledRuleSafe(r, dnrScope.dnr, destinations, policy)))
    return {
      ok: false,
      reason: 'a compiled rule could send visits outside the scope and destinations',
    };
  const top = restricted.rules.reduce((m, r) => Math.max(m, r.priority), 0);
  if (top >= CHANNEL_PRIORITY_STEP)
    return {
      ok: false,
      reason: `internal: compiled priorities reach ${top}, above the channel band ${CHANNEL_PRIORITY_STEP}`,
    };
  const incomplete = new Set(compiled.report.omissions.map((o) => o.ruleset));
  for (const r of inScope) if (!relevant.includes(r)) incomplete.add(r.name);
  return {
    ok: true,
    rules: restricted.rules,
    leftOut: compiled.report.omissions.length + unchecked,
    incomplete: [...incomplete],
  };
}

export interface ChannelDnrInput {
  name: string;
  timestamp: number;
  scope: string;
  replacesDefaults: boolean;
  /**
   * Compiles on demand (only when the stored rules are out of date); `free` is what the limits
   * leave, `refused` the regexes the browser refuses.
   */
  compile(regexLimit: number, free: DnrUsage, refused: ReadonlySet<string>): ChannelRulesResult;
  /** The rules currently applied for this channel under the same scope (priorities relative), if any. */
  previous?: { timestamp: number; rules: DnrRule[] };
}

export interface AppliedChannel {
  timestamp: number;
  scope: string;
  firstId: number;
  count: number;
  priorityOffset: number;
  replacesDefaults: boolean;
  /** The library: the rulesets these rules do not carry whole. */
  coverage?: RulesetCoverage;
}

export interface ChannelDnrPlan {
  /** Every channel rule, ids and priorities final. */
  rules: DnrRule[];
  applied: Record<string, AppliedChannel>;
  /** Why a channel's current bundle is not (fully) in the rules, for the options page. */
  problems: Record<string, string>;
  /** A channel that replaces the defaults has rules in place: the static ruleset goes off. */
  disableDefaults: boolean;
}

export function channelPriorityOffset(position: number): number {
  return CHANNEL_PRIORITY_BASE + (MAX_DNR_CHANNELS - 1 - position) * CHANNEL_PRIORITY_STEP;
}

/**
 * Lays out the channels' rules within what the other dynamic rules leave free. A channel whose
 * rules cannot be enforced or do not fit is never applied in part: its previous rules stay (if
 * they still fit), otherwise it has none, and the reason is reported.
 */
export function planChannelDnr(
  channels: readonly ChannelDnrInput[],
  others: DnrUsage,
  refused: ReadonlySet<string> = new Set(),
): ChannelDnrPlan {
  const used = { ...others };
  const plan: ChannelDnrPlan = { rules: [], applied: {}, problems: {}, disableDefaults: false };
  let nextId = CHANNEL_RULE_ID_BASE;
  const fits = (u: DnrUsage): boolean =>
    used.rules + u.rules <= DNR_LIMITS.dynamicRules &&
    used.regexRules + u.regexRules <= DNR_LIMITS.regexRules &&
    used.unsafeRules + u.unsafeRules <= DNR_LIMITS.unsafeDynamicRules;
  channels.forEach((channel, position) => {
    if (position >= MAX_DNR_CHANNELS) {
      plan.problems[channel.name] =
        `Chromium applies at most ${MAX_DNR_CHANNELS} channels; move this one up to use it there`;
      return;
    }
    const regexLimit = DNR_LIMITS.regexRules - REGEX_RESERVED_FOR_SETTINGS - used.regexRules;
    const free = {
      rules: DNR_LIMITS.dynamicRules - used.rules,
      regexRules: Math.max(0, regexLimit),
      unsafeRules: DNR_LIMITS.unsafeDynamicRules - used.unsafeRules,
    };
    const compiled = channel.compile(regexLimit, free, refused);
    let chosen: { timestamp: number; rules: DnrRule[]; coverage?: RulesetCoverage } | null = null;
    if (compiled.ok) {
      const need = usageOf(compiled.rules);
      if (fits(need)) {
        chosen = {
          timestamp: channel.timestamp,
          rules: compiled.rules,
          ...(compiled.coverage === undefined ? {} : { coverage: compiled.coverage }),
        };
        if (compiled.note !== undefined) plan.problems[channel.name] = compiled.note;
        else if (compiled.leftOut > 0)
          plan.problems[channel.name] =
            `rules or rulesets that cannot be expressed as Chromium rules are left out (${compiled.leftOut})`;
      } else {
        plan.problems[channel.name] =
          `its rules do not fit Chromium's dynamic rule limits, which it shares with your other settings ` +
          `(needed / allowed: all rules ${need.rules} / ${DNR_LIMITS.dynamicRules}, with a regex ${need.regexRules} / ${DNR_LIMITS.regexRules}, ` +
          `redirects ${need.unsafeRules} / ${DNR_LIMITS.unsafeDynamicRules})`;
      }
    } else {
      plan.problems[channel.name] = compiled.reason;
    }
    if (
      chosen === null &&
      channel.previous !== undefined &&
      fits(usageOf(channel.previous.rules))
    ) {
      chosen = channel.previous;
      plan.problems[channel.name] +=
        `; the rules applied before (version ${channel.previous.timestamp}) stay in use`;
    }
    if (chosen === null) return;
    const priorityOffset = channelPriorityOffset(position);
    const placed = chosen.rules.map((r, i) => ({
      ...r,
      id: nextId + i,
      priority: r.priority + priorityOffset,
    }));
    plan.applied[channel.name] = {
      timestamp: chosen.timestamp,
      scope: channel.scope,
      firstId: nextId,
      count: placed.length,
      priorityOffset,
      replacesDefaults: channel.replacesDefaults,
      ...(chosen.coverage === undefined ? {} : { coverage: chosen.coverage }),
    };
    plan.rules.push(...placed);
    nextId += placed.length;
    const u = usageOf(placed);
    used.rules += u.rules;
    used.regexRules += u.regexRules;
    used.unsafeRules += u.unsafeRules;
    if (channel.replacesDefaults) plan.disableDefaults = true;
  });
  return plan;
}
