import { formatExplanation, type Explanation, type RewriteOutcome } from '@httpsify/engine';

/**
 * `rewrite`'s text output, one line per input line (the command streams them): the rewritten
 * URL, or the input unchanged when nothing rewrites it (a pipe keeps its line count).
 */
export function rewriteLine(url: string, r: Pick<RewriteOutcome, 'rewritten'>): string {
  return r.rewritten ?? url;
}

/** `rewrite --explain`: the candidate rulesets in order and what each decided. */
export function explanationText(explanation: Explanation): string {
  return formatExplanation(explanation);
}
