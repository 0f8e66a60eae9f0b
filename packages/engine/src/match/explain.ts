import type { PatternCache } from './pattern-cache.js';
import type { StringPool } from './string-pool.js';

/** What happened with one candidate ruleset while rewriting a URL. */
export interface ExplainStep {
  ruleset: string;
  /** The target pattern through which the ruleset became a candidate (e.g. `*.example.com`). */
  target: string;
  active: boolean;
  inactiveReason?: string;
  /**
   * inactive: skipped because it is off; excluded: an exclusion matched; rewrote: a rule changed
   * the URL (this ruleset decided); no-rule-matched: no rule changed it; not-reached: an earlier
   * ruleset already decided; refused: one of its regexes was refused as unsafe, so it is not used.
   */
  outcome: 'inactive' | 'excluded' | 'rewrote' | 'no-rule-matched' | 'not-reached' | 'refused';
  exclusion?: string;
  rule?: { index: number; from: string; to: string };
  result?: string;
}

export interface Explanation {
  url: string;
  /** The URL rules were applied to (normalised, credentials set aside), or null if unparseable. */
  href: string | null;
  host: string | null;
  error?: string;
  candidates: ExplainStep[];
  rewritten: string | null;
  ruleset: string | null;
}

/**
 * Runs active ruleset `id` on `href` pattern by pattern and records in `step` what decided:
 * the exclusion that vetoed, the rule that rewrote (with its result), none, or a refusal by
 * the regex door (which disables the ruleset, so nothing else it did counts).
 */
export function describeRuleset(
  patterns: PatternCache,
  strings: StringPool,
  id: number,
  href: string,
  step: ExplainStep,
): void {
  patterns.begin(id);
  describePatterns(patterns, strings, id, href, step);
  if (patterns.refused[id] === 1) {
    step.outcome = 'refused';
    delete step.result;
    delete step.rule;
    delete step.exclusion;
  }
}

function describePatterns(
  patterns: PatternCache,
  strings: StringPool,
  id: number,
  href: string,
  step: ExplainStep,
): void {
  if (patterns.refused[id] === 1) return;
  for (let e = patterns.exclusionStart.get(id); e < patterns.exclusionStart.get(id + 1); e++) {
    if (patterns.excludes(e, href)) {
      step.outcome = 'excluded';
      step.exclusion = strings.cached(patterns.exclusionPattern.get(e));
      return;
    }
  }
  const start = patterns.ruleStart.get(id);
  for (let r = start; r < patterns.ruleStart.get(id + 1); r++) {
    const out = patterns.applyRule(r, href);
    if (out !== null) {
      step.outcome = 'rewrote';
      step.rule = {
        index: r - start,
        from: strings.cached(patterns.ruleFrom.get(r)),
        to: strings.cached(patterns.ruleTo.get(r)),
      };
      step.result = out;
      return;
    }
  }
  step.outcome = 'no-rule-matched';
}

/** Human-readable form for `httpsify rewrite --explain`. */
export function formatExplanation(e: Explanation): string {
  const lines = [`${e.url}`];
  if (e.error !== undefined) return `${lines[0]}\n  error: ${e.error}`;
  if (e.href !== e.url) lines.push(`  normalised: ${e.href}`);
  lines.push(`  host: ${e.host}`);
  if (e.candidates.length === 0) lines.push('  no ruleset targets this host');
  e.candidates.forEach((c, i) => {
    const head = `  ${i + 1}. ${c.ruleset} (target ${c.target})`;
    switch (c.outcome) {
      case 'inactive':
        lines.push(`${head}: inactive, ${c.inactiveReason ?? 'off'}`);
        break;
      case 'excluded':
        lines.push(`${head}: active, excluded by ${c.exclusion}`);
        break;
      case 'rewrote':
        lines.push(
          `${head}: active, rule ${(c.rule?.index ?? 0) + 1} from="${c.rule?.from}" to="${c.rule?.to}" rewrote it to ${c.result}`,
        );
        break;
      case 'no-rule-matched':
        lines.push(`${head}: active, no rule changed the URL`);
        break;
      case 'refused':
        lines.push(`${head}: not used, one of its regular expressions was refused as unsafe`);
        break;
      case 'not-reached':
        lines.push(
          `${head}: not tried, an earlier ruleset decided${c.active ? '' : ` (also inactive: ${c.inactiveReason})`}`,
        );
        break;
    }
  });
  lines.push(
    e.rewritten === null ? '  result: unchanged' : `  result: ${e.rewritten} (by ${e.ruleset})`,
  );
  return lines.join('\n');
}
