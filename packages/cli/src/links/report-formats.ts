import { artifactUri, formatSarifLog, type SarifResult, type SarifRule } from '../formats/sarif.js';
import type { LinkFinding } from './plan-rewrites.js';
import type { LinksReport } from './run-links.js';

const by = (f: LinkFinding): string =>
  f.ruleset !== null
    ? `ruleset ${f.ruleset}${f.channel !== null ? ` from channel ${f.channel}` : ''}`
    : 'no ruleset: --upgrade-all';

/** The last line of the text and Markdown reports: what was scanned, upgraded and left alone. */
function summaryLine(report: LinksReport, mode: 'check' | 'fix'): string {
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
export function formatText(report: LinksReport, mode: 'check' | 'fix'): string {
  const lines: string[] = [];
  for (const f of report.findings) {
    const where = `${f.file}:${f.line}:${f.column}`;
    if (f.verified === false)
      lines.push(
        `${where}: not verified: ${f.url} -> ${f.rewritten} (${by(f)}): ${f.reason ?? ''}`,
      );
    else lines.push(`${where}: ${f.url} -> ${f.rewritten} (${by(f)})`);
  }
  lines.push(summaryLine(report, mode));
  return `${lines.join('\n')}\n`;
}

/**
 * Rows past this are counted, not shown: GitHub refuses a job summary over 1 MiB, and a table
 * that long is read in the text or SARIF report anyway.
 */
export const MARKDOWN_MAX_ROWS = 1000;
/** Longer URLs and paths are cut in the table, for the same reason (a text file may hold a 16 MB URL). */
const MARKDOWN_MAX_CELL = 500;

/**
 * Literal text in a GFM table cell: any ASCII punctuation backslash-escaped (CommonMark allows
 * it before every one), so a ruleset name or a reason cannot end the cell or become markup.
 */
function mdText(text: string): string {
  // eslint-disable-next-line no-control-regex -- a line break would end the table row
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/[!-/:-@[-`{-~]/g, '\\$&');
}

/**
 * A URL or path as a code span in a table cell: a fence longer than any backtick run inside,
 * `|` escaped (GFM splits cells before it reads code spans), control characters
 * percent-encoded so the row stays one line.
 */
function mdCode(raw: string): string {
  const cut = raw.length > MARKDOWN_MAX_CELL ? `${raw.slice(0, MARKDOWN_MAX_CELL)}…` : raw;
  const text = cut
    .replace(
      // eslint-disable-next-line no-control-regex -- a line break would end the table row
      /[\u0000-\u001f\u007f]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .replace(/\|/g, '\\|');
  const longest = (text.match(/`+/g) ?? []).reduce((n, run) => Math.max(n, run.length), 0);
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/**
 * A Markdown report for a CI job summary (`>> "$GITHUB_STEP_SUMMARY"`): a GFM table of the links
 * (file:line, URL, upgrade, ruleset), the summary line of the text report, and the files that
 * could not be checked. Everything taken from the documents is escaped for its cell.
 */
export function formatMarkdown(report: LinksReport, mode: 'check' | 'fix'): string {
  const out = [`### httpsify links ${mode}`, ''];
  if (report.findings.length === 0)
    out.push(mode === 'fix' ? 'No link was upgraded.' : 'No link can be upgraded.', '');
  else {
    out.push('| File:line | URL | Upgrade | Ruleset |', '| --- | --- | --- | --- |');
    for (const f of report.findings.slice(0, MARKDOWN_MAX_ROWS)) {
      const upgrade =
        f.verified === false
          ? `${mdCode(f.rewritten)} not verified: ${mdText(f.reason ?? '')}`
          : mdCode(f.rewritten);
      const ruleset =
        f.ruleset === null
          ? 'none (`--upgrade-all`)'
          : `${mdText(f.ruleset)}${f.channel !== null ? ` from channel ${mdText(f.channel)}` : ''}`;
      out.push(`| ${mdCode(`${f.file}:${f.line}`)} | ${mdCode(f.url)} | ${upgrade} | ${ruleset} |`);
    }
    const hidden = report.findings.length - MARKDOWN_MAX_ROWS;
    if (hidden > 0)
      out.push('', `…and ${hidden} more: see \`--format text\` or \`--format sarif\`.`);
    out.push('');
  }
  // Numbers and fixed words only: nothing to escape.
  out.push(summaryLine(report, mode));
  if (report.problems.length > 0) {
    out.push('', 'Not checked:', '');
    for (const p of report.problems) out.push(`- ${mdCode(p.path)}: ${mdText(p.message)}`);
  }
  if (report.notes.length > 0) {
    out.push('', 'Notes:', '');
    for (const n of report.notes) out.push(`- ${mdText(n)}`);
  }
  return `${out.join('\n')}\n`;
}

function findingJson(f: LinkFinding): Record<string, unknown> {
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

export function formatJson(report: LinksReport, mode: 'check' | 'fix'): string {
  return `${JSON.stringify(
    {
      mode,
      scannedFiles: report.scannedFiles,
      findings: report.findings.map(findingJson),
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

const RULE_UPGRADE = 'insecure-link';
const RULE_UNVERIFIED = 'insecure-link-not-verified';

/**
 * SARIF 2.1.0 for code-scanning UIs (GitHub, Azure DevOps, VS Code's SARIF viewer): one result
 * per link with its region, the upgrade as a `fix` (the replacement bytes), "not verified"
 * links as notes, and files that could not be read as tool notifications.
 */
/** The two kinds of link finding, as code-scanning UIs list them. */
const LINK_RULES: SarifRule[] = [
  {
    id: RULE_UPGRADE,
    name: 'InsecureLink',
    shortDescription: { text: 'An http:// link that can use HTTPS' },
    fullDescription: {
      text: 'The link uses plain HTTP, and an HTTPS Everywhere-format ruleset (or, with --upgrade-all, a check of both versions) says the same resource is served over HTTPS.',
    },
    help: {
      text: 'Run `httpsify links fix` to rewrite the link, or change http:// to the https:// URL shown.',
    },
    defaultConfiguration: { level: 'warning' },
  },
  {
    id: RULE_UNVERIFIED,
    name: 'InsecureLinkNotVerified',
    shortDescription: { text: 'An http:// link whose HTTPS version did not answer alike' },
    fullDescription: {
      text: 'A ruleset or --upgrade-all offers an HTTPS URL, but fetching both versions did not give the same status, host and similar content.',
    },
    help: { text: 'Check the HTTPS version by hand before changing the link.' },
    defaultConfiguration: { level: 'note' },
  },
];

export function formatSarif(report: LinksReport, cwd: string, version: string): string {
  const results = report.findings.map((f): SarifResult => {
    const region = {
      startLine: f.line,
      startColumn: f.column,
      endLine: f.endLine,
      endColumn: f.endColumn,
    };
    const artifactLocation = artifactUri(f.file, cwd);
    const unverified = f.verified === false;
    return {
      ruleId: unverified ? RULE_UNVERIFIED : RULE_UPGRADE,
      level: unverified ? 'note' : 'warning',
      message: {
        text: unverified
          ? `${f.url} could move to ${f.rewritten} (${by(f)}), but it was not verified: ${f.reason ?? ''}`
          : `${f.url} can be upgraded to ${f.rewritten} (${by(f)})`,
      },
      locations: [{ physicalLocation: { artifactLocation, region } }],
      properties: { url: f.url, rewritten: f.rewritten, ruleset: f.ruleset, context: f.context },
      ...(unverified
        ? {}
        : {
            fixes: [
              {
                description: { text: `Use ${f.rewritten}` },
                artifactChanges: [
                  {
                    artifactLocation,
                    replacements: [
                      { deletedRegion: region, insertedContent: { text: f.replacement } },
                    ],
                  },
                ],
              },
            ],
          }),
    };
  });
  return formatSarifLog({
    cwd,
    version,
    rules: LINK_RULES,
    results,
    executionSuccessful: !report.problems.some((p) => p.severity === 'error'),
    notifications: report.problems.map((p) => ({
      level: p.severity === 'error' ? 'error' : 'note',
      message: { text: `${p.path}: ${p.message}` },
      locations: [{ physicalLocation: { artifactLocation: artifactUri(p.path, cwd) } }],
    })),
  });
}
