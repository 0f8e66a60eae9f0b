import type { AST } from '@eslint-community/regexpp';
import { charSetOf, type CharSet } from './char-sets.js';

/**
 * Spells a flag-less JavaScript pattern in RE2 syntax for the linear-time matcher (re2js) so that
 * it matches exactly what `RegExp` matches: every character and class is written out as code-unit
 * ranges (JavaScript's `.`, `\s`, `\w` differ from RE2's), groups keep their numbers.
 *
 * RE2 picks the same leftmost-first match as a backtracker, with two differences: a capture
 * inside a repeated group keeps a value from an earlier iteration where JavaScript resets it, and
 * a repeated part that can match empty text may stop after an empty iteration where JavaScript
 * goes on. For a pattern that is only tested (exclusions, cookies, scopes) neither changes
 * whether it matches; for a rule `from`, whose match and captures build the new URL, such
 * patterns are refused here (repeated captures only when its `to` uses them).
 */
export type LinearSyntax = { ok: true; re2: string } | { ok: false; reason: string };

/** RE2's own limit on counted repeats. */
const RE2_MAX_REPEAT = 1000;

class Untranslatable extends Error {}

/**
 * `forReplace`: the pattern is a rule's `from`; `usedGroups`: the group numbers its `to` inserts.
 */
export function linearSyntax(pattern: AST.Pattern, forReplace: boolean, usedGroups: ReadonlySet<number> = new Set()): LinearSyntax {
  try {
    return { ok: true, re2: new Emitter(forReplace, usedGroups).alternatives(pattern.alternatives) };
  } catch (err) {
    if (err instanceof Untranslatable) return { ok: false, reason: err.message };
    throw err;
  }
}

class Emitter {
  /** How many repeated (max > 1) quantifiers enclose the element being written. */
  private repeatDepth = 0;
  /** Capturing groups opened so far (numbering is by opening parenthesis, as written). */
  private groups = 0;

  constructor(
    private readonly forReplace: boolean,
    private readonly usedGroups: ReadonlySet<number>,
  ) {}

  alternatives(alts: readonly AST.Alternative[]): string {
    return alts.map((a) => a.elements.map((e) => this.element(e)).join('')).join('|');
  }

  element(el: AST.Element): string {
    switch (el.type) {
      case 'Character':
      case 'CharacterSet':
      case 'CharacterClass': {
        const set = charSetOf(el as AST.Character | AST.CharacterSet | AST.CharacterClass);
        if (set === null) throw new Untranslatable(`${el.raw} has no linear-time equivalent here`);
        return classOf(set);
      }
      case 'Group':
        return `(?:${this.alternatives(el.alternatives)})`;
      case 'CapturingGroup': {
        const group = ++this.groups;
        if (this.forReplace && this.repeatDepth > 0 && this.usedGroups.has(group)) {
          throw new Untranslatable(`its capturing group ${el.raw} is repeated, and the linear-time matcher would keep a different capture than JavaScript`);
        }
        return `(${this.alternatives(el.alternatives)})`;
      }
      case 'Backreference':
        throw new Untranslatable(`the backreference ${el.raw} has no linear-time equivalent`);
      case 'Assertion':
        switch (el.kind) {
          case 'start':
            return '^';
          case 'end':
            return '$';
          case 'word':
            // RE2's \b is ASCII, like JavaScript's without the u and i flags.
            return el.negate ? '\\B' : '\\b';
          default:
            throw new Untranslatable(`the ${el.kind} ${el.raw} has no linear-time equivalent`);
        }
      case 'Quantifier':
        return this.quantifier(el);
      default:
        throw new Untranslatable(`${(el as AST.Node).raw} has no linear-time equivalent`);
    }
  }

  private quantifier(q: AST.Quantifier): string {
    if (q.element.type === 'Assertion') throw new Untranslatable(`the repeated assertion ${q.raw} has no linear-time equivalent`);
    if (q.min > RE2_MAX_REPEAT || (q.max !== Infinity && q.max > RE2_MAX_REPEAT)) {
      throw new Untranslatable(`${q.raw} repeats more than ${RE2_MAX_REPEAT} times, the linear-time matcher's limit`);
    }
    const repeated = q.max > 1;
    if (repeated && this.forReplace && canMatchEmpty(q.element)) {
      throw new Untranslatable(`its repeated part ${q.element.raw} can match empty text, where the linear-time matcher stops earlier than JavaScript`);
    }
    if (repeated) this.repeatDepth++;
    const inner = this.element(q.element);
    if (repeated) this.repeatDepth--;
    let count: string;
    if (q.min === 0 && q.max === Infinity) count = '*';
    else if (q.min === 1 && q.max === Infinity) count = '+';
    else if (q.min === 0 && q.max === 1) count = '?';
    else if (q.max === Infinity) count = `{${q.min},}`;
    else if (q.min === q.max) count = `{${q.min}}`;
    else count = `{${q.min},${q.max}}`;
    return `(?:${inner})${count}${q.greedy ? '' : '?'}`;
  }
}

function canMatchEmpty(el: AST.Node): boolean {
  switch (el.type) {
    case 'Character':
    case 'CharacterSet':
    case 'CharacterClass':
      return false;
    case 'Group':
    case 'CapturingGroup':
      return el.alternatives.some((alt) => alt.elements.every(canMatchEmpty));
    case 'Quantifier':
      return el.min === 0 || canMatchEmpty(el.element);
    default:
      return true;
  }
}

const hex = (unit: number): string => `\\x{${unit.toString(16)}}`;

/**
 * A class of code units as RE2 reads it. RE2 matches code points and cannot name lone surrogates,
 * so the surrogate block is left out and a class that reaches U+FFFF runs on to U+10FFFF (the
 * matcher is only given input without surrogates; see safe-regex.ts).
 */
function classOf(set: CharSet): string {
  let body = '';
  for (let i = 0; i < set.length; i += 2) {
    let lo = set[i] as number;
    let hi = set[i + 1] as number;
    if (hi === 0xffff) hi = 0x10ffff;
    for (const [a, b] of lo < 0xd800 && hi > 0xdfff
      ? [
          [lo, 0xd7ff],
          [0xe000, hi],
        ]
      : [[lo, hi]]) {
      lo = Math.max(a as number, (a as number) >= 0xd800 && (a as number) <= 0xdfff ? 0xe000 : (a as number));
      const top = (b as number) >= 0xd800 && (b as number) <= 0xdfff ? 0xd7ff : (b as number);
      if (lo > top) continue;
      body += lo === top ? hex(lo) : `${hex(lo)}-${hex(top)}`;
    }
  }
  // An empty class (`[]`, or only surrogates) matches nothing.
  return body === '' ? '[^\\x{0}-\\x{10ffff}]' : `[${body}]`;
}
