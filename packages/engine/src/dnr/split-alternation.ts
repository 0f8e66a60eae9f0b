/**
 * Large alternations split into regexes RE2 keeps under Chromium's 2 KB: for a condition that
 * only asks whether a URL matches (`allow`, a re-enabling rule), `x(?:a|b)y` matches exactly
 * the URLs that `x(?:a)y` or `x(?:b)y` matches.
 */
import type { AST } from '@eslint-community/regexpp';
import { parsePattern } from '../regex/pattern-ast.js';
import { translateRegex } from './re2.js';

/** More pieces than this cost more regexes than the ruleset is likely worth. */
export const MAX_PIECES = 8;

/**
 * JavaScript regex sources whose matches together are the matches of `source`, each estimated
 * at most `maxInstructions` once translated: the alternatives of its first alternation taken in
 * runs as long as fit (`x(?:a|b)y`, `x(?:c)y`: what surrounds them, a `^` and literal prefix
 * RE2 gets for free among it, is written once per piece), deeper alternations split the same
 * way; null when that takes more than MAX_PIECES or a piece has no alternation to split.
 */
export function splitToFit(
  source: string,
  maxInstructions: number,
  maxPieces = MAX_PIECES,
): string[] | null {
  const fits = (s: string) => {
    const tr = translateRegex(s);
    return tr.ok && tr.estimatedInstructions <= maxInstructions;
  };
  const split = (s: string): string[] | null => {
    if (fits(s)) return [s];
    const alt = alternationOf(s);
    return alt === null ? null : runsThatFit(alt.alternatives, alt.wrap, fits, maxPieces, split);
  };
  return split(source);
}

/**
 * `alternatives` in runs as long as `fits` allows, each run put in its place by `wrap`; one too
 * large on its own is handed to `alone` (by default: no pieces). Null when an alternative cannot
 * be placed or it takes more than `maxPieces`.
 */
export function runsThatFit(
  alternatives: readonly string[],
  wrap: (alternatives: readonly string[]) => string,
  fits: (source: string) => boolean,
  maxPieces: number,
  alone: (source: string) => string[] | null = () => null,
): string[] | null {
  const out: string[] = [];
  let run: string[] = [];
  for (const a of alternatives) {
    if (fits(wrap([...run, a]))) {
      run.push(a);
      continue;
    }
    if (run.length > 0) out.push(wrap(run));
    run = [];
    if (fits(wrap([a]))) run = [a];
    else {
      const deeper = alone(wrap([a]));
      if (deeper === null) return null;
      out.push(...deeper);
    }
    if (out.length > maxPieces) return null;
  }
  if (run.length > 0) out.push(wrap(run));
  return out.length <= maxPieces ? out : null;
}

interface Alternation {
  alternatives: string[];
  /** The source with only the given alternatives in that alternation's place. */
  wrap: (alternatives: readonly string[]) => string;
}

/**
 * A group at `e`, bare or made optional (`(…)?`: the pieces' matches still add up to its
 * own, the empty one included), with the quantifier text that follows it.
 */
function groupOf(e: AST.Element): { g: AST.Group | AST.CapturingGroup; suffix: string } | null {
  if (e.type === 'Group' || e.type === 'CapturingGroup') return { g: e, suffix: '' };
  if (
    e.type === 'Quantifier' &&
    e.min === 0 &&
    e.max === 1 &&
    (e.element.type === 'Group' || e.element.type === 'CapturingGroup')
  ) {
    return { g: e.element, suffix: e.raw.slice(e.element.raw.length) };
  }
  return null;
}

/** The top-level alternatives, or the first group with alternatives (maybe inside a group). */
function alternationOf(source: string): Alternation | null {
  const pattern = parsePattern(source);
  if (pattern === null) return null;
  if (pattern.alternatives.length > 1)
    return { alternatives: pattern.alternatives.map((a) => a.raw), wrap: (alts) => alts.join('|') };
  const els = pattern.alternatives[0]!.elements;
  // `(?i:…)` would lose its flags in the pieces (and has no RE2 spelling anyway).
  if (els.some((e) => e.type === 'Group' && e.modifiers)) return null;
  const groups = els.map(groupOf);
  const at = groups.findIndex((x) => x !== null && x.g.alternatives.length > 1);
  if (at >= 0) {
    const { g, suffix } = groups[at]!;
    return {
      alternatives: g.alternatives.map((a) => a.raw),
      wrap: (alts) => around(els, at, g, alts.join('|'), suffix),
    };
  }
  // A single group without alternatives of its own may hold one further in.
  for (let i = 0; i < els.length; i++) {
    const x = groups[i];
    if (!x || x.g.alternatives.length !== 1) continue;
    const inner = alternationOf(x.g.alternatives[0]!.raw);
    if (inner !== null)
      return {
        alternatives: inner.alternatives,
        wrap: (alts) => around(els, i, x.g, inner.wrap(alts), x.suffix),
      };
  }
  return null;
}

function around(
  els: readonly AST.Element[],
  at: number,
  g: AST.Group | AST.CapturingGroup,
  body: string,
  suffix: string,
): string {
  const before = els
    .slice(0, at)
    .map((e) => e.raw)
    .join('');
  const after = els
    .slice(at + 1)
    .map((e) => e.raw)
    .join('');
  const open = g.type === 'CapturingGroup' ? '(' : '(?:';
  return `${before}${open}${body})${suffix}${after}`;
}
