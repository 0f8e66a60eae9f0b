import type { ChainOutcome } from '../../fetch-test/follow-redirects.js';
import type { FetchTestReport } from '../../fetch-test/run-fetch-test.js';
import type { UrlResult } from '../../fetch-test/url-result.js';
import { count } from '../../shared/plural.js';

function statusPart(chain: ChainOutcome | null): string {
  if (chain === null) return '-';
  const redirects = chain.hops.length - (chain.status === null ? 0 : 1);
  const end = chain.status === null ? 'failed' : String(chain.status);
  return redirects > 0 ? `${end} after ${redirects} redirect${redirects === 1 ? '' : 's'}` : end;
}

/** One report line per test URL, then one indented line per finding. */
export function fetchTestUrlLine(r: UrlResult): string {
  const tag = r.verdict === 'ok' ? 'ok  ' : r.verdict === 'failed' ? 'FAIL' : 'skip';
  const where = r.line !== null ? `${r.file}:${r.line}:${r.column ?? 1}` : r.file;
  const arrow = r.rewritten !== null ? ` => ${r.rewritten}` : '';
  const statuses =
    r.plain !== null
      ? ` (${statusPart(r.plain)} => ${statusPart(r.secure)}${r.similarity !== null ? `, structure ${r.similarity.toFixed(2)}` : ''})`
      : '';
  const lines = [`${tag} ${r.ruleset}: ${r.url}${arrow}${statuses} [${where}]`];
  for (const f of r.findings) lines.push(`     ${f.severity} ${f.code}: ${f.message}`);
  return lines.join('\n');
}

export function fetchTestSummary(report: FetchTestReport, disabled: readonly string[]): string {
  const verdicts = (v: UrlResult['verdict']): number =>
    report.urls.filter((u) => u.verdict === v).length;
  const lines: string[] = [];
  for (const r of report.rulesets)
    if (r.verdict === 'failed')
      lines.push(
        `failed ruleset: ${r.name} (${r.file}): ${r.failed} of ${count(r.fetched, 'URL')}`,
      );
  for (const file of disabled) lines.push(`disabled: ${file}`);
  const extras = [
    report.excludedTests > 0
      ? `${count(report.excludedTests, 'excluded test URL')} not fetched`
      : '',
    report.skippedDefaultOff > 0
      ? `${count(report.skippedDefaultOff, 'off-by-default ruleset')} skipped`
      : '',
  ].filter((s) => s !== '');
  lines.push(
    `${count(report.rulesets.length, 'ruleset')}, ${count(report.urls.length, 'test URL')}: ${verdicts('ok')} ok, ${verdicts('failed')} failed, ${verdicts('skipped')} skipped; ` +
      `${count(report.failedRulesets, 'ruleset')} failed${extras.length > 0 ? ` (${extras.join(', ')})` : ''}`,
  );
  return lines.join('\n');
}
