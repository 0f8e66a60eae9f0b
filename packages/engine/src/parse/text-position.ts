/**
 * Line and column of a character offset in ruleset XML, for diagnostics that point into the
 * source (the parser's tag positions, the lint fixes' spans). Lines end at `\n`, as the XML
 * parser counts them.
 */

/** Offsets at which each line starts. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** One-based line and column of `offset`, by binary search over `starts` (from lineStarts). */
export function position(
  starts: readonly number[],
  offset: number,
): { line: number; column: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - (starts[lo] as number) + 1 };
}
