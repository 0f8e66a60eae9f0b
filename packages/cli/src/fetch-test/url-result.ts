import type { ChainOutcome } from './follow-redirects.js';

/** error: the ruleset fails the live test; warning and info are reported but do not fail it. */
export type FindingSeverity = 'error' | 'warning' | 'info';

export interface Finding {
  severity: FindingSeverity;
  /** Stable code for scripts reading the JSON report. */
  code: string;
  message: string;
}

/** Below this structure similarity, an info finding says the https page looks different. */
export const STRUCTURE_INFO_THRESHOLD = 0.9;

/** Everything the live test learned about one test URL. */
export interface UrlResult {
  ruleset: string;
  file: string;
  /** Position of the `<test>` element, or of the target that implies the test. */
  line: number | null;
  column: number | null;
  url: string;
  implicit: boolean;
  /** The URL after this ruleset's rules; null when no rule rewrote it (then nothing was fetched). */
  rewritten: string | null;
  plain: ChainOutcome | null;
  secure: ChainOutcome | null;
  /** Page-structure similarity (0..1) of the final plain and secure pages, when both are HTML. */
  similarity: number | null;
  findings: Finding[];
  verdict: 'ok' | 'failed' | 'skipped';
}

export function verdictOf(findings: readonly Finding[], fetched: boolean): UrlResult['verdict'] {
  if (findings.some((f) => f.severity === 'error')) return 'failed';
  return fetched ? 'ok' : 'skipped';
}
