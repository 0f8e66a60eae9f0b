import type { AST } from '@eslint-community/regexpp';

/**
 * A parser for the plain part of regex syntax that nearly every ruleset pattern is written in:
 * literals, escaped punctuation, `.`, `\d \w \s` (and negations), classes with ranges, groups,
 * lookaheads, `^ $`, `|` and the quantifiers. It returns exactly the tree regexpp would
 * (same node types, fields, positions and raw text) or null for anything else, which then goes
 * to regexpp (pattern-ast.ts). It exists for cold start: loading and warming regexpp costs a
 * fresh process 10-15 ms, more than all the rest of loading a bundle and rewriting a URL.
 *
 * It never accepts what regexpp would reject or read differently: every doubtful corner of
 * Annex B syntax (`{` as a literal, `\b`, `\1`, `(?<`, a quantified lookahead, lone `]`...) is
 * left to regexpp. test/common-syntax.test.ts compares both parsers on every corpus pattern
 * and on generated ones.
 */
export function parseCommonPattern(source: string): AST.Pattern | null {
  const parser = new CommonSyntaxParser(source);
  try {
    const pattern = parser.pattern();
    return parser.at === source.length ? pattern : null;
  } catch (err) {
    if (err === OUTSIDE) return null;
    throw err;
  }
}

/** Thrown where the source leaves the common syntax (one shared value: nothing to allocate). */
const OUTSIDE = new Error('outside the common regex syntax');

/** Deepest group nesting read here; deeper patterns go to regexpp. */
const MAX_DEPTH = 32;
/** Longest `{n,m}` bound read here. */
const MAX_BOUND_DIGITS = 6;

/** Characters with a meaning of their own outside a class (a lone `]` or `}` is left to regexpp too). */
const SYNTAX = '^$\\.*+?()[]{}|';

const CLASS_ESCAPES: Record<string, { kind: 'digit' | 'space' | 'word'; negate: boolean }> = {
  d: { kind: 'digit', negate: false },
  D: { kind: 'digit', negate: true },
  s: { kind: 'space', negate: false },
  S: { kind: 'space', negate: true },
  w: { kind: 'word', negate: false },
  W: { kind: 'word', negate: true },
};

type Container = AST.Pattern | AST.Group | AST.CapturingGroup | AST.LookaheadAssertion;
type Atom = AST.Character | AST.CharacterSet | AST.CharacterClass | AST.Group | AST.CapturingGroup;

class CommonSyntaxParser {
  at = 0;
  private depth = 0;

  constructor(private readonly source: string) {}

  pattern(): AST.Pattern {
    const node: AST.Pattern = {
      type: 'Pattern',
      parent: null,
      start: 0,
      end: 0,
      raw: '',
      alternatives: [],
    };
    this.disjunction(node);
    return this.close(node, 0);
  }

  /** Alternatives separated by `|`, up to a `)` or the end, appended to `container`. */
  private disjunction(container: Container): void {
    for (;;) {
      container.alternatives.push(this.alternative(container));
      if (this.source[this.at] !== '|') return;
      this.at++;
    }
  }

  private alternative(parent: Container): AST.Alternative {
    const start = this.at;
    const node: AST.Alternative = {
      type: 'Alternative',
      parent,
      start,
      end: start,
      raw: '',
      elements: [],
    };
    for (;;) {
      const c = this.source[this.at];
      if (c === undefined || c === '|' || c === ')') return this.close(node, start);
      node.elements.push(this.term(node));
    }
  }

  private term(parent: AST.Alternative): AST.Element {
    const start = this.at;
    const c = this.source[this.at] as string;
    if (c === '^' || c === '$') {
      this.at++;
      const node: AST.EdgeAssertion = {
        type: 'Assertion',
        parent,
        start,
        end: this.at,
        raw: c,
        kind: c === '^' ? 'start' : 'end',
      };
      this.refuseQuantifier();
      return node;
    }
    if (
      c === '(' &&
      this.source[this.at + 1] === '?' &&
      (this.source[this.at + 2] === '=' || this.source[this.at + 2] === '!')
    ) {
      const node: AST.LookaheadAssertion = {
        type: 'Assertion',
        parent,
        start,
        end: start,
        raw: '',
        kind: 'lookahead',
        negate: this.source[this.at + 2] === '!',
        alternatives: [],
      };
      this.group(node, 3);
      this.refuseQuantifier();
      return node;
    }
    const atom = this.atom(parent);
    return this.quantified(parent, atom) ?? atom;
  }

  private atom(parent: AST.Alternative): Atom {
    const start = this.at;
    const c = this.source[this.at] as string;
    if (c === '(') {
      if (this.source[this.at + 1] === '?') {
        if (this.source[this.at + 2] !== ':') throw OUTSIDE;
        const node: AST.Group = {
          type: 'Group',
          parent,
          start,
          end: start,
          raw: '',
          modifiers: null,
          alternatives: [],
        };
        this.group(node, 3);
        return node;
      }
      const node: AST.CapturingGroup = {
        type: 'CapturingGroup',
        parent,
        start,
        end: start,
        raw: '',
        name: null,
        alternatives: [],
        references: [],
      };
      this.group(node, 1);
      return node;
    }
    if (c === '[') return this.characterClass(parent);
    if (c === '.') {
      this.at++;
      return { type: 'CharacterSet', parent, start, end: this.at, raw: '.', kind: 'any' };
    }
    if (c === '\\') return this.escape(parent);
    if (SYNTAX.includes(c)) throw OUTSIDE;
    return this.character(parent, start, 1);
  }

  /** `(` + a prefix of `opener` characters, the alternatives, `)`. */
  private group(
    node: AST.Group | AST.CapturingGroup | AST.LookaheadAssertion,
    opener: number,
  ): void {
    if (++this.depth > MAX_DEPTH) throw OUTSIDE;
    const start = this.at;
    this.at += opener;
    this.disjunction(node);
    if (this.source[this.at] !== ')') throw OUTSIDE;
    this.at++;
    this.depth--;
    this.close(node, start);
  }

  /** The quantifier after `atom`, wrapping it, or null when none follows. */
  private quantified(parent: AST.Alternative, atom: Atom): AST.Quantifier | null {
    const c = this.source[this.at];
    let min: number;
    let max: number;
    if (c === '*' || c === '+' || c === '?') {
      this.at++;
      min = c === '+' ? 1 : 0;
      max = c === '?' ? 1 : Infinity;
    } else if (c === '{') {
      this.at++;
      min = this.bound();
      max = min;
      if (this.source[this.at] === ',') {
        this.at++;
        max = this.source[this.at] === '}' ? Infinity : this.bound();
      }
      if (this.source[this.at] !== '}' || max < min) throw OUTSIDE;
      this.at++;
    } else {
      return null;
    }
    const greedy = this.source[this.at] !== '?';
    if (!greedy) this.at++;
    const node: AST.Quantifier = {
      type: 'Quantifier',
      parent,
      start: atom.start,
      end: this.at,
      raw: '',
      min,
      max,
      greedy,
      element: atom,
    };
    node.raw = this.source.slice(node.start, node.end);
    atom.parent = node;
    this.refuseQuantifier();
    return node;
  }

  /** Decimal digits of a `{n,m}` bound. */
  private bound(): number {
    const start = this.at;
    while (this.at - start <= MAX_BOUND_DIGITS && isDigit(this.source[this.at])) this.at++;
    if (this.at === start || this.at - start > MAX_BOUND_DIGITS) throw OUTSIDE;
    return Number(this.source.slice(start, this.at));
  }

  /** After an assertion or a quantifier, another quantifier is an error or Annex B: regexpp's call. */
  private refuseQuantifier(): void {
    const c = this.source[this.at];
    if (c === '*' || c === '+' || c === '?' || c === '{') throw OUTSIDE;
  }

  private characterClass(parent: AST.Alternative): AST.CharacterClass {
    const start = this.at;
    this.at++;
    const negate = this.source[this.at] === '^';
    if (negate) this.at++;
    // `[]` and `[^]` (nothing, anything) are rare enough to leave to regexpp.
    if (this.source[this.at] === ']') throw OUTSIDE;
    const node: AST.ClassRangesCharacterClass = {
      type: 'CharacterClass',
      parent,
      start,
      end: start,
      raw: '',
      unicodeSets: false,
      negate,
      elements: [],
    };
    for (;;) {
      const c = this.source[this.at];
      if (c === undefined) throw OUTSIDE;
      if (c === ']') break;
      const first = this.classAtom(node);
      if (
        this.source[this.at] !== '-' ||
        this.source[this.at + 1] === ']' ||
        this.source[this.at + 1] === undefined
      ) {
        node.elements.push(first);
        continue;
      }
      // `a-z`: both ends must be single characters in order (`[\d-z]` is Annex B: regexpp's).
      this.at++;
      const last = this.classAtom(node);
      if (first.type !== 'Character' || last.type !== 'Character' || first.value > last.value)
        throw OUTSIDE;
      const range: AST.CharacterClassRange = {
        type: 'CharacterClassRange',
        parent: node,
        start: first.start,
        end: last.end,
        raw: '',
        min: first,
        max: last,
      };
      range.raw = this.source.slice(range.start, range.end);
      first.parent = range;
      last.parent = range;
      node.elements.push(range);
    }
    this.at++;
    return this.close(node, start);
  }

  private classAtom(parent: AST.ClassRangesCharacterClass): AST.Character | AST.EscapeCharacterSet {
    if (this.source[this.at] === '\\') return this.escape(parent);
    return this.character(parent, this.at, 1);
  }

  /** `\d`-style sets and `\` before ASCII punctuation; every other escape is regexpp's. */
  private escape(
    parent: AST.Alternative | AST.ClassRangesCharacterClass,
  ): AST.Character | AST.EscapeCharacterSet {
    const start = this.at;
    const c = this.source[this.at + 1];
    if (c === undefined) throw OUTSIDE;
    const set = CLASS_ESCAPES[c];
    if (set !== undefined) {
      this.at += 2;
      return {
        type: 'CharacterSet',
        parent,
        start,
        end: this.at,
        raw: this.source.slice(start, this.at),
        kind: set.kind,
        negate: set.negate,
      } as AST.EscapeCharacterSet;
    }
    // Letters, digits and `_` make special escapes (or Annex B identity escapes): regexpp's.
    if (!isPunctuation(c.charCodeAt(0))) throw OUTSIDE;
    return this.character(parent, start, 2);
  }

  /** The character ending `width` code units after `start` (its last unit is the value). */
  private character(parent: AST.Character['parent'], start: number, width: number): AST.Character {
    const end = start + width;
    const value = this.source.charCodeAt(end - 1);
    // Surrogates: how a lone half or a pair reads is regexpp's call.
    if (value >= 0xd800 && value <= 0xdfff) throw OUTSIDE;
    this.at = end;
    return {
      type: 'Character',
      parent,
      start,
      end,
      raw: this.source.slice(start, end),
      value,
    } as AST.Character;
  }

  /** Sets `end` to here and `raw` to the text from `start`. */
  private close<N extends AST.Node>(node: N, start: number): N {
    node.end = this.at;
    node.raw = this.source.slice(start, this.at);
    return node;
  }
}

/** Printable ASCII (space included) other than letters, digits and `_`. */
function isPunctuation(code: number): boolean {
  if (code < 0x20 || code > 0x7e || code === 0x5f) return false;
  return !(
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a)
  );
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}
