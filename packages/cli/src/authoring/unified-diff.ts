import type { FixEdit } from '@httpsify/engine/authoring';

function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l, i) => (i === lines.length - 1 && !text.endsWith('\n') ? `${l}\n\\ No newline at end of file` : l));
}

/**
 * A unified diff (no context lines, so `git apply --unidiff-zero` and `patch` take it) of the
 * edits to one file: each hunk spans the whole lines an edit touches.
 */
export function unifiedDiff(file: string, original: string, edits: readonly FixEdit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  const lineStart = (offset: number): number => original.lastIndexOf('\n', offset - 1) + 1;
  const lineEnd = (offset: number): number => {
    const nl = original.indexOf('\n', offset);
    return nl === -1 ? original.length : nl + 1;
  };
  const groups: { start: number; end: number; edits: FixEdit[] }[] = [];
  for (const e of sorted) {
    const start = lineStart(e.start);
    const end = lineEnd(Math.max(e.start, e.end - 1));
    const last = groups[groups.length - 1];
    if (last !== undefined && start < last.end) {
      last.end = Math.max(last.end, end);
      last.edits.push(e);
    } else {
      groups.push({ start, end, edits: [e] });
    }
  }
  const out = [`--- a/${file}`, `+++ b/${file}`];
  let shift = 0;
  for (const g of groups) {
    let after = '';
    let at = g.start;
    for (const e of g.edits) {
      after += original.slice(at, e.start) + e.text;
      at = e.end;
    }
    after += original.slice(at, g.end);
    const before = original.slice(g.start, g.end);
    const oldLines = linesOf(before);
    const newLines = linesOf(after);
    const oldFirst = original.slice(0, g.start).split('\n').length;
    const newFirst = oldFirst + shift;
    const range = (first: number, count: number): string => (count === 0 ? `${first - 1},0` : count === 1 ? `${first}` : `${first},${count}`);
    out.push(`@@ -${range(oldFirst, oldLines.length)} +${range(newFirst, newLines.length)} @@`);
    out.push(...oldLines.map((l) => `-${l}`), ...newLines.map((l) => `+${l}`));
    shift += newLines.length - oldLines.length;
  }
  return `${out.join('\n')}\n`;
}
