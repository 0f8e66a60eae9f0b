import type { FetchTestReport } from '../../fetch-test/run-fetch-test.js';

/** `fetch-test --json FILE`: the whole report, and the ruleset files --disable-failing turned off. */
export function fetchTestJson(report: FetchTestReport, disabled: readonly string[]): string {
  return `${JSON.stringify({ ...report, disabled }, null, 2)}\n`;
}
