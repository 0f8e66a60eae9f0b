import type { Ruleset } from '@httpsify/engine';
import {
  type ChannelRulesResult,
  compileChannelRules,
  type RulesetCoverage,
} from '../channels/channel-dnr.js';
import { CHANNEL_PRIORITY_STEP } from '../dnr/layout.js';
import { type DnrUsage, usageOf } from '../dnr/rules.js';
import { handoffDomainsRule, rulesetsScope } from '../dnr/handoff-rules.js';

const count = (n: number) => n.toLocaleString('en');

/**
 * Above every compiled rule of the library (relative to its band): main frames of the rulesets
 * Chromium cannot apply whole go to the handoff page, where the engine decides them.
 */
export const LIBRARY_HANDOFF_PRIORITY = CHANNEL_PRIORITY_STEP - 1;

/**
 * The imported library as Chromium dynamic rules, within what the other dynamic rules leave
 * free. Unlike a channel (all or nothing), a library may be applied in part: its host-swap
 * redirects are grouped to fit the redirect limit (the compiler's `redirectLimit`), and when
 * its rules still do not fit, a shorter run of its rulesets (in file-name order) is compiled,
 * shrunk in proportion to the excess (a few compiles at most). `incomplete` names every ruleset
 * the rules do not carry whole; with `handoffPage`, one more rule sends their sites' page loads
 * to the handoff page, and `coverage` names those whose every target it covers (the others have
 * a wildcard on the right, `www.example.*`, which a domain list cannot hold) apart. Firefox uses
 * the whole library through the engine.
 */
export function compileLibraryRules(
  rulesets: readonly Ruleset[],
  free: DnrUsage,
  handoffPage: string | null = null,
  refusedRegexes: ReadonlySet<string> = new Set(),
): ChannelRulesResult {
  // The handoff rule is one rule, one regex and one redirect.
  const spare = handoffPage === null ? 0 : 1;
  const room = {
    rules: free.rules - spare,
    regexRules: free.regexRules - spare,
    unsafeRules: free.unsafeRules - spare,
  };
  const fits = (u: DnrUsage) =>
    u.rules <= room.rules && u.regexRules <= room.regexRules && u.unsafeRules <= room.unsafeRules;
  let n = rulesets.length;
  for (
    let attempt = 0;
    attempt < 6 && n > 0 && room.rules >= 0 && room.regexRules >= 0 && room.unsafeRules >= 0;
    attempt++
  ) {
    const compiled = compileChannelRules(rulesets.slice(0, n), '', room.regexRules, [], {
      ruleLimit: room.rules,
      redirectLimit: room.unsafeRules,
      refusedRegexes,
    });
    if (!compiled.ok) return compiled;
    const need = usageOf(compiled.rules);
    if (fits(need)) {
      if (compiled.rules.length === 0 && rulesets.length > 0) break;
      const names = new Set([
        ...(compiled.incomplete ?? []),
        ...rulesets.slice(n).map((r) => r.name),
      ]);
      if (names.size === 0) return compiled;
      const incomplete = rulesets.filter((r) => names.has(r.name));
      const scope = rulesetsScope(incomplete);
      const rules = [...compiled.rules];
      const coverage: RulesetCoverage = {
        rulesets: rulesets.length,
        pageLoadsOnly: [],
        inPart: [],
      };
      if (handoffPage !== null && scope.domains.length > 0)
        rules.push({
          id: 0,
          ...handoffDomainsRule(scope.domains, handoffPage, LIBRARY_HANDOFF_PRIORITY),
        });
      for (const r of incomplete)
        (handoffPage !== null && rulesetsScope([r]).patterns.length === 0
          ? coverage.pageLoadsOnly
          : coverage.inPart
        ).push(r.name);
      const note =
        `on Chromium, ${count(rulesets.length - incomplete.length)} of its ${count(rulesets.length)} rulesets apply fully; ` +
        `${count(coverage.pageLoadsOnly.length)} apply to page loads only (through the handoff page) and ` +
        `${count(coverage.inPart.length)} in part, as Chromium's limits and rule language allow`;
      return { ...compiled, rules, incomplete: incomplete.map((r) => r.name), coverage, note };
    }
    // Shrink by the worst excess, with a margin: rules per ruleset vary.
    const ratio = Math.min(
      room.rules / Math.max(1, need.rules),
      need.regexRules === 0 ? 1 : room.regexRules / need.regexRules,
      need.unsafeRules === 0 ? 1 : room.unsafeRules / need.unsafeRules,
    );
    n = Math.min(n - 1, Math.floor(n * ratio * 0.95));
  }
  return {
    ok: false,
    reason: 'Chromium has no room left for its rules (your other settings and channels use it)',
  };
}
