/**
 * The "overrides" layer: the user's switches for the default rulesets. The static ruleset holds
 * the defaults as shipped; a ruleset switched on is compiled here, one switched off is shadowed
 * by `allow` rules at its ceiling priority. Recompiled whenever the switches change.
 *
 * An `allow` shadows every rule below it too: HTTPS-first's upgrade and the other rulesets of
 * the same hosts, which decide() still applies once the ruleset is off. So the main frames of a
 * switched-off ruleset's hosts go to the handoff page, which asks decide() (one switch, one
 * outcome in both browsers).
 */
import { type Engine, type Ruleset } from '@httpsify/engine';
import { compileDnrOverrides, type DnrReport } from '@httpsify/engine/dnr';
import { handoffScopeRules, rulesetsScope } from './handoff-rules.js';
import type { RuleWriter } from './rule-writer.js';
import type { RuleBody } from './rules.js';

/** The rulesets whose state differs from the static ruleset's (compiled with mixed content off). */
export function switchedRulesets(
  engine: Engine,
  defaultsInUse: boolean,
): { enable: Ruleset[]; disable: Ruleset[] } {
  const enable: Ruleset[] = [];
  const disable: Ruleset[] = [];
  // While a channel replaces the defaults, the static ruleset is off and so are its overrides.
  for (let id = 0; defaultsInUse && id < engine.rulesetCount; id++) {
    const on = engine.isActive(id);
    if (on === engine.isDefaultActive(id, false)) continue;
    (on ? enable : disable).push(engine.ruleset(id));
  }
  return { enable, disable };
}

/**
 * The overrides layer for the engine's switches: the switched-on rulesets compiled within
 * `regexLimit`, `allow` shadows for the switched-off ones, and their hosts' main frames to the
 * handoff page. Pure (the differential test builds it as the extension does).
 */
export function overrideRules(
  engine: Engine,
  handoffPage: string,
  regexLimit: number,
  defaultsInUse = true,
): {
  rules: RuleBody[];
  report: DnrReport;
  partial: string[];
  /** Every switched ruleset's page loads to the handoff page: the set when `rules` do not fit. */
  pageLoadsOnly: RuleBody[];
} {
  const { enable, disable } = switchedRulesets(engine, defaultsInUse);
  // Room for the widest handoff (every switched ruleset's hosts), whatever the compiler omits.
  const pageLoadsOnly = handoffScopeRules(rulesetsScope([...enable, ...disable]), handoffPage);
  const regexes = pageLoadsOnly.filter((r) => r.condition.regexFilter !== undefined).length;
  const { rules, report } = compileDnrOverrides(enable, disable, {
    regexLimit: Math.max(0, regexLimit - regexes),
  });
  // A ruleset switched on that DNR does not carry wholly: its page loads go to the page too.
  const omitted = new Set(report.omissions.map((o) => o.ruleset));
  const partial = enable.filter((rs) => omitted.has(rs.name));
  const handoff = handoffScopeRules(rulesetsScope([...disable, ...partial]), handoffPage);
  return {
    rules: [...rules.map(({ id: _id, ...body }) => body), ...handoff],
    report,
    partial: partial.map((rs) => rs.name),
    pageLoadsOnly,
  };
}

/**
 * Compiles the switched rulesets into what the other layers leave free and writes them. When
 * they do not fit, every switched ruleset's page loads go to the handoff page (decide() there)
 * and nothing else is written: their subresources follow the static ruleset as shipped, which
 * may upgrade more than decide() but never less for a ruleset switched off. The writer's error
 * (rule-writer.ts) says so and is rethrown.
 */
export async function syncOverrides(
  writer: RuleWriter,
  engine: Engine,
  handoffPage: string,
  defaultsInUse = true,
): Promise<{ ruleCount: number; omitted: number }> {
  const free = await writer.free('overrides');
  const { rules, report, partial, pageLoadsOnly } = overrideRules(
    engine,
    handoffPage,
    free.regexRules,
    defaultsInUse,
  );
  await writer.setLayer(
    'overrides',
    rules,
    [{ rules: pageLoadsOnly, without: SWITCHED_SUBRESOURCES_LEFT_OUT }],
    partial.length === 0
      ? null
      : `part of ${partial.length} ruleset(s) switched on, which DNR cannot express here (their page loads go to the rulesets): ${partial.slice(0, 5).join(', ')}`,
  );
  return { ruleCount: rules.length, omitted: report.omissions.length };
}

/** How an overrides layer cut to the handoff alone is named in its error (and the UI). */
export const SWITCHED_SUBRESOURCES_LEFT_OUT =
  "the switched rulesets' rules for what pages load (their page loads go to the rulesets)";
