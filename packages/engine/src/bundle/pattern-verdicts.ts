import { Form, prepareRule, prepareTest } from '../regex/prepared-pattern.js';
import type { Ruleset } from '../model/ruleset.js';
import { judgeRegex, type PatternUse } from '../regex/safe-regex.js';
import { PatternVerdictCode, RuleKind } from './format.js';

/**
 * The regex door's verdict on every pattern of `rulesets`, in PatternVerdict order (rules,
 * exclusions, then each securecookie's host and name), worked out exactly as the matcher would
 * on first use: only patterns it runs as a regex get one (None for the rest). `ruleKinds` are
 * the RuleKind of every rule in the same order.
 */
export function patternVerdicts(rulesets: readonly Ruleset[], ruleKinds: readonly number[]): PatternVerdictCode[] {
  const out: PatternVerdictCode[] = [];
  const judged = (source: string, form: Form, use: PatternUse): PatternVerdictCode => {
    if (form !== Form.Regex) return PatternVerdictCode.None;
    const verdict = judgeRegex(source, use);
    if (verdict.kind !== 'proven') return PatternVerdictCode.Judge;
    return verdict.quadratic ? PatternVerdictCode.Quadratic : PatternVerdictCode.Proven;
  };
  let r = 0;
  for (const rs of rulesets) {
    for (const rule of rs.rules) {
      const general = ruleKinds[r++] === RuleKind.General;
      out.push(general ? judged(rule.from, prepareRule(rule.from, rule.to).form, { use: 'replace', to: rule.to }) : PatternVerdictCode.None);
    }
  }
  for (const rs of rulesets) for (const e of rs.exclusions) out.push(judged(e.pattern, prepareTest(e.pattern).form, { use: 'test' }));
  for (const rs of rulesets) {
    for (const c of rs.secureCookies) {
      out.push(judged(c.host, prepareTest(c.host).form, { use: 'test' }));
      out.push(judged(c.name, prepareTest(c.name).form, { use: 'test' }));
    }
  }
  return out;
}
