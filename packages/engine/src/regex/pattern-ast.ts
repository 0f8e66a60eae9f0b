import type { AST, RegExpParser } from '@eslint-community/regexpp';
import { parseCommonPattern } from './common-syntax.js';
import { regexpParser } from './regexpp-module.js';

/**
 * One parser for every analysis of ruleset regexes (lint, guard, DNR translation, the matcher's
 * literal sets): flag-less JavaScript syntax, as the reference compiles them with `new RegExp`.
 */
let parser: RegExpParser | undefined;
/**
 * The last pattern parsed: preparing a pattern reads it several times in a row (its elements,
 * its captures, then the door). Trees are never modified, so sharing one is safe.
 */
let last: { source: string; pattern: AST.Pattern } | null = null;

/**
 * Parses a flag-less pattern; throws the parser's SyntaxError when it does not parse. Patterns
 * in common syntax are read without regexpp (common-syntax.ts), to the same tree.
 */
export function parsePatternOrThrow(source: string): AST.Pattern {
  if (last !== null && last.source === source) return last.pattern;
  let pattern = parseCommonPattern(source);
  if (pattern === null) {
    parser ??= new (regexpParser())({ ecmaVersion: 2025 });
    pattern = parser.parsePattern(source, 0, source.length, { unicode: false });
  }
  last = { source, pattern };
  return pattern;
}

/** Parses a flag-less pattern, or null when it does not parse. */
export function parsePattern(source: string): AST.Pattern | null {
  try {
    return parsePatternOrThrow(source);
  } catch {
    return null;
  }
}

/** The elements of a pattern with no top-level `|`; null when it has one or does not parse. */
export function topLevelElements(source: string): AST.Element[] | null {
  const pattern = parsePattern(source);
  return pattern !== null && pattern.alternatives.length === 1
    ? (pattern.alternatives[0] as AST.Alternative).elements
    : null;
}

/** Like topLevelElements, for a pattern that must also start with `^`: the elements after it. */
export function anchoredElements(source: string): AST.Element[] | null {
  const elements = topLevelElements(source);
  const first = elements?.[0];
  if (!elements || !first || first.type !== 'Assertion' || first.kind !== 'start') return null;
  return elements.slice(1);
}

/** Number of capturing groups, which bounds the `$N` a replacement may use. */
export function countCapturingGroups(pattern: AST.Pattern): number {
  let count = 0;
  const visit = (node: AST.Node): void => {
    if (node.type === 'CapturingGroup') count++;
    for (const child of childrenOf(node)) visit(child);
  };
  visit(pattern);
  return count;
}

/** countCapturingGroups of a source (0 when it does not parse). */
export function captureCount(source: string): number {
  const pattern = parsePattern(source);
  return pattern === null ? 0 : countCapturingGroups(pattern);
}

/** The direct children of a node that can hold further elements. */
export function childrenOf(node: AST.Node): AST.Node[] {
  switch (node.type) {
    case 'Pattern':
    case 'Group':
    case 'CapturingGroup':
      return node.alternatives;
    case 'Assertion':
      return node.kind === 'lookahead' || node.kind === 'lookbehind' ? node.alternatives : [];
    case 'Alternative':
      return node.elements;
    case 'Quantifier':
      return [node.element];
    default:
      return [];
  }
}
