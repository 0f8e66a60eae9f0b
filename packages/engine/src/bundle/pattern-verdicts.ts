import type { Ruleset } from '../model/ruleset.js';
import { rulesetPatterns } from '../regex/ruleset-regexes.js';
import { judgeRegex } from '../regex/safe-regex.js';
import { PatternVerdictCode } from './format.js';

/**
 * The regex door's verdict on every pattern of `rulesets`, in PatternVerdict order (rules,
 * exclusions, then each securecookie's host and name), worked out exactly as the matcher would
 * on first use: only patterns it runs as a regex get one (None for the rest).
 */
export function patternVerdicts(rulesets: readonly Ruleset[]): PatternVerdictCode[] {
  const out: PatternVerdictCode[] = [];
  for (const p of rulesetPatterns(rulesets)) {
    if (!p.regex) {
      out.push(PatternVerdictCode.None);
      continue;
    }
    const verdict = judgeRegex(p.source, p.use);
    if (verdict.kind !== 'proven') out.push(PatternVerdictCode.Judge);
    else out.push(verdict.quadratic ? PatternVerdictCode.Quadratic : PatternVerdictCode.Proven);
  }
  return out;
}
