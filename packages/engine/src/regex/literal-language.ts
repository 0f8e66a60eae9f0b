import type { AST } from '@eslint-community/regexpp';
import { dollarUses } from './replacement.js';
import { anchoredElements } from './pattern-ast.js';

/** One string of a finite regex language, with the capture values that produce it. */
export interface LiteralExpansion {
  text: string;
  /** Index 1..n: what each capturing group matched; undefined when it did not take part. */
  groups: (string | undefined)[];
  /** A `$` ends this string: the URL must equal it, not just start with it. */
  exact?: boolean;
}

export interface LiteralLanguage {
  /** Every string the pattern can match, each starting at the beginning of the URL. */
  expansions: LiteralExpansion[];
  /** Every expansion is exact (the pattern ends with `$`). */
  anchoredEnd: boolean;
  /**
   * The pattern ends with an uncaptured `.*`: the match always runs to the end of the URL, so
   * a replacement gives the same whole URL for every URL with the prefix.
   */
  consumesRest: boolean;
}

class NotFinite extends Error {}

/**
 * Expands a `^`-anchored pattern whose language is a small finite set of strings
 * (e.g. `^http://(www\.)?example\.com/`). Such patterns need no regex in DNR at all: each
 * string becomes a prefix `urlFilter`, which keeps them out of the 1,000-regex budget.
 * Returns null for anything else, or when there would be more than `limit` strings.
 */
export function expandLiteralLanguage(
  source: string,
  limit = 32,
  options: { digits?: boolean } = {},
): LiteralLanguage | null {
  const anchored = anchoredElements(source);
  if (!anchored) return null;
  let body = anchored;
  let consumesRest = false;
  const last = body[body.length - 1];
  if (
    last &&
    last.type === 'Quantifier' &&
    last.min === 0 &&
    last.max === Infinity &&
    last.element.type === 'CharacterSet' &&
    last.element.kind === 'any'
  ) {
    consumesRest = true;
    body = body.slice(0, -1);
  }
  try {
    const expansions = expandSequence(body, [{ text: '', groups: [] }], limit, {
      digits: options.digits === true,
    });
    if (consumesRest && expansions.some((e) => e.exact)) return null;
    // Prefix filters cannot express "the first alternative that matches" when one string is a
    // prefix of another: leave such patterns to a real regex.
    for (const a of expansions) {
      if (a.exact) continue;
      for (const b of expansions) if (a !== b && b.text.startsWith(a.text)) return null;
    }
    return { expansions, anchoredEnd: expansions.every((e) => e.exact === true), consumesRest };
  } catch (err) {
    if (err instanceof NotFinite) return null;
    throw err;
  }
}

/** What else may be spelled out: `\d` (ten strings; `[0-9]` always is). */
interface Spell {
  digits: boolean;
}
const NO_SPELL: Spell = { digits: false };

function expandSequence(
  elements: AST.Element[],
  start: LiteralExpansion[],
  limit: number,
  spell: Spell,
): LiteralExpansion[] {
  let acc = start;
  for (const el of elements) acc = expandElement(el, acc, limit, spell);
  return acc;
}

function concat(
  prefixes: LiteralExpansion[],
  options: LiteralExpansion[],
  limit: number,
): LiteralExpansion[] {
  if (prefixes.length * options.length > limit) throw new NotFinite();
  const out: LiteralExpansion[] = [];
  for (const p of prefixes) {
    for (const o of options) {
      // After `$` nothing more can match.
      if (p.exact && o.text !== '') continue;
      const groups = p.groups.slice();
      o.groups.forEach((g, i) => {
        if (g !== undefined) groups[i] = g;
      });
      out.push(
        p.exact || o.exact
          ? { text: p.text + o.text, groups, exact: true }
          : { text: p.text + o.text, groups },
      );
    }
  }
  return out;
}

/** All strings one element matches on its own (relative group values, empty text start). */
function options(el: AST.Element, limit: number, spell: Spell): LiteralExpansion[] {
  switch (el.type) {
    case 'Character':
      return [{ text: String.fromCharCode(el.value), groups: [] }];
    case 'Assertion':
      if (el.kind === 'end') return [{ text: '', groups: [], exact: true }];
      throw new NotFinite();
    case 'CharacterSet': {
      if (!spell.digits || el.kind !== 'digit' || el.negate || limit < 10) throw new NotFinite();
      return Array.from({ length: 10 }, (_, i) => ({ text: String(i), groups: [] }));
    }
    case 'CharacterClass': {
      if (el.negate) throw new NotFinite();
      const out: LiteralExpansion[] = [];
      for (const item of el.elements) {
        if (item.type === 'Character')
          out.push({ text: String.fromCharCode(item.value), groups: [] });
        else if (item.type === 'CharacterClassRange' && item.max.value - item.min.value < limit) {
          for (let c = item.min.value; c <= item.max.value; c++)
            out.push({ text: String.fromCharCode(c), groups: [] });
        } else throw new NotFinite();
      }
      if (out.length > limit) throw new NotFinite();
      return out;
    }
    case 'Group':
    case 'CapturingGroup': {
      const out: LiteralExpansion[] = [];
      for (const alt of el.alternatives)
        out.push(...expandSequence(alt.elements, [{ text: '', groups: [] }], limit, spell));
      if (out.length > limit) throw new NotFinite();
      if (el.type === 'CapturingGroup') {
        const index = captureIndex(el);
        for (const o of out) o.groups[index] = o.text;
        if (out.some((o) => o.exact)) throw new NotFinite();
      }
      return out;
    }
    case 'Quantifier': {
      if (el.max === Infinity || el.max > 4) throw new NotFinite();
      const inner = options(el.element, limit, spell);
      const out: LiteralExpansion[] = [];
      let reps: LiteralExpansion[] = [{ text: '', groups: [] }];
      const byCount: LiteralExpansion[][] = [];
      for (let n = 0; n <= el.max; n++) {
        if (n >= el.min) byCount.push(reps);
        if (n < el.max) reps = concat(reps, inner, limit);
      }
      // Keep the regex's preference order: greedy tries the most repetitions first.
      if (el.greedy) byCount.reverse();
      for (const list of byCount) out.push(...list);
      if (out.length > limit) throw new NotFinite();
      return out;
    }
    default:
      throw new NotFinite();
  }
}

function expandElement(
  el: AST.Element,
  acc: LiteralExpansion[],
  limit: number,
  spell: Spell,
): LiteralExpansion[] {
  return concat(acc, options(el, limit, spell), limit);
}

/** 1-based number of a capturing group: count the `(` of capturing groups before it. */
function captureIndex(group: AST.CapturingGroup): number {
  let root: AST.Node = group;
  while (root.parent) root = root.parent;
  let index = 0;
  let found = 0;
  const visit = (node: AST.Node): void => {
    if (found) return;
    if (node.type === 'CapturingGroup') {
      index++;
      if (node === group) {
        found = index;
        return;
      }
    }
    const children: AST.Node[] =
      'alternatives' in node
        ? node.alternatives
        : 'elements' in node
          ? (node.elements as AST.Node[])
          : 'element' in node
            ? [node.element]
            : [];
    for (const child of children) visit(child);
  };
  visit(root);
  return found;
}

/**
 * JavaScript `String.prototype.replace` replacement expansion for one known match at the
 * start of the URL. Returns null for `` $` `` and `$'`, which depend on text outside the match.
 */
export function substituteReplacement(
  to: string,
  match: string,
  groups: (string | undefined)[],
  captures: number,
): string | null {
  let out = '';
  let at = 0;
  for (const use of dollarUses(to, captures)) {
    out += to.slice(at, use.offset);
    at = use.offset + use.text.length;
    if (use.kind === 'group') out += groups[use.group] ?? '';
    else if (use.kind === 'special') {
      if (use.text !== '$&') return null;
      out += match;
    } else out += use.text === '$$' ? '$' : use.text;
  }
  return out + to.slice(at);
}

/**
 * Literal prefixes every match of a `^`-anchored pattern starts with: the longest run of leading
 * elements with a small finite language (a `c+` contributes one `c`, then stops the run).
 * Shortest forms only (a string that extends another is dropped). Null when the pattern is not
 * anchored or has alternatives at the top.
 */
export function literalPrefixes(source: string, limit = 32): string[] | null {
  const anchored = anchoredElements(source);
  if (!anchored) return null;
  let acc: LiteralExpansion[] = [{ text: '', groups: [] }];
  for (const el of anchored) {
    try {
      if (el.type === 'Quantifier' && el.min >= 1 && el.max === Infinity) {
        acc = concat(acc, options(el.element, limit, NO_SPELL), limit);
        break;
      }
      acc = concat(acc, options(el, limit, NO_SPELL), limit);
    } catch (err) {
      if (err instanceof NotFinite) break;
      throw err;
    }
  }
  const texts = [...new Set(acc.map((e) => e.text))].sort((a, b) => a.length - b.length);
  return texts.filter((t, i) => !texts.slice(0, i).some((shorter) => t.startsWith(shorter)));
}
