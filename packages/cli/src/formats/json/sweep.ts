import type { SweepSummary } from '../../sweep/summary.js';

/** The sweep's summary.json, on one line: read back by the next sweep's --previous. */
export function sweepSummaryJson(summary: SweepSummary): string {
  return `${JSON.stringify(summary)}\n`;
}
