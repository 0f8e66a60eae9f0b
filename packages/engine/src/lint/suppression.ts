import type { Diagnostic } from '../model/ruleset.js';

/** `<!-- httpsify-ignore code[, code…]: reason -->` inside a ruleset file. */
export interface Suppression {
  codes: string[];
  reason: string;
  line: number;
  column: number;
}

const COMMENT = /<!--([\s\S]*?)-->/g;
const DIRECTIVE = /^\s*httpsify-ignore\b([\s\S]*)$/;
const CODES = /^\s*([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)\s*(?::([\s\S]*))?$/;

function positionOf(xml: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = xml.indexOf('\n'); i !== -1 && i < offset; i = xml.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * The suppressions a ruleset file declares in its comments, and findings about the comments
 * themselves: a suppression must name its codes and say why (`suppression-reason`), so that a
 * reviewer can judge it. Comments are ignored by the parser and the engine, so a suppression
 * changes nothing about what the ruleset does.
 */
export function suppressionsOf(
  xml: string,
  file: string,
): { suppressions: Suppression[]; diagnostics: Diagnostic[] } {
  const suppressions: Suppression[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const match of xml.matchAll(COMMENT)) {
    const body = match[1] as string;
    const directive = DIRECTIVE.exec(body);
    if (directive === null) continue;
    const { line, column } = positionOf(xml, match.index);
    const parts = CODES.exec(directive[1] as string);
    const reason = parts?.[2]?.replace(/\s+/g, ' ').trim() ?? '';
    if (parts === null || reason === '') {
      diagnostics.push({
        severity: 'error',
        code: 'suppression-reason',
        message:
          'write a suppression as <!-- httpsify-ignore code: reason -->, naming the finding code(s) and why the finding does not apply',
        file,
        line,
        column,
      });
      continue;
    }
    const codes = (parts[1] as string).split(',').map((c) => c.trim());
    suppressions.push({ codes, reason, line, column });
  }
  return { suppressions, diagnostics };
}

/** Splits findings into those kept and those a suppression of their file hides. */
export function applySuppressions(
  diagnostics: readonly Diagnostic[],
  suppressions: readonly Suppression[],
): { kept: Diagnostic[]; suppressed: Diagnostic[] } {
  const codes = new Set(suppressions.flatMap((s) => s.codes));
  const kept: Diagnostic[] = [];
  const suppressed: Diagnostic[] = [];
  for (const d of diagnostics)
    (codes.has(d.code) && d.code !== 'suppression-reason' ? suppressed : kept).push(d);
  return { kept, suppressed };
}
