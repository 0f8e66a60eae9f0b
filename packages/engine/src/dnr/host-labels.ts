import type { AST } from '@eslint-community/regexpp';
import { literalPrefixes } from '../regex/literal-language.js';
import { anchoredElements, childrenOf, parsePattern } from '../regex/pattern-ast.js';

/**
 * What a `^http://…` regex says about the host of the URLs it matches. `max` (possibly
 * Infinity) always bounds the labels; `min` and `suffix` (literal text the host ends with) only
 * hold when `delimited`, and are 0 and '' otherwise.
 */
export interface HostShape {
  min: number;
  max: number;
  suffix: string;
  delimited: boolean;
  /** Whether it also matches https:// URLs (`^https?://`). */
  https: boolean;
}

const DOT = 0x2e;
/** Characters that end the host of a canonical `http://` URL (or stand before it, `@`). */
const HOST_END = ['/', ':', '@'];

/**
 * Reads the host shape off the pieces between `http://` and the first top-level `/` or `:`,
 * counting the dots they can match. Browsers hand DNR canonical URLs, where a `/` or `:`
 * always follows the host, so when no piece can match `/`, `:` or `@` the host is exactly
 * what those pieces match; otherwise the real host is a prefix of it, with no more dots. Null
 * when the regex does not start `^http://` (or `^https?://`), has no such top-level delimiter,
 * or uses a backreference in the host.
 */
export function hostShape(source: string): HostShape | null {
  const elements = anchoredElements(source);
  if (!elements) return null;
  let i = 0;
  const literal = (ch: string): boolean => {
    const el = elements[i];
    if (el?.type !== 'Character' || el.value !== ch.charCodeAt(0)) return false;
    i++;
    return true;
  };
  if (![...'http'].every(literal)) return null;
  // `https?://` as well; such a rule also rewrites https:// URLs, which the shape notes.
  const s = elements[i];
  const https =
    s?.type === 'Quantifier' &&
    s.min === 0 &&
    s.max === 1 &&
    s.element.type === 'Character' &&
    s.element.value === 0x73;
  if (https) i++;
  if (![...'://'].every(literal)) return null;
  const start = i;
  const scan: Scan = { min: 0, max: 0, delimited: true };
  for (; i < elements.length; i++) {
    const el = elements[i]!;
    if (isDelimiter(el)) {
      if (!scan.delimited)
        return { min: 0, max: scan.max + 1, suffix: '', delimited: false, https };
      let suffix = '';
      for (let k = i - 1; k >= start && elements[k]!.type === 'Character'; k--)
        suffix = String.fromCharCode((elements[k] as AST.Character).value) + suffix;
      return { min: scan.min + 1, max: scan.max + 1, suffix, delimited: true, https };
    }
    const dots = dotRange(el, scan);
    if (dots === null) return null;
    scan.min += dots.min;
    scan.max += dots.max;
  }
  // The regex ends inside the host: what follows is unconstrained.
  return null;
}

/** `/` or `:` at the top level, alone or repeated (`/+`): where the host has ended. */
export function isDelimiter(el: AST.Element): boolean {
  const ch = el.type === 'Quantifier' && el.min >= 1 ? el.element : el;
  return ch.type === 'Character' && (ch.value === 0x2f || ch.value === 0x3a);
}

interface Scan {
  min: number;
  max: number;
  /** Cleared when a piece could match past the host. */
  delimited: boolean;
}

/** Dots a host piece can match; null for a backreference. */
function dotRange(node: AST.Node, scan: Scan): { min: number; max: number } | null {
  switch (node.type) {
    case 'Character':
    case 'CharacterClass':
    case 'CharacterSet': {
      if (HOST_END.some((c) => matchesChar(node, c))) scan.delimited = false;
      const dot = matchesChar(node, '.');
      const other = node.type !== 'Character' || node.value !== DOT;
      return { min: dot && !other ? 1 : 0, max: dot ? 1 : 0 };
    }
    case 'Group':
    case 'CapturingGroup': {
      let min = Infinity;
      let max = 0;
      for (const alt of node.alternatives) {
        const r = dotRange(alt, scan);
        if (r === null) return null;
        min = Math.min(min, r.min);
        max = Math.max(max, r.max);
      }
      return { min, max };
    }
    case 'Alternative': {
      let min = 0;
      let max = 0;
      for (const el of node.elements) {
        const r = dotRange(el, scan);
        if (r === null) return null;
        min += r.min;
        max += r.max;
      }
      return { min, max };
    }
    case 'Quantifier': {
      const r = dotRange(node.element, scan);
      if (r === null) return null;
      return { min: r.min * node.min, max: r.max === 0 ? 0 : r.max * node.max };
    }
    case 'Assertion':
      // Lookarounds and boundaries consume nothing; ignoring what they rule out only widens the shape.
      return { min: 0, max: 0 };
    default:
      return null;
  }
}

/** Whether some character of what `node` matches can be `ch` (unknown pieces, lookarounds included: yes). */
export function mayMatchChar(node: AST.Node, ch: string): boolean {
  switch (node.type) {
    case 'Character':
    case 'CharacterClass':
    case 'CharacterSet':
      return matchesChar(node, ch);
    case 'Group':
    case 'CapturingGroup':
    case 'Alternative':
    case 'Quantifier':
      return childrenOf(node).some((child) => mayMatchChar(child, ch));
    default:
      return true;
  }
}

/** Whether a single-character piece matches `ch` (tested with the engine that runs it). */
export function matchesChar(
  node: AST.Character | AST.CharacterClass | AST.CharacterSet,
  ch: string,
): boolean {
  if (node.type === 'Character') return node.value === ch.charCodeAt(0);
  return new RegExp(`^${node.raw}$`).test(ch);
}

/** Stands for a run of host characters the regex leaves open (never a dot). */
const OPEN = '\u0001';
/** Characters a piece must not match to stand inside one host label. */
const NOT_IN_LABEL = ['.', '/', ':', '@', '?', '#'];

/**
 * The host patterns of a `^http://…` regex, label by label, `*` for a label the regex leaves
 * (partly) open: `^http://(?:www\.)?google\.((?:com?\.)?[a-z]{2,3})/` gives `google.*`,
 * `google.co.*`, `google.com.*` and the same with `www.`. Pieces that can only match label
 * characters become one open run; what is left must be a finite language (literalPrefixes,
 * at most 256 strings).
 * Null when that fails or a prefix does not spell out its whole host.
 */
export function hostPatterns(source: string): string[] | null {
  const pattern = parsePattern(source);
  if (!pattern) return null;
  // Replace each open piece by OPEN, working on the source text by offsets: a character class,
  // or a repetition of label characters that has a class or no upper bound.
  const cuts: { start: number; end: number }[] = [];
  const visit = (node: AST.Node): void => {
    const open =
      ((node.type === 'CharacterClass' || node.type === 'CharacterSet') && labelOnly(node)) ||
      (node.type === 'Quantifier' &&
        labelOnly(node.element) &&
        (node.max === Infinity || hasClass(node.element)));
    if (open) cuts.push({ start: node.start, end: node.end });
    else for (const child of childrenOf(node)) visit(child);
  };
  visit(pattern);
  let rewritten = '';
  let at = 0;
  for (const cut of cuts) {
    rewritten += `${source.slice(at, cut.start)}\\x01`;
    at = cut.end;
  }
  rewritten += source.slice(at);
  // Up to a few hundred hosts: a narrowed rule (covered-hosts.ts) spells out each label choice.
  const prefixes = literalPrefixes(rewritten, 256);
  if (prefixes === null || prefixes.length === 0) return null;
  const hosts = new Set<string>();
  for (const p of prefixes) {
    const m = /^https?:\/\/([^/:?#@]+)[/:]/.exec(p);
    if (!m) return null;
    hosts.add(
      m[1]!
        .split('.')
        .map((label) => (label.includes(OPEN) ? '*' : label))
        .join('.'),
    );
  }
  return [...hosts];
}

/** Whether a piece only ever matches characters that stay inside one host label. */
function labelOnly(node: AST.Node): boolean {
  return !NOT_IN_LABEL.some((c) => mayMatchChar(node, c));
}

function hasClass(node: AST.Node): boolean {
  return (
    node.type === 'CharacterClass' ||
    node.type === 'CharacterSet' ||
    childrenOf(node).some(hasClass)
  );
}
