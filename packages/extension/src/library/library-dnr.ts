import type { Ruleset } from '@httpsify/engine';
import { type ChannelRulesResult, compileChannelRules } from '../channels/channel-dnr.js';
import { type DnrUsage, usageOf } from '../dnr/rules.js';

/**
 * The imported library as Chromium dynamic rules, within what the other dynamic rules leave
 * free. Unlike a channel (all or nothing), a library may be applied in part: when its rules do
 * not fit, a shorter run of its rulesets (in file-name order) is compiled, shrunk in proportion
 * to the excess (a few compiles at most), and the note says how many rulesets Chromium applies.
 * Firefox uses the whole library through the engine.
 */
export function compileLibraryRules(rulesets: readonly Ruleset[], free: DnrUsage): ChannelRulesResult {
  const fits = (u: DnrUsage) => u.rules <= free.rules && u.regexRules <= free.regexRules && u.unsafeRules <= free.unsafeRules;
  let count = rulesets.length;
  for (let attempt = 0; attempt < 6 && count > 0; attempt++) {
    const compiled = compileChannelRules(rulesets.slice(0, count), '', free.regexRules, [], free.rules);
    if (!compiled.ok) return compiled;
    const need = usageOf(compiled.rules);
    if (fits(need)) {
      if (compiled.rules.length === 0 && rulesets.length > 0) break;
      if (count === rulesets.length && compiled.leftOut === 0) return compiled;
      const parts: string[] = [];
      if (count < rulesets.length)
        parts.push(
          `Chromium's limit on added rules leaves room for ${count.toLocaleString('en')} of its ${rulesets.length.toLocaleString('en')} rulesets; the others are not applied in this browser`,
        );
      if (compiled.leftOut > 0)
        parts.push(`rules or rulesets that cannot be written as Chromium rules are left out (${compiled.leftOut.toLocaleString('en')})`);
      return { ...compiled, note: parts.join('; ') };
    }
    // Shrink by the worst excess, with a margin: rules per ruleset vary.
    const ratio = Math.min(
      free.rules / Math.max(1, need.rules),
      need.regexRules === 0 ? 1 : free.regexRules / need.regexRules,
      need.unsafeRules === 0 ? 1 : free.unsafeRules / need.unsafeRules,
    );
    count = Math.min(count - 1, Math.floor(count * ratio * 0.95));
  }
  return { ok: false, reason: 'Chromium has no room left for its rules (your other settings and channels use it)' };
}
