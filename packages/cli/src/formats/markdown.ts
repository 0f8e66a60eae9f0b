import type { LinksReport } from '../links/run-links.js';
import { linksSummaryLine } from './text/links.js';

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
export function linksMarkdown(report: LinksReport, mode: 'check' | 'fix'): string {
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
  out.push(linksSummaryLine(report, mode));
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
