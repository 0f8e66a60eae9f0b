import type { AST } from '@eslint-community/regexpp';
import { countCapturingGroups, parsePatternOrThrow } from '../regex/pattern-ast.js';
import { dollarUses } from '../regex/replacement.js';
import { re2Syntax } from '../regex/re2-syntax.js';
import { re2ProgramSize } from './re2-size.js';

/**
 * A ruleset regex (JavaScript syntax, no flags) as a Chromium `regexFilter`: the one RE2
 * translation (regex/re2-syntax.ts) spelled for request URLs, with its capture count and size
 * estimate. `replaceGroups`: for a rule's `from`, the groups its `to` inserts (so a match whose
 * captures RE2 would fill differently is refused, as the regex door refuses it).
 */
export type Re2Translation =
  | { ok: true; re2: string; captures: number; estimatedInstructions: number }
  | { ok: false; reason: string };

export function translateRegex(
  source: string,
  replaceGroups?: ReadonlySet<number>,
): Re2Translation {
  let pattern: AST.Pattern;
  try {
    pattern = parsePatternOrThrow(source);
  } catch (err) {
    return { ok: false, reason: `invalid JavaScript regex: ${(err as Error).message}` };
  }
  const syntax = re2Syntax(pattern, { input: 'url', replaceGroups });
  if (!syntax.ok) return syntax;
  // A rule's regex keeps its captures only when its substitution uses them (a redirect).
  const estimatedInstructions = re2ProgramSize(syntax.re2, replaceGroups !== undefined);
  return {
    ok: true,
    re2: syntax.re2,
    captures: countCapturingGroups(pattern),
    estimatedInstructions,
  };
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
