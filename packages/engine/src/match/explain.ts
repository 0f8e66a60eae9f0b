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
        lines.push(`${head}: active, rule ${(c.rule?.index ?? 0) + 1} from="${c.rule?.from}" to="${c.rule?.to}" rewrote it to ${c.result}`);
        break;
      case 'no-rule-matched':
        lines.push(`${head}: active, no rule changed the URL`);
        break;
      case 'refused':
        lines.push(`${head}: not used, one of its regular expressions was refused as unsafe`);
        break;
      case 'not-reached':
        lines.push(`${head}: not tried, an earlier ruleset decided${c.active ? '' : ` (also inactive: ${c.inactiveReason})`}`);
        break;
    }
  });
  lines.push(e.rewritten === null ? '  result: unchanged' : `  result: ${e.rewritten} (by ${e.ruleset})`);
  return lines.join('\n');
}
