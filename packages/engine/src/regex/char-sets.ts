import type { AST } from '@eslint-community/regexpp';

/**
 * The UTF-16 code units a single-character piece of a flag-less pattern matches, as sorted,
 * disjoint, inclusive ranges flattened into [lo0, hi0, lo1, hi1, ...]. Exact, because both the
 * backtracking proof (which pieces can read the same character) and the linear-time
 * translation (which spells every class out) depend on it.
 */
export type CharSet = readonly number[];

const MAX_UNIT = 0xffff;

function normalise(ranges: number[][]): number[] {
  ranges.sort((a, b) => (a[0] as number) - (b[0] as number));
  const out: number[] = [];
  for (const [lo, hi] of ranges as [number, number][]) {
    const last = out.length - 1;
    if (last > 0 && lo <= (out[last] as number) + 1) out[last] = Math.max(out[last] as number, hi);
    else out.push(lo, hi);
  }
  return out;
}

function complement(set: CharSet): number[] {
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < set.length; i += 2) {
    if ((set[i] as number) > next) out.push(next, (set[i] as number) - 1);
    next = (set[i + 1] as number) + 1;
  }
  if (next <= MAX_UNIT) out.push(next, MAX_UNIT);
  return out;
}

const DIGIT: CharSet = [0x30, 0x39];
const WORD: CharSet = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
/** WhiteSpace and LineTerminator as ECMAScript's `\s` reads them. */
const SPACE: CharSet = normalise([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
/** `.` without the s flag: anything but the four line terminators. */
const ANY: CharSet = complement([0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029]);

function escapeSet(kind: 'digit' | 'word' | 'space', negate: boolean): CharSet {
  const base = kind === 'digit' ? DIGIT : kind === 'word' ? WORD : SPACE;
  return negate ? complement(base) : base;
}

/** Null for a piece this module does not know (unicode property escapes need the u flag). */
export function charSetOf(
  node: AST.Character | AST.CharacterSet | AST.CharacterClass,
): CharSet | null {
  if (node.type === 'Character') return [node.value, node.value];
  if (node.type === 'CharacterSet') {
    if (node.kind === 'any') return ANY;
    if (node.kind === 'digit' || node.kind === 'word' || node.kind === 'space')
      return escapeSet(node.kind, node.negate);
    return null;
  }
  if (node.unicodeSets) return null;
  const ranges: number[][] = [];
  for (const item of node.elements) {
    if (item.type === 'Character') ranges.push([item.value, item.value]);
    else if (item.type === 'CharacterClassRange') ranges.push([item.min.value, item.max.value]);
    else if (
      item.type === 'CharacterSet' &&
      (item.kind === 'digit' || item.kind === 'word' || item.kind === 'space')
    ) {
      const set = escapeSet(item.kind, item.negate);
      for (let i = 0; i < set.length; i += 2) ranges.push([set[i] as number, set[i + 1] as number]);
    } else return null;
  }
  const set = normalise(ranges);
  return node.negate ? complement(set) : set;
}

/** Whether two sets share a code unit. */
export function intersects(a: CharSet, b: CharSet): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if ((a[i + 1] as number) < (b[j] as number)) i += 2;
    else if ((b[j + 1] as number) < (a[i] as number)) j += 2;
    else return true;
  }
  return false;
}
