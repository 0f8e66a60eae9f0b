import type { LinkFinding } from '../../links/plan-rewrites.js';
import type { LinksReport } from '../../links/run-links.js';

/** Which ruleset (and channel) offers the upgrade, in the words every links report uses. */
export const upgradedBy = (f: LinkFinding): string =>
  f.ruleset !== null
    ? `ruleset ${f.ruleset}${f.channel !== null ? ` from channel ${f.channel}` : ''}`
    : 'no ruleset: --upgrade-all';

/** The last line of the text and Markdown reports: what was scanned, upgraded and left alone. */
export function linksSummaryLine(report: LinksReport, mode: 'check' | 'fix'): string {
  const kept = report.findings.filter((f) => f.verified !== false).length;
  const unverified = report.findings.length - kept;
  const verb =
    mode === 'fix'
      ? `${kept} link(s) upgraded in ${report.changedFiles.length} file(s)`
      : `${kept} link(s) can be upgraded`;
  const excluded = report.excluded.length > 0 ? `; ${report.excluded.length} link(s) excluded` : '';
  return `${report.scannedFiles} file(s) scanned; ${verb}${unverified > 0 ? `; ${unverified} not verified` : ''}${excluded}`;
}

/** One line per link: `file:line:col: old -> new (ruleset)`, then "not verified" ones with the reason. */
export function linksText(report: LinksReport, mode: 'check' | 'fix'): string {
  const lines: string[] = [];
  for (const f of report.findings) {
    const where = `${f.file}:${f.line}:${f.column}`;
    if (f.verified === false)
      lines.push(
        `${where}: not verified: ${f.url} -> ${f.rewritten} (${upgradedBy(f)}): ${f.reason ?? ''}`,
      );
    else lines.push(`${where}: ${f.url} -> ${f.rewritten} (${upgradedBy(f)})`);
  }
  lines.push(linksSummaryLine(report, mode));
  return `${lines.join('\n')}\n`;
}
