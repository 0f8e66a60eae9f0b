/**
 * The size of the program RE2 compiles a `regexFilter` to, as Chromium builds it: Latin-1, case
 * sensitive, captures only for a redirect that substitutes them (`never_capture` otherwise).
 * Chromium gives each regex 2 KB (`max_mem`), about 113 instructions once RE2 takes out what it
 * matches without the program: measured with Chromium's own `isRegexSupported`, see
 * DEFAULT_MAX_REGEX_INSTRUCTIONS. Counted as RE2's compiler spends them:
 * - a leading `^` followed by a literal: RE2 matches that prefix by comparing bytes, for free;
 * - a character: 1; a class of n byte ranges (over 0-255, RE2 reads Latin-1): 2n - 1;
 * - a capturing group: 2 more, when captures are kept;
 * - alternation of k: k - 1; `?`, `*`, `+`: 1; `{n,m}`: n copies and m - n optional ones;
 * - an assertion: 1; an unanchored regex: its `.*?` loop, 2.
 * RE2 also factors the literal prefixes that neighbouring alternatives share: counted for each
 * alternation's own alternatives (factored), not deeper, so the count can only be more than
 * RE2 spends, never less.
 */
import type { AST } from '@eslint-community/regexpp';
import { parsePattern } from '../regex/pattern-ast.js';
import { charSetOf } from '../regex/char-sets.js';

/** Byte ranges (0-255) a class or set matches in RE2's reading. */
function byteRanges(node: AST.CharacterSet | AST.CharacterClass): number {
  // RE2's `.` leaves out only \n.
  if (node.type === 'CharacterSet' && node.kind === 'any') return 2;
  const set = charSetOf(node);
  // Unknown: as many ranges as 256 bytes can hold.
  if (set === null) return 128;
  let n = 0;
  for (let i = 0; i < set.length; i += 2) if (set[i]! <= 0xff) n++;
  return n;
}

/** The literal characters an alternative starts with. */
function leadingLiteral(a: AST.Alternative): string {
  let out = '';
  for (const e of a.elements) {
    if (e.type !== 'Character') break;
    out += e.raw;
  }
  return out;
}

/**
 * What RE2's parser saves on an alternation by factoring out the literal prefix that runs of
 * neighbouring alternatives share (`abc|abd|x` is `ab(?:c|d)|x`): the prefix once instead of
 * once per alternative, less a possible empty remainder. Only this first level is counted.
 */
function factored(list: readonly AST.Alternative[]): number {
  let saved = 0;
  let i = 0;
  while (i < list.length) {
    let prefix = leadingLiteral(list[i]!);
    let j = i + 1;
    for (; j < list.length && prefix !== ''; j++) {
      const next = leadingLiteral(list[j]!);
      let k = 0;
      while (k < prefix.length && k < next.length && prefix[k] === next[k]) k++;
      // Cut at a whole character (an escape is one), then stop the run when nothing is shared.
      const common = cutToCharacters(list[i]!, prefix.slice(0, k));
      if (common === '') break;
      prefix = common;
    }
    const run = j - i;
    if (run > 1) {
      const chars = characterCount(list[i]!, prefix);
      const empty = list.slice(i, j).filter((a) => a.raw === prefix).length;
      saved += chars * (run - 1) - empty;
    }
    i = j;
  }
  return saved;
}

/** The longest run of `a`'s leading characters whose raw text is a prefix of `text`. */
function cutToCharacters(a: AST.Alternative, text: string): string {
  let out = '';
  for (const e of a.elements) {
    if (e.type !== 'Character' || !text.startsWith(out + e.raw)) break;
    out += e.raw;
  }
  return out;
}

function characterCount(a: AST.Alternative, text: string): number {
  let n = 0;
  let len = 0;
  for (const e of a.elements) {
    if (len >= text.length) break;
    len += e.raw.length;
    n++;
  }
  return n;
}

/** Instructions for `re2` (RE2 syntax as re2-syntax.ts writes it); Infinity when it cannot be read. */
export function re2ProgramSize(re2: string, capturing: boolean): number {
  const pattern = parsePattern(re2);
  if (pattern === null) return Infinity;
  const alts = (list: readonly AST.Alternative[]): number =>
    list.reduce((s, a) => s + seq(a.elements), 0) + Math.max(0, list.length - 1) - factored(list);
  const seq = (els: readonly AST.Element[]): number => els.reduce((s, e) => s + el(e), 0);
  const el = (e: AST.Element): number => {
    switch (e.type) {
      case 'Character':
        return 1;
      case 'CharacterSet':
      case 'CharacterClass':
        return Math.max(1, 2 * byteRanges(e) - 1);
      case 'Group':
        return alts(e.alternatives);
      case 'CapturingGroup':
        return alts(e.alternatives) + (capturing ? 2 : 0);
      case 'Quantifier': {
        const x = el(e.element);
        if (e.max === Infinity) return x * Math.max(e.min, 1) + Math.max(e.min - 1, 0) + 1;
        return x * e.max + (e.max - e.min);
      }
      default:
        return 1;
    }
  };
  const top = pattern.alternatives;
  if (top.length !== 1) return alts(top) + 2;
  const els = top[0]!.elements;
  const first = els[0];
  if (first?.type !== 'Assertion' || first.kind !== 'start') return seq(els) + 2;
  // `^` then a literal: RE2's required prefix, matched before the program runs.
  let rest = els.slice(1);
  const head = rest[0];
  if (head?.type === 'Character') {
    let i = 0;
    while (rest[i]?.type === 'Character') i++;
    rest = rest.slice(i);
  } else if (
    head !== undefined &&
    (head.type === 'Group' || (head.type === 'CapturingGroup' && !capturing)) &&
    head.alternatives.length === 1 &&
    head.alternatives[0]!.elements.every((x) => x.type === 'Character')
  ) {
    rest = rest.slice(1);
  }
  return seq(rest);
}
