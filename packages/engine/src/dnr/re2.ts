import type { AST } from '@eslint-community/regexpp';
import { countCapturingGroups, parsePatternOrThrow } from '../regex/pattern-ast.js';
import { dollarUses } from '../regex/replacement.js';

/**
 * Translates a ruleset regex (JavaScript syntax, no flags) into RE2 syntax as Chromium's
 * `regexFilter` accepts it. The pattern is re-serialised from its AST, so JavaScript-only
 * escapes (`\/`, `\-`) and named groups come out in forms RE2 reads the same way, and capture
 * numbering is unchanged. Lookarounds and backreferences have no RE2 equivalent: the caller
 * gets a reason instead.
 */
export type Re2Translation = { ok: true; re2: string; captures: number; estimatedInstructions: number } | { ok: false; reason: string };

class Untranslatable extends Error {}

export function translateRegex(source: string): Re2Translation {
  let pattern: AST.Pattern;
  try {
    pattern = parsePatternOrThrow(source);
  } catch (err) {
    return { ok: false, reason: `invalid JavaScript regex: ${(err as Error).message}` };
  }
  try {
    const re2 = emitAlternatives(pattern.alternatives);
    return { ok: true, re2, captures: countCapturingGroups(pattern), estimatedInstructions: estimateInstructions(pattern) };
  } catch (err) {
    if (err instanceof Untranslatable) return { ok: false, reason: err.message };
    throw err;
  }
}

function emitAlternatives(alts: AST.Alternative[]): string {
  return alts.map((a) => a.elements.map(emitElement).join('')).join('|');
}

/** RE2 refuses counted repetitions above 1000. */
const RE2_MAX_REPEAT = 1000;

function emitElement(el: AST.Element): string {
  switch (el.type) {
    case 'Character':
      return escapeChar(el.value, false);
    case 'CharacterSet':
      return emitCharacterSet(el);
    case 'CharacterClass':
      return emitClass(el);
    case 'ExpressionCharacterClass':
      throw new Untranslatable('set-notation character class');
    case 'Group':
      if (el.modifiers) throw new Untranslatable('inline modifiers');
      return `(?:${emitAlternatives(el.alternatives)})`;
    case 'CapturingGroup':
      return `(${emitAlternatives(el.alternatives)})`;
    case 'Backreference':
      throw new Untranslatable('backreference (RE2 has none)');
    case 'Assertion':
      switch (el.kind) {
        case 'start':
          return '^';
        case 'end':
          return '$';
        case 'word':
          return el.negate ? '\\B' : '\\b';
        default:
          throw new Untranslatable(`${el.negate ? 'negative ' : ''}${el.kind} (RE2 has no lookaround)`);
      }
    case 'Quantifier': {
      if (el.element.type === 'Assertion') throw new Untranslatable('quantified assertion');
      if (el.min > RE2_MAX_REPEAT || (el.max !== Infinity && el.max > RE2_MAX_REPEAT)) {
        throw new Untranslatable(`repetition count above ${RE2_MAX_REPEAT}`);
      }
      let q: string;
      if (el.min === 0 && el.max === Infinity) q = '*';
      else if (el.min === 1 && el.max === Infinity) q = '+';
      else if (el.min === 0 && el.max === 1) q = '?';
      else if (el.max === Infinity) q = `{${el.min},}`;
      else if (el.min === el.max) q = `{${el.min}}`;
      else q = `{${el.min},${el.max}}`;
      return emitElement(el.element) + q + (el.greedy ? '' : '?');
    }
  }
}

function emitCharacterSet(el: AST.CharacterSet | AST.EscapeCharacterSet | AST.UnicodePropertyCharacterSet): string {
  switch (el.kind) {
    case 'any':
      // JS `.` also excludes \r and U+2028/9; request URLs never contain them unescaped.
      return '.';
    case 'digit':
      return el.negate ? '\\D' : '\\d';
    case 'word':
      return el.negate ? '\\W' : '\\w';
    case 'space':
      return el.negate ? '\\S' : '\\s';
    default:
      throw new Untranslatable('unicode property escape');
  }
}

function emitClass(el: AST.CharacterClass): string {
  if (el.elements.length === 0) {
    // `[^]` matches any character; `[]` matches none, which RE2 cannot spell.
    if (el.negate) return '[\\s\\S]';
    throw new Untranslatable('empty character class');
  }
  let body = '';
  for (const item of el.elements) {
    if (item.type === 'Character') body += escapeChar(item.value, true);
    else if (item.type === 'CharacterClassRange') body += `${escapeChar(item.min.value, true)}-${escapeChar(item.max.value, true)}`;
    else if (item.type === 'CharacterSet') body += emitCharacterSet(item);
    else throw new Untranslatable('set-notation character class');
  }
  return `[${el.negate ? '^' : ''}${body}]`;
}

const META_OUTSIDE = new Set('\\^$.|?*+()[]{}');
const META_INSIDE = new Set('\\]^-[');

function escapeChar(code: number, inClass: boolean): string {
  // Chromium runs RE2 in Latin-1 over an ASCII (punycoded, percent-encoded) URL.
  if (code > 0x7f) throw new Untranslatable('non-ASCII character (request URLs are ASCII)');
  if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).padStart(2, '0')}`;
  const ch = String.fromCharCode(code);
  if ((inClass ? META_INSIDE : META_OUTSIDE).has(ch)) return `\\${ch}`;
  return ch;
}

/**
 * A rough count of RE2 program instructions, used to stay under Chromium's 2 KB `max_mem`
 * per regex before the browser is asked. Characters are one instruction, classes one per
 * range plus joins, repetitions expand their copies as RE2's compiler does.
 */
export function estimateInstructions(pattern: AST.Pattern): number {
  const alts = (list: AST.Alternative[]): number => list.reduce((sum, a) => sum + a.elements.reduce((s, e) => s + el(e), 0), 0) + Math.max(0, list.length - 1);
  const setCost = (kind: string): number => (kind === 'word' ? 4 : kind === 'space' ? 3 : kind === 'any' ? 2 : 1);
  const el = (e: AST.Element): number => {
    switch (e.type) {
      case 'Character':
        return 1;
      case 'CharacterSet':
        return setCost(e.kind);
      case 'CharacterClass':
        return e.elements.reduce((s, x) => s + (x.type === 'CharacterSet' ? setCost(x.kind) : 1), 0) + 1;
      case 'Group':
        return alts(e.alternatives);
      case 'CapturingGroup':
        return alts(e.alternatives) + 2;
      case 'Quantifier': {
        const inner = el(e.element);
        const copies = e.max === Infinity ? Math.max(e.min, 1) : e.max;
        return inner * copies + copies + 1;
      }
      case 'Assertion':
        return e.kind === 'lookahead' || e.kind === 'lookbehind' ? alts(e.alternatives) : 1;
      default:
        return 1;
    }
  };
  // Unanchored search adds a leading `.*?` loop; the match instruction ends the program.
  return alts(pattern.alternatives) + 4;
}

/**
 * Turns a JavaScript replacement string into an RE2 `regexSubstitution`: `$n` → `\n`,
 * `$&` → `\0`, `$$` → `$`, and literal backslashes doubled. Returns null when the replacement
 * uses something RE2 substitution cannot say (`` $` ``, `$'`, group numbers above 9).
 */
export function translateReplacement(to: string, captures: number): string | null {
  const literal = (text: string): string => text.replace(/\\/g, '\\\\');
  let out = '';
  let at = 0;
  for (const use of dollarUses(to, captures)) {
    out += literal(to.slice(at, use.offset));
    at = use.offset + use.text.length;
    if (use.kind === 'group') {
      if (use.group > 9) return null;
      out += `\\${use.group}`;
    } else if (use.kind === 'special') {
      if (use.text !== '$&') return null;
      out += '\\0';
    } else out += use.text === '$$' ? '$' : literal(use.text);
  }
  return out + literal(to.slice(at));
}
