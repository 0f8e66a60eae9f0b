import { type Engine, type Ruleset } from '@httpsify/engine';
import { ALL_RESOURCE_TYPES, compileDnrOverrides, DNR_LIMITS, type DnrRule } from '@httpsify/engine/dnr';
import { ext } from './browser-api.js';
import { CHANNEL_RULE_ID_BASE, inLoopSessionRange, inOverrideRange, LOOP_ALLOW_PRIORITY, LOOP_SESSION_ID_BASE, nextId } from './dnr-layout.js';

export { LOOP_ALLOW_PRIORITY };

/** The `allow` session rule for a host in a redirect loop: exact host, any port, http only. */
export function loopAllowRule(id: number, host: string): DnrRule {
  return {
    id,
    priority: LOOP_ALLOW_PRIORITY,
    action: { type: 'allow' },
    condition: { urlFilter: `|http://${host}^`, resourceTypes: [...ALL_RESOURCE_TYPES] },
  };
}

export async function addLoopAllowRule(host: string): Promise<void> {
  const existing = await ext.declarativeNetRequest.getSessionRules();
  const id = nextId(existing, LOOP_SESSION_ID_BASE, inLoopSessionRange);
  await ext.declarativeNetRequest.updateSessionRules({ addRules: [loopAllowRule(id, host) as chrome.declarativeNetRequest.Rule] });
}

/** Drops the loop-guard rule of one host (the user asked to try HTTPS there again). */
export async function removeLoopAllowRule(host: string): Promise<void> {
  const existing = await ext.declarativeNetRequest.getSessionRules();
  const filter = loopAllowRule(0, host).condition.urlFilter;
  await ext.declarativeNetRequest.updateSessionRules({ removeRuleIds: existing.filter((r) => r.condition.urlFilter === filter).map((r) => r.id) });
}

export async function clearSessionRules(): Promise<void> {
  const existing = await ext.declarativeNetRequest.getSessionRules();
  await ext.declarativeNetRequest.updateSessionRules({ removeRuleIds: existing.map((r) => r.id) });
}

/** Dynamic rule ids below this are the ruleset overrides; channel and settings rules sit above. */
export const OVERRIDE_RULE_ID_LIMIT = CHANNEL_RULE_ID_BASE;

/**
 * The static ruleset holds the defaults; user overrides live in dynamic rules, recompiled
 * whenever they change (rulesets switched on are compiled, rulesets switched off are shadowed).
 */
export async function syncDynamicRules(engine: Engine, defaultsInUse = true): Promise<{ ruleCount: number; omitted: number }> {
  const enable: Ruleset[] = [];
  const disable: Ruleset[] = [];
  // While a channel replaces the defaults, the static ruleset is off and so are its overrides.
  for (let id = 0; defaultsInUse && id < engine.rulesetCount; id++) {
    const on = engine.isActive(id);
    // The static ruleset was compiled with mixed content off: mixed-content rulesets the switch
    // turns on are overrides like any other.
    if (on === engine.isDefaultActive(id, false)) continue;
    (on ? enable : disable).push(engine.ruleset(id));
  }
  const existing = await ext.declarativeNetRequest.getDynamicRules();
  // Dynamic and session regexes share one budget with the other writers' rules (handoff, channels).
  const session = await ext.declarativeNetRequest.getSessionRules();
  const othersRegex = [...existing.filter((r) => !inOverrideRange(r.id)), ...session].filter((r) => r.condition.regexFilter !== undefined).length;
  const { rules, report } = compileDnrOverrides(enable, disable, { firstId: 1, regexLimit: Math.max(0, DNR_LIMITS.regexRules - othersRegex) });
  if (rules.length >= OVERRIDE_RULE_ID_LIMIT) throw new Error('too many override rules');
  // Refuse rather than half-apply: Chromium would reject the whole update anyway.
  if (report.overLimits.length > 0) throw new Error(`the switched rulesets do not fit Chromium's dynamic rule limits: ${report.overLimits.join('; ')}`);
  await ext.declarativeNetRequest.updateDynamicRules({
    removeRuleIds: existing.filter((r) => r.id < OVERRIDE_RULE_ID_LIMIT).map((r) => r.id),
    addRules: rules as chrome.declarativeNetRequest.Rule[],
  });
  return { ruleCount: rules.length, omitted: report.omissions.length };
}
