/**
 * The rules the extension writes as dynamic or session declarativeNetRequest rules, and how
 * Chromium counts them against its limits. Counted here only: the rule writer checks every
 * update against these sums, and planners ask it what is left.
 */
import { DNR_LIMITS, type DnrRule } from '@httpsify/engine/dnr';

/** The engine's rule, plus `initiatorDomains`, which only the settings' rules use. */
export type ExtRule = Omit<DnrRule, 'condition'> & {
  condition: DnrRule['condition'] & { initiatorDomains?: string[] };
};
/** A rule as a layer declares it: the writer gives it its id. */
export type RuleBody = Omit<ExtRule, 'id'>;

/** Usage, counted as Chromium counts its limits. */
export interface DnrUsage {
  /** Dynamic rules (session rules have a limit of their own). */
  rules: number;
  /** Regex rules: Chromium counts dynamic and session rules together. */
  regexRules: number;
  /** Dynamic `redirect` rules ("unsafe": at most 5,000). */
  unsafeRules: number;
}

export function usageOf(rules: readonly RuleBody[]): DnrUsage {
  return {
    rules: rules.length,
    regexRules: rules.filter((r) => r.condition.regexFilter !== undefined).length,
    unsafeRules: rules.filter((r) => r.action.type === 'redirect').length,
  };
}

/** Chromium's limits for what the extension adds at run time. */
export interface DnrLimits {
  dynamicRules: number;
  unsafeDynamicRules: number;
  sessionRules: number;
  unsafeSessionRules: number;
  regexRules: number;
}

export const RUNTIME_LIMITS: DnrLimits = {
  dynamicRules: DNR_LIMITS.dynamicRules,
  unsafeDynamicRules: DNR_LIMITS.unsafeDynamicRules,
  sessionRules: DNR_LIMITS.sessionRules,
  unsafeSessionRules: DNR_LIMITS.unsafeSessionRules,
  regexRules: DNR_LIMITS.regexRules,
};

/** What the dynamic and session rules use together. */
export interface StoreUsage {
  dynamic: DnrUsage;
  session: DnrUsage;
}

/** The limits `u` breaks, in words (empty when it fits). */
export function overLimits(u: StoreUsage, limits: DnrLimits): string[] {
  const over: string[] = [];
  const check = (used: number, limit: number, what: string) => {
    if (used > limit)
      over.push(`${used.toLocaleString('en')} ${what} > ${limit.toLocaleString('en')}`);
  };
  check(u.dynamic.rules, limits.dynamicRules, 'dynamic rules');
  check(u.dynamic.unsafeRules, limits.unsafeDynamicRules, 'dynamic redirect rules');
  check(u.session.rules, limits.sessionRules, 'session rules');
  check(u.session.unsafeRules, limits.unsafeSessionRules, 'session redirect rules');
  check(
    u.dynamic.regexRules + u.session.regexRules,
    limits.regexRules,
    'regex rules (dynamic and session)',
  );
  return over;
}

/**
 * A rule's content as a string with sorted keys, so a rule read back from the browser (which
 * may order fields differently) compares equal to the one written.
 */
export function ruleKey(rule: RuleBody): string {
  return JSON.stringify(rule, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : a > b ? 1 : 0,
          ),
        )
      : v,
  );
}
