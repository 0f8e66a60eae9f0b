/**
 * The "overrides" layer: the user's switches for the default rulesets. The static ruleset holds
 * the defaults as shipped; a ruleset switched on is compiled here, one switched off is shadowed
 * by `allow` rules at its ceiling priority. Recompiled whenever the switches change.
 */
import { type Engine, type Ruleset } from '@httpsify/engine';
import { compileDnrOverrides } from '@httpsify/engine/dnr';
import type { RuleWriter } from './rule-writer.js';

/** The rulesets whose state differs from the static ruleset's (compiled with mixed content off). */
export function switchedRulesets(engine: Engine, defaultsInUse: boolean): { enable: Ruleset[]; disable: Ruleset[] } {
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

/** Compiles the switched rulesets into what the other layers leave free and writes them. */
export async function syncOverrides(writer: RuleWriter, engine: Engine, defaultsInUse = true): Promise<{ ruleCount: number; omitted: number }> {
  const { enable, disable } = switchedRulesets(engine, defaultsInUse);
  const free = await writer.free('overrides');
  const { rules, report } = compileDnrOverrides(enable, disable, { regexLimit: free.regexRules });
  // Refuse rather than half-apply (the writer would refuse the whole layer too).
  if (report.overLimits.length > 0) throw new Error(`the switched rulesets do not fit Chromium's dynamic rule limits: ${report.overLimits.join('; ')}`);
  await writer.setLayer('overrides', rules);
  return { ruleCount: rules.length, omitted: report.omissions.length };
}
