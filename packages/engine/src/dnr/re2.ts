import type { AST } from '@eslint-community/regexpp';
import { countCapturingGroups, parsePatternOrThrow } from '../regex/pattern-ast.js';
import { dollarUses } from '../regex/replacement.js';
import { re2Syntax } from '../regex/re2-syntax.js';

/**
 * A ruleset regex (JavaScript syntax, no flags) as a Chromium `regexFilter`: the one RE2
 * translation (regex/re2-syntax.ts) spelled for request URLs, with its capture count and size
 * estimate. `replaceGroups`: for a rule's `from`, the groups its `to` inserts (so a match whose
 * captures RE2 would fill differently is refused, as the regex door refuses it).
 */
export type Re2Translation = { ok: true; re2: string; captures: number; estimatedInstructions: number } | { ok: false; reason: string };

export function translateRegex(source: string, replaceGroups?: ReadonlySet<number>): Re2Translation {
  let pattern: AST.Pattern;
  try {
    pattern = parsePatternOrThrow(source);
  } catch (err) {
    return { ok: false, reason: `invalid JavaScript regex: ${(err as Error).message}` };
  }
  const syntax = re2Syntax(pattern, { input: 'url', replaceGroups });
  if (!syntax.ok) return syntax;
  return { ok: true, re2: syntax.re2, captures: countCapturingGroups(pattern), estimatedInstructions: estimateInstructions(pattern) };
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
