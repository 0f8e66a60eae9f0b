import type { DocumentKind } from './document.js';
import { lineStarts, position } from './plan-rewrites.js';
import { htmlComments } from './scan-html.js';
import type { MarkdownToken } from './scan-markdown.js';

/** The markers, as ESLint's `eslint-disable-next-line`: a word of its own, any text may follow. */
const MARKER = /(?<![\w-])httpsify-ignore-(next-line|line|start|end)(?![\w-])/g;

type MarkerKind = 'next-line' | 'line' | 'start' | 'end';

/** A marker and the comment it is in (in text files, just the marker's own characters). */
interface Marker {
  kind: MarkerKind;
  at: number;
  commentStart: number;
  commentEnd: number;
}

/** Part of a document whose links are left alone, and the marker that says so. */
export interface IgnoredRange {
  start: number;
  end: number;
  marker: string;
  /** Line of the marker, for reports. */
  line: number;
}

function markersIn(text: string, comment: { start: number; end: number }, into: Marker[]): void {
  for (const m of text.slice(comment.start, comment.end).matchAll(MARKER)) {
    into.push({
      kind: m[1] as MarkerKind,
      at: comment.start + m.index,
      commentStart: comment.start,
      commentEnd: comment.end,
    });
  }
}

/**
 * The markers of a document. In Markdown and HTML they count only inside an HTML comment, so a
 * page that writes about them (in prose or a code span) does not switch anything off; other
 * files have comments of every syntax, so there a marker counts wherever it is written.
 * `tokens`: Markdown's, from the same parse as its links.
 */
function markersOf(kind: DocumentKind, text: string, tokens: readonly MarkdownToken[]): Marker[] {
  const found: Marker[] = [];
  // Nearly every file has none: skip the second HTML parse.
  if (!text.includes('httpsify-ignore-')) return found;
  if (kind === 'text') {
    for (const m of text.matchAll(MARKER)) {
      const end = m.index + m[0].length;
      found.push({ kind: m[1] as MarkerKind, at: m.index, commentStart: m.index, commentEnd: end });
    }
    return found;
  }
  if (kind === 'html') {
    for (const comment of htmlComments(text)) markersIn(text, comment, found);
    return found;
  }
  for (const t of tokens) {
    if (t.type !== 'htmlFlow' && t.type !== 'htmlText') continue;
    const raw = text.slice(t.start, t.end);
    if (raw.includes('httpsify-ignore-'))
      for (const comment of htmlComments(raw, t.start, true)) markersIn(text, comment, found);
  }
  return found.sort((a, b) => a.at - b.at);
}

/**
 * The parts of a document that its `httpsify-ignore-…` markers leave alone, as disjoint ranges
 * in document order, with notes on markers that do not pair up:
 * - `httpsify-ignore-line`: the line the marker is on;
 * - `httpsify-ignore-next-line`: the line after the one where its comment ends;
 * - `httpsify-ignore-start` … `httpsify-ignore-end`: from the end of the first comment to the
 *   start of the second (not nested: the first end closes); a start never closed runs to the
 *   end of the file, as ESLint's `eslint-disable` does.
 */
export function ignoredRanges(
  file: string,
  kind: DocumentKind,
  text: string,
  tokens: readonly MarkdownToken[] = [],
): { ranges: IgnoredRange[]; notes: string[] } {
  const markers = markersOf(kind, text, tokens);
  if (markers.length === 0) return { ranges: [], notes: [] };
  const starts = lineStarts(text);
  const lineEnd = (line: number): number => starts[line] ?? text.length;
  const ranges: IgnoredRange[] = [];
  const notes: string[] = [];
  let open: Marker | null = null;
  for (const m of markers) {
    const line = position(starts, m.at).line;
    const marker = `httpsify-ignore-${m.kind}`;
    if (m.kind === 'line')
      ranges.push({ start: starts[line - 1] as number, end: lineEnd(line), marker, line });
    else if (m.kind === 'next-line') {
      const after = position(starts, Math.max(m.commentEnd - 1, m.at)).line + 1;
      if (after <= starts.length)
        ranges.push({ start: starts[after - 1] as number, end: lineEnd(after), marker, line });
    } else if (m.kind === 'start') open ??= m;
    else if (open !== null) {
      ranges.push({
        start: open.commentEnd,
        end: m.commentStart,
        marker: 'httpsify-ignore-start',
        line: position(starts, open.at).line,
      });
      open = null;
    } else
      notes.push(
        `${file}:${line}: httpsify-ignore-end without an httpsify-ignore-start before it does nothing`,
      );
  }
  if (open !== null) {
    const line = position(starts, open.at).line;
    ranges.push({
      start: open.commentEnd,
      end: text.length,
      marker: 'httpsify-ignore-start',
      line,
    });
    notes.push(
      `${file}:${line}: httpsify-ignore-start has no httpsify-ignore-end: links to the end of the file are left alone`,
    );
  }
  return { ranges: disjoint(ranges), notes };
}

/** Overlapping ranges cut so that each offset belongs to the first range (by start) holding it. */
function disjoint(ranges: IgnoredRange[]): IgnoredRange[] {
  const out: IgnoredRange[] = [];
  let covered = 0;
  for (const r of [...ranges].sort((a, b) => a.start - b.start)) {
    const start = Math.max(r.start, covered);
    if (start >= r.end) continue;
    out.push({ ...r, start });
    covered = r.end;
  }
  return out;
}

/** The range holding `offset`, if any (binary search: a hostile file may hold many markers). */
export function rangeAt(ranges: readonly IgnoredRange[], offset: number): IgnoredRange | undefined {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = ranges[mid] as IgnoredRange;
    if (offset < r.start) hi = mid - 1;
    else if (offset >= r.end) lo = mid + 1;
    else return r;
  }
  return undefined;
}
