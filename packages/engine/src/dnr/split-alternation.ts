/**
 * Large alternations split into regexes RE2 keeps under Chromium's 2 KB: for a condition that
 * only asks whether a URL matches (`allow`, a re-enabling rule), `x(?:a|b)y` matches exactly
 * the URLs that `x(?:a)y` or `x(?:b)y` matches.
 */
import type { AST } from '@eslint-community/regexpp';
import { parsePattern } from '../regex/pattern-ast.js';
import { translateRegex } from './re2.js';

/** More pieces than this cost more regexes than the ruleset is likely worth. */
const MAX_PIECES = 8;

/**
 * JavaScript regex sources whose matches together are the matches of `source`, each estimated
 * at most `maxInstructions` once translated, as few as greedy packing finds; null when that
 * takes more than MAX_PIECES or a piece cannot be split further.
 */
export function splitToFit(source: string, maxInstructions: number): string[] | null {
  const fits = (s: string) => {
    const tr = translateRegex(s);
    return tr.ok && tr.estimatedInstructions <= maxInstructions;
  };
  if (fits(source)) return [source];
  const pieces: string[] = [];
  const stack = [source];
  while (stack.length > 0) {
    const s = stack.pop()!;
    if (fits(s)) {
      pieces.push(s);
      continue;
    }
    const parts = distribute(s);
    if (parts === null || pieces.length + stack.length + parts.length > 4 * MAX_PIECES) return null;
    stack.push(...parts.reverse());
  }
  // Pack neighbours back together while they fit.
  const packed: string[] = [];
  for (const p of pieces) {
    const last = packed[packed.length - 1];
    const joined = last === undefined ? null : `${last}|${p}`;
    if (joined !== null && fits(joined)) packed[packed.length - 1] = joined;
    else packed.push(p);
  }
  return packed.length <= MAX_PIECES ? packed : null;
}

/** The top-level alternatives, or the first group with alternatives distributed over its context. */
function distribute(source: string): string[] | null {
  const pattern = parsePattern(source);
  if (pattern === null) return null;
  if (pattern.alternatives.length > 1) return pattern.alternatives.map((a) => a.raw);
  const els = pattern.alternatives[0]!.elements;
  const at = els.findIndex((e) => (e.type === 'Group' || e.type === 'CapturingGroup') && e.alternatives.length > 1);
  if (at < 0) {
    // A single group without alternatives of its own may hold one further in.
    const inner = els.findIndex(
      (e) => (e.type === 'Group' || e.type === 'CapturingGroup') && e.alternatives.length === 1 && distribute(e.alternatives[0]!.raw) !== null,
    );
    if (inner < 0) return null;
    const g = els[inner] as AST.Group | AST.CapturingGroup;
    return around(els, inner, g, distribute(g.alternatives[0]!.raw)!);
  }
  const g = els[at] as AST.Group | AST.CapturingGroup;
  return around(
    els,
    at,
    g,
    g.alternatives.map((a) => a.raw),
  );
}

function around(els: readonly AST.Element[], at: number, g: AST.Group | AST.CapturingGroup, alternatives: string[]): string[] {
  const before = els
    .slice(0, at)
    .map((e) => e.raw)
    .join('');
  const after = els
    .slice(at + 1)
    .map((e) => e.raw)
    .join('');
  const open = g.type === 'CapturingGroup' ? '(' : '(?:';
  return alternatives.map((a) => `${before}${open}${a})${after}`);
}
