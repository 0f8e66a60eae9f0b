import type { LinkFinding } from '../../links/plan-rewrites.js';
import type { LinksReport } from '../../links/run-links.js';

function linkFindingJson(f: LinkFinding): Record<string, unknown> {
  return {
    file: f.file,
    line: f.line,
    column: f.column,
    endLine: f.endLine,
    endColumn: f.endColumn,
    context: f.context,
    url: f.url,
    rewritten: f.rewritten,
    ruleset: f.ruleset,
    channel: f.channel,
    status: f.verified === false ? 'not-verified' : 'upgradable',
    ...(f.reason !== undefined ? { reason: f.reason } : {}),
  };
}

/** `links check|fix --format json`: findings, excluded links (as lychee), problems, notes. */
export function linksJson(report: LinksReport, mode: 'check' | 'fix'): string {
  return `${JSON.stringify(
    {
      mode,
      scannedFiles: report.scannedFiles,
      findings: report.findings.map(linkFindingJson),
      // As lychee's JSON: the count, and each excluded link with the rule that left it alone.
      excluded: report.excluded.length,
      excludedLinks: report.excluded,
      problems: report.problems,
      notes: report.notes,
      ...(mode === 'fix' ? { changedFiles: report.changedFiles } : {}),
    },
    null,
    2,
  )}\n`;
}
