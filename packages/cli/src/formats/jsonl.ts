import type { Explanation } from '@httpsify/engine';
import type { ScopedRewriteOutcome } from '@httpsify/engine/channels';
import type { SweepResult } from '../sweep/verdicts.js';

/**
 * The JSON Lines outputs: one record per line, formatted one at a time so that the commands
 * writing them stay streaming (`rewrite` answers each input line as it comes; the sweep appends
 * each result to its journal with one write). Each function returns the line without its "\n".
 */

/** `rewrite --format jsonl`: the URL, its rewrite (null: none) and the ruleset that made it. */
export function rewriteRecord(url: string, r: ScopedRewriteOutcome): string {
  const record: Record<string, unknown> = { url, rewritten: r.rewritten, ruleset: r.ruleset };
  if (r.channel !== null) record['channel'] = r.channel;
  if (r.error !== undefined) record['error'] = r.error;
  // A channel rule that would have sent the URL outside its channel's scope and destinations.
  if (r.refused !== undefined) record['refused'] = r.refused;
  return JSON.stringify(record);
}

/** `rewrite --explain --format jsonl`: the engine's explanation as it is. */
export function explanationRecord(explanation: Explanation): string {
  return JSON.stringify(explanation);
}

/** One line of the sweep's journal (results.jsonl), read back by `readResults`. */
export function sweepResultLine(result: SweepResult): string {
  return JSON.stringify(result);
}
