import type { AST } from '@eslint-community/regexpp';
import {
  expandLiteralLanguage,
  type LiteralExpansion,
  substituteReplacement,
} from './literal-language.js';
import { literalPrefix } from './literal-prefix.js';
import { captureCount, topLevelElements } from './pattern-ast.js';
import type { RulesetRegex } from './safe-regex.js';

/**
 * Most ruleset regexes match a small finite set of strings (`^http://(www\.)?example\.com/`),
 * often followed by a lookahead over another such set (`(?!favicon\.ico|images/)`). Those run
 * as a binary search and a few compares instead of a regex: faster, and a compiled regex costs
 * V8 about 2 KB (mostly code), so the regex cache keeps its room for the patterns that need one.
 */
const MAX_CASES = 64;

export interface Lookahead {
  negate: boolean;
  texts: string[];
  /** True where the alternative ends with `$`: the rest of the input must equal it; null: none does. */
  exact: boolean[] | null;
}

/**
 * A greedy run of one character class after the finite part (`/+`, `[^?]*`), uncaptured. The
 * match takes as many characters as it can, then gives them back one at a time until the
 * lookahead (if any) holds: exactly the regex's backtracking.
 */
export interface Run {
  /** The class's characters (code units). */
  chars: string;
  /** `[^…]`: every character but those. */
  negate: boolean;
  /** 0 for `*`, 1 for `+`. */
  min: number;
}

export const enum Form {
  /** `^literal` → a `to` without `$`: the prefix is swapped for `to`. */
  Swap,
  /** A finite language: see `texts`. */
  Cases,
  /** Anything else: the regex. */
  Regex,
  /**
   * Not prepared yet: only its literal prefix is known (a scan of the source, no parse), so a
   * URL without that prefix costs one compare and the pattern is neither analysed nor judged.
   */
  Pending,
}

/**
 * A rule `from`, exclusion or securecookie pattern as the matcher runs it, built on first use.
 * One flat object per pattern (thousands stay alive): the fields of other forms are null.
 */
export interface PreparedPattern {
  readonly form: Form;
  /** Text every match starts with ('' when none is known): one compare rejects most inputs. */
  readonly prefix: string;
  /** A rule's `to` ('' for other patterns). */
  readonly to: string;
  /**
   * Cases: the pattern's finite language, sorted. `expandLiteralLanguage` refuses a language in
   * which one non-exact string is a prefix of another, so at most one string matches any input,
   * and if one does it is the greatest string not above the input (binary search), whatever the
   * regex's order of preference.
   */
  readonly texts: string[] | null;
  /** Cases: true where the pattern ends with `$` after the text (the input must equal it); null: none does. */
  readonly exact: boolean[] | null;
  /** Cases, for a rule: what each text becomes (the replacement with its `$N` filled in). */
  readonly replacements: string[] | null;
  /** Cases: the match always runs to the end of the input (the pattern ends in `.*`). */
  readonly toEnd: boolean;
  /** Cases: a run of characters the match goes on with after the text. */
  readonly run: Run | null;
  /** Cases: a trailing lookahead the match must be followed (`(?=…)`) or not followed (`(?!…)`) by. */
  readonly lookahead: Lookahead | null;
  /** Regex: the pattern, to compile (and compile again after the cache dropped it); '' for other forms. */
  readonly source: string;
  /** Regex: a rule's `from` (replaced), not a tested pattern; decides how the door judges it. */
  readonly isRule: boolean;
  /**
   * Regex: literal texts every match contains besides the prefix (`.clients.google.com/` in
   * `^http://([\w-]+)\.clients\.google\.com/`); null when none is known. An input without
   * one of them cannot match, so the pattern is not judged or run for it.
   */
  readonly required: string[] | null;
  /** Regex: compiled through the door on demand, dropped again when the regex cache is full; null when it does not compile or was refused. */
  regex: RulesetRegex | null | undefined;
  /** Regex: the pattern's entry in the bundle's PatternVerdict column, when the matcher trusts it; -1: none. */
  verdictAt: number;
}

/** A pattern not prepared yet: its literal prefix only (see Form.Pending). */
export function pendingPattern(source: string): PreparedPattern {
  return pattern(Form.Pending, flat(literalPrefix(source)?.prefix ?? ''), '', '', false, -1, null);
}

/** A pattern that is tested, not replaced: exclusions and securecookie host and name. */
export function prepareTest(source: string): PreparedPattern {
  return prepare(source, null);
}

/** A rule whose `from` is `^` + `prefix` and whose `to` has no `$` (RuleKind.Literal): no analysis needed. */
export function prepareLiteralRule(prefix: string, to: string): PreparedPattern {
  return pattern(Form.Swap, flat(prefix), to, '', true, -1, null);
}

/**
 * A rule the matcher runs as a prefix swap, with no regex (RuleKind.Literal): its `from` is `^`
 * and a literal, its `to` has no `$` pattern.
 */
export function isLiteralRule(from: string, to: string): boolean {
  const lit = literalPrefix(from);
  return lit !== null && lit.whole && !to.includes('$');
}

export function prepareRule(from: string, to: string): PreparedPattern {
  return prepare(from, to);
}

/**
 * A pattern the bundle's build already found to need a regex (it has a stored verdict): no
 * search for a finite language. `to` is the rule's replacement, null for a tested pattern.
 */
export function prepareRegex(
  source: string,
  to: string | null,
  verdictAt: number,
): PreparedPattern {
  return regexForm(source, flat(literalPrefix(source)?.prefix ?? ''), to, verdictAt);
}

function prepare(source: string, to: string | null): PreparedPattern {
  const prefix = flat(literalPrefix(source)?.prefix ?? '');
  return (
    literalCases(source, prefix, to ?? '', to !== null) ??
    regexForm(source, prefix, to, -1, requiredTexts(source, prefix))
  );
}

function regexForm(
  source: string,
  prefix: string,
  to: string | null,
  verdictAt: number,
  required: string[] | null = null,
): PreparedPattern {
  return pattern(Form.Regex, prefix, to ?? '', source, to !== null, verdictAt, null, required);
}

/** Shortest literal run worth a search of the input (a single `/` or `.` rejects nothing). */
const MIN_REQUIRED = 3;

/**
 * The runs of plain characters in a pattern's top-level sequence (no top-level `|`; a group of
 * one alternative is part of the sequence): every match reads each run, in the input, so an
 * input that lacks one cannot match. A character under `+` counts once and ends its run;
 * anything else (a class, an assertion, an optional or repeated part, a group of several
 * alternatives) ends it. Runs the prefix holds are left out. Read from the parsed tree, the
 * same one the door and the matcher read, never from the source text.
 */
function requiredTexts(source: string, prefix: string): string[] | null {
  const elements = topLevelElements(source);
  if (elements === null) return null;
  const out: string[] = [];
  let run = '';
  const end = (): void => {
    if (run.length >= MIN_REQUIRED && !prefix.includes(run) && !out.includes(run))
      out.push(flat(run));
    run = '';
  };
  const read = (sequence: readonly AST.Element[]): void => {
    for (const el of sequence) {
      if (el.type === 'Character') {
        run += String.fromCharCode(el.value);
      } else if (
        (el.type === 'Group' || el.type === 'CapturingGroup') &&
        el.alternatives.length === 1
      ) {
        read((el.alternatives[0] as AST.Alternative).elements);
      } else if (el.type === 'Quantifier' && el.min >= 1 && el.element.type === 'Character') {
        run += String.fromCharCode(el.element.value);
        end();
      } else {
        end();
      }
    }
  };
  read(elements);
  end();
  return out.length > 0 ? out : null;
}

/** Whether `input` holds every required text of a Regex pattern (see `required`). */
export function holdsRequired(p: PreparedPattern, input: string): boolean {
  const required = p.required;
  if (required === null) return true;
  for (let i = 0; i < required.length; i++)
    if (!input.includes(required[i] as string)) return false;
  return true;
}

/** The fields only a Cases pattern fills. */
type CasesFields = Pick<
  PreparedPattern,
  'texts' | 'exact' | 'replacements' | 'toEnd' | 'run' | 'lookahead'
>;

/**
 * Every prepared pattern is built here, its fields always in the same order, so that V8 gives
 * them all one hidden class and the matcher's property reads stay monomorphic.
 */
function pattern(
  form: Form,
  prefix: string,
  to: string,
  source: string,
  isRule: boolean,
  verdictAt: number,
  cases: CasesFields | null,
  required: string[] | null = null,
): PreparedPattern {
  return {
    form,
    prefix,
    to,
    texts: cases === null ? null : cases.texts,
    exact: cases === null ? null : cases.exact,
    replacements: cases === null ? null : cases.replacements,
    toEnd: cases === null ? false : cases.toEnd,
    run: cases === null ? null : cases.run,
    lookahead: cases === null ? null : cases.lookahead,
    source,
    isRule,
    required,
    regex: undefined,
    verdictAt,
  };
}

function literalCases(
  source: string,
  prefix: string,
  to: string,
  isRule: boolean,
): PreparedPattern | null {
  const elements = topLevelElements(source);
  if (elements === null) return null;
  let bodyEnd = source.length;
  let end = elements.length;
  let lookahead: Lookahead | null = null;
  const last = elements[end - 1];
  if (last?.type === 'Assertion' && last.kind === 'lookahead') {
    lookahead = lookaheadCases(last);
    if (lookahead === null) return null;
    bodyEnd = last.start;
    end--;
  }
  const before = elements[end - 1];
  const run = before?.type === 'Quantifier' ? runOf(before) : null;
  if (run !== null) bodyEnd = (before as AST.Quantifier).start;
  const language = expandLiteralLanguage(source.slice(0, bodyEnd), MAX_CASES);
  if (language === null) return null;
  // After `$` or a trailing `.*` nothing more can follow: leave such combinations to the regex.
  if (
    (lookahead !== null || run !== null) &&
    (language.consumesRest || language.expansions.some((e) => e.exact === true))
  )
    return null;
  // `$&` is the whole match: after a trailing `.*` or a run it is not a fixed text.
  if (isRule && (language.consumesRest || run !== null) && to.includes('$&')) return null;
  const captures = isRule ? captureCount(source) : 0;
  const chosen: { expansion: LiteralExpansion; replacement: string }[] = [];
  const seen = new Set<string>();
  for (const expansion of language.expansions) {
    // Equal exact strings: the regex takes the first (its captures win).
    if (seen.has(expansion.text)) continue;
    seen.add(expansion.text);
    const replacement = isRule
      ? substituteReplacement(to, expansion.text, expansion.groups, captures)
      : '';
    // `` $` `` and `$'` depend on text outside the match.
    if (replacement === null) return null;
    chosen.push({ expansion, replacement });
  }
  chosen.sort((a, b) => compareText(a.expansion.text, b.expansion.text));
  return pattern(Form.Cases, prefix, to, '', isRule, -1, {
    texts: chosen.map((c) => flat(c.expansion.text)),
    exact: exactFlags(chosen.map((c) => c.expansion)),
    replacements: isRule ? chosen.map((c) => flat(c.replacement)) : null,
    toEnd: language.consumesRest,
    run,
    lookahead,
  });
}

/** `c+`, `c*`, `[…]+` or `[^…]*` of single characters, greedy: a run; else null. */
function runOf(q: AST.Quantifier): Run | null {
  if (!q.greedy || q.max !== Infinity || q.min > 1) return null;
  const el = q.element;
  if (el.type === 'Character')
    return { chars: String.fromCharCode(el.value), negate: false, min: q.min };
  if (el.type !== 'CharacterClass' || el.unicodeSets) return null;
  let chars = '';
  for (const item of el.elements) {
    if (item.type !== 'Character') return null;
    chars += String.fromCharCode(item.value);
  }
  return { chars, negate: el.negate, min: q.min };
}

/** A lookahead whose alternatives are a finite language with no captures, else null. */
function lookaheadCases(look: AST.LookaroundAssertion): Lookahead | null {
  if (look.raw.length < 4 || /\((?!\?[:=!])/.test(look.raw.slice(3))) return null; // a capture would renumber the groups
  const language = expandLiteralLanguage(`^(?:${look.raw.slice(3, -1)})`, MAX_CASES);
  if (language === null || language.consumesRest) return null;
  return {
    negate: look.negate,
    texts: language.expansions.map((e) => flat(e.text)),
    exact: exactFlags(language.expansions),
  };
}

function exactFlags(expansions: readonly LiteralExpansion[]): boolean[] | null {
  return expansions.some((e) => e.exact === true) ? expansions.map((e) => e.exact === true) : null;
}

/**
 * The expansions are built by concatenation, which V8 keeps as trees of string pieces: several
 * times the memory of the text, for as long as the pattern stays prepared. A JSON round trip
 * is the portable way to get one flat string (once per string, at preparation).
 */
function flat(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/** Code-unit order, the order `<` and `startsWith` agree with. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What a Swap or Cases rule makes of `input`: null when it does not match or changes nothing. */
export function rewriteLiteral(p: PreparedPattern, input: string): string | null {
  let out: string;
  if (p.form === Form.Swap) {
    if (!input.startsWith(p.prefix)) return null;
    out = p.to + input.slice(p.prefix.length);
  } else {
    const matchEnd = matchCase(p, input);
    if (matchEnd < 0) return null;
    const k = matchedCase;
    const replacement = (p.replacements as string[])[k] as string;
    out =
      (p.exact !== null && p.exact[k] === true) || p.toEnd
        ? replacement
        : replacement + input.slice(matchEnd);
  }
  return out === input ? null : out;
}

/** Whether a Cases pattern matches `input` (as `RegExp.test` would). */
export function casesMatch(p: PreparedPattern, input: string): boolean {
  return matchCase(p, input) >= 0;
}

/** Index of the text the last successful matchCase matched (JavaScript runs one call at a time). */
let matchedCase = 0;

/** Where the match of a Cases pattern in `input` ends, or -1; its text's index is left in `matchedCase`. */
function matchCase(p: PreparedPattern, input: string): number {
  const at = greatestAtMost(p.texts as string[], input);
  if (at < 0) return -1;
  matchedCase = at;
  return caseMatchEnd(p, at, input);
}

/** Index of the greatest of the sorted `texts` that is <= `input` (code-unit order), or -1. */
export function greatestAtMost(texts: readonly string[], input: string): number {
  let lo = 0;
  let hi = texts.length - 1;
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if ((texts[mid] as string) <= input) {
      at = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return at;
}

/**
 * Where the match of a Cases pattern through its text `k` ends in `input`, or -1: the text
 * must start the input (or be all of it, when exact), then the run and the lookahead must hold.
 */
export function caseMatchEnd(p: PreparedPattern, k: number, input: string): number {
  const text = (p.texts as string[])[k] as string;
  if (p.exact !== null && p.exact[k] === true ? input !== text : !input.startsWith(text)) return -1;
  const look = p.lookahead;
  const run = p.run;
  if (run === null)
    return look === null || lookaheadHolds(look, input, text.length) ? text.length : -1;
  const least = text.length + run.min;
  let end = text.length;
  while (end < input.length && run.chars.includes(input.charAt(end)) !== run.negate) end++;
  // Greedy: the longest run first, then shorter ones while the lookahead fails.
  for (; end >= least; end--) if (look === null || lookaheadHolds(look, input, end)) return end;
  return -1;
}
function lookaheadHolds(look: Lookahead, input: string, position: number): boolean {
  let found = false;
  for (let k = 0; k < look.texts.length && !found; k++) {
    const text = look.texts[k] as string;
    found =
      look.exact !== null && look.exact[k] === true
        ? input.length === position + text.length && input.startsWith(text, position)
        : input.startsWith(text, position);
  }
  return found !== look.negate;
}
