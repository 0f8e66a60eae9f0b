/** Characters that end a literal run in a regex source when unescaped. */
const META = new Set(['.', '[', ']', '(', ')', '{', '}', '*', '+', '?', '|', '^', '$', '\\']);

export interface LiteralPrefix {
  /** The text every match must start with, at the start of the input (the regex begins with `^`). */
  prefix: string;
  /** True when the whole regex is `^` followed by exactly this literal. */
  whole: boolean;
}

/** True when `source` has a `|` outside any group or class, which defeats prefix analysis. */
function hasTopLevelAlternation(source: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return true;
  }
  return false;
}

/**
 * The literal text an anchored regex must match first, so a cheap `startsWith` can reject a URL
 * before any regex runs (flag-less JavaScript semantics: escapes of non-alphanumerics are literal).
 * Returns null when the regex is unanchored or starts with something that is not literal.
 */
export function literalPrefix(source: string): LiteralPrefix | null {
  if (!source.startsWith('^') || hasTopLevelAlternation(source)) return null;
  let prefix = '';
  let i = 1;
  while (i < source.length) {
    const c = source[i] as string;
    let literal: string;
    let width: number;
    if (c === '\\') {
      const next = source[i + 1];
      // \d, \w, \1, \x41 and friends are classes or special escapes: stop before them.
      if (next === undefined || /[0-9A-Za-z]/.test(next)) break;
      literal = next;
      width = 2;
    } else if (META.has(c)) {
      break;
    } else {
      literal = c;
      width = 1;
    }
    const after = source[i + width];
    // A following ?, * or {m,n} may make this character optional; + keeps it mandatory once.
    if (after === '?' || after === '*' || after === '{') break;
    prefix += literal;
    i += width;
    if (after === '+') break;
  }
  if (prefix === '') return null;
  return { prefix, whole: i === source.length };
}
