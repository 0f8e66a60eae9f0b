import type { AST } from '@eslint-community/regexpp';
import { charSetOf, type CharSet } from './char-sets.js';
import { canMatchEmpty } from './empty-match.js';

/**
 * The one translation of a flag-less JavaScript pattern into RE2 syntax, for both RE2s httpsify
 * hands patterns to: re2js in the regex door (safe-regex.ts) and Chromium's declarativeNetRequest
 * `regexFilter` (dnr/). The structure is written back from the AST, groups keep their numbers;
 * what has no RE2 equivalent gets one reason, whichever RE2 asked.
 *
 * RE2 picks the same leftmost-first match as a backtracker, with two differences: a capture
 * inside a repeated group keeps a value from an earlier iteration where JavaScript resets it, and
 * a repeated part that can match empty text may stop after an empty iteration where JavaScript
 * goes on. For a pattern that is only tested (exclusions, cookies, scopes, allow rules) neither
 * changes whether it matches; for a rule `from`, whose match and captures build the new URL, such
 * patterns are refused (repeated captures only when its `to` uses them).
 *
 * The two RE2s read different input, so characters are spelled for the one that reads them:
 * - `utf16`: any JavaScript string (re2js). Every character and class is written out as
 *   code-unit ranges, since JavaScript's `.`, `\s`, `\w` differ from RE2's.
 * - `url`: request URLs as Chromium hands them to RE2 (Latin-1 over canonical ASCII URLs, no
 *   control characters or line breaks), spelled compactly because every instruction counts
 *   against its 2 KB budget. There `.`, `\s`, `\w` and `\d` match the same URL characters as
 *   JavaScript's; a non-ASCII character can never match and is refused.
 */
export type Re2Syntax = { ok: true; re2: string } | { ok: false; reason: string };

export interface Re2SyntaxOptions {
  input: 'utf16' | 'url';
  /** Set for a rule's `from`: the group numbers its `to` inserts. */
  replaceGroups?: ReadonlySet<number>;
}

/** RE2's own limit on counted repeats. */
const RE2_MAX_REPEAT = 1000;

class Untranslatable extends Error {}

export function re2Syntax(pattern: AST.Pattern, options: Re2SyntaxOptions): Re2Syntax {
  try {
    return { ok: true, re2: new Emitter(options).alternatives(pattern.alternatives) };
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
  private readonly spell: (el: AST.Character | AST.CharacterSet | AST.CharacterClass) => string;

  constructor(private readonly options: Re2SyntaxOptions) {
    this.spell = options.input === 'url' ? urlSpelling : exactSpelling;
  }

  alternatives(alts: readonly AST.Alternative[]): string {
    return alts.map((a) => a.elements.map((e) => this.element(e)).join('')).join('|');
  }

  element(el: AST.Element): string {
    switch (el.type) {
      case 'Character':
      case 'CharacterSet':
      case 'CharacterClass':
        return this.spell(el as AST.Character | AST.CharacterSet | AST.CharacterClass);
      case 'Group':
        if (el.modifiers) throw new Untranslatable(`inline modifiers ${el.raw} (RE2 has none)`);
        return `(?:${this.alternatives(el.alternatives)})`;
      case 'CapturingGroup': {
        const group = ++this.groups;
        if (this.repeatDepth > 0 && this.options.replaceGroups?.has(group) === true) {
          throw new Untranslatable(
            `repeated capturing group ${el.raw} whose value the replacement uses (RE2 keeps an earlier iteration's)`,
          );
        }
        return `(${this.alternatives(el.alternatives)})`;
      }
      case 'Backreference':
        throw new Untranslatable('backreference (RE2 has none)');
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
            throw new Untranslatable(
              `${el.negate ? 'negative ' : ''}${el.kind} (RE2 has no lookaround)`,
            );
        }
      case 'Quantifier':
        return this.quantifier(el);
      default:
        throw new Untranslatable(`${(el as AST.Node).raw} (RE2 has no equivalent)`);
    }
  }

  private quantifier(q: AST.Quantifier): string {
    if (q.element.type === 'Assertion')
      throw new Untranslatable(`repeated assertion ${q.raw} (RE2 has none)`);
    if (q.min > RE2_MAX_REPEAT || (q.max !== Infinity && q.max > RE2_MAX_REPEAT)) {
      throw new Untranslatable(`repetition count above ${RE2_MAX_REPEAT} (RE2's limit)`);
    }
    const repeated = q.max > 1;
    if (repeated && this.options.replaceGroups !== undefined && canMatchEmpty(q.element)) {
      throw new Untranslatable(
        `repeated part ${q.element.raw} that can match empty text (RE2 stops earlier than JavaScript)`,
      );
    }
    if (repeated) this.repeatDepth++;
    // Every element is written as an atom (a class, an escape, a group), so no group is needed.
    const inner = this.element(q.element);
    if (repeated) this.repeatDepth--;
    let count: string;
    if (q.min === 0 && q.max === Infinity) count = '*';
    else if (q.min === 1 && q.max === Infinity) count = '+';
    else if (q.min === 0 && q.max === 1) count = '?';
    else if (q.max === Infinity) count = `{${q.min},}`;
    else if (q.min === q.max) count = `{${q.min}}`;
    else count = `{${q.min},${q.max}}`;
    return `${inner}${count}${q.greedy ? '' : '?'}`;
  }
}

/** `utf16`: the exact code units, whatever the input holds. */
function exactSpelling(el: AST.Character | AST.CharacterSet | AST.CharacterClass): string {
  const set = charSetOf(el);
  if (set === null)
    throw new Untranslatable(
      `${el.raw} (unicode property or set notation; RE2 has no equivalent here)`,
    );
  return classOf(set);
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
      lo = Math.max(
        a as number,
        (a as number) >= 0xd800 && (a as number) <= 0xdfff ? 0xe000 : (a as number),
      );
      const top = (b as number) >= 0xd800 && (b as number) <= 0xdfff ? 0xd7ff : (b as number);
      if (lo > top) continue;
      body += lo === top ? hex(lo) : `${hex(lo)}-${hex(top)}`;
    }
  }
  // An empty class (`[]`, or only surrogates) matches nothing.
  return body === '' ? '[^\\x{0}-\\x{10ffff}]' : `[${body}]`;
}

/** `url`: as written, where RE2 reads URL characters the same way; a few instructions each. */
function urlSpelling(el: AST.Character | AST.CharacterSet | AST.CharacterClass): string {
  if (el.type === 'Character') return escapeChar(el.value, false);
  if (el.type === 'CharacterSet') return urlCharacterSet(el);
  if (el.unicodeSets) throw new Untranslatable('set-notation character class (RE2 has none)');
  if (el.elements.length === 0) {
    // `[^]` matches any character; `[]` matches none, which Chromium's RE2 cannot spell.
    if (el.negate) return '[\\s\\S]';
    throw new Untranslatable('empty character class (matches nothing)');
  }
  let body = '';
  for (const item of el.elements) {
    if (item.type === 'Character') body += escapeChar(item.value, true);
    else if (item.type === 'CharacterClassRange')
      body += `${escapeChar(item.min.value, true)}-${escapeChar(item.max.value, true)}`;
    else if (item.type === 'CharacterSet') body += urlCharacterSet(item);
    else throw new Untranslatable('set-notation character class (RE2 has none)');
  }
  return `[${el.negate ? '^' : ''}${body}]`;
}

function urlCharacterSet(
  el: AST.CharacterSet | AST.EscapeCharacterSet | AST.UnicodePropertyCharacterSet,
): string {
  switch (el.kind) {
    case 'any':
      // JavaScript's `.` also leaves out \r, U+2028 and U+2029, which a request URL never holds.
      return '.';
    case 'digit':
      return el.negate ? '\\D' : '\\d';
    case 'word':
      return el.negate ? '\\W' : '\\w';
    case 'space':
      // They differ on \v and non-ASCII spaces, which a request URL never holds unescaped.
      return el.negate ? '\\S' : '\\s';
    default:
      throw new Untranslatable('unicode property escape (RE2 has no equivalent here)');
  }
}

const META_OUTSIDE = new Set('\\^$.|?*+()[]{}');
const META_INSIDE = new Set('\\]^-[');

function escapeChar(code: number, inClass: boolean): string {
  if (code > 0x7f) throw new Untranslatable('non-ASCII character (request URLs are ASCII)');
  if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).padStart(2, '0')}`;
  const ch = String.fromCharCode(code);
  if ((inClass ? META_INSIDE : META_OUTSIDE).has(ch)) return `\\${ch}`;
  return ch;
}
