import type { DnrCompileResult, DnrCoverage, TrailingDotCoverage } from '@httpsify/engine/dnr';

/** A dnr run as its reports see it. */
export interface DnrOutput {
  compiled: DnrCompileResult;
  /** With --oracle: the oracle's URLs as given, as the browser sends them, with a trailing dot. */
  coverage: DnrCoverage | undefined;
  browserCoverage: DnrCoverage | undefined;
  trailingDotCoverage: TrailingDotCoverage | undefined;
  /** --report: also every part left out (text only; JSON always has them). */
  details: boolean;
}

/** The rules: a static ruleset file as Chromium loads it, on one line. */
export function dnrRulesJson(rules: DnrCompileResult['rules']): string {
  return `${JSON.stringify(rules)}\n`;
}

/** `dnr --report --format json`: the compile report and the oracle's coverage, on one line. */
export function dnrReportJson(o: DnrOutput): string {
  const { coverage, browserCoverage, trailingDotCoverage } = o;
  return `${JSON.stringify({ ...o.compiled.report, coverage, browserCoverage, trailingDotCoverage })}\n`;
}
