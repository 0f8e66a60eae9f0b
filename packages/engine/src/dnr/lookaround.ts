import type { AST } from '@eslint-community/regexpp';
import { expandLiteralLanguage, type LiteralLanguage } from '../regex/literal-language.js';
import { topLevelElements } from '../regex/pattern-ast.js';
import { matchesChar } from './host-labels.js';

/** A literal URL prefix a lookahead carves out, and whether it must be the whole URL. */
export interface CarvedPrefix {
  text: string;
  exact: boolean;
}

/**
 * The lookaround shapes that rulesets use and DNR can still express without lookaround:
 * - `trailing`: a finite prefix followed by `(?!A|B)` or `(?=A|B)` with finite alternatives
 *   (`^http://example\.com/+(?!css/|favicon\.ico)`), split into prefix filters;
 * - `leading`: `^http://(?!A|B)rest`, a regex without the lookahead plus higher-priority
 *   carve-outs for `http://A`, `http://B`.
 */
export type LookaroundShape =
  | {
      kind: 'trailing';
      negate: boolean;
      /** Null when the prefix is not a small finite language. */
      prefix: LiteralLanguage | null;
      /** Prefix + alternative, for every combination. */
      carved: { prefixIndex: number; prefix: CarvedPrefix }[];
      /** For positive lookaheads: the same match as a regex with the lookahead captured, or null. */
      capturingSource: string | null;
      /**
       * The character `c` when `c+(?!A)` was read as `c(?!A)`: the same URLs match, but the
       * regex's match also takes the rest of the run (`//x` is replaced up to the `x`).
       */
      collapsedRun: string | null;
    }
  | { kind: 'leading'; restSource: string; carved: CarvedPrefix[] };

export function hasLookaround(source: string): boolean {
  return /\(\?<?[=!]/.test(source);
}

export function analyzeLookaround(source: string): LookaroundShape | null {
  const els = topLevelElements(source);
  if (!els) return null;
  const looks = els.filter(
    (e) => e.type === 'Assertion' && (e.kind === 'lookahead' || e.kind === 'lookbehind'),
  );
  if (looks.length !== 1) return null;
  const look = looks[0] as AST.LookaroundAssertion;
  if (look.kind !== 'lookahead' || containsLookaroundOrCapture(look)) return null;
  const at = els.indexOf(look);
  const alternatives = lookaheadLanguage(look);
  if (!alternatives) {
    // A positive lookahead that ends the pattern needs no finite language: it is captured and
    // put back (`P(?=A)` matches where `P(A)` does, and A's text goes back where it was).
    if (look.negate || at !== els.length - 1) return null;
    return {
      kind: 'trailing',
      negate: false,
      prefix: null,
      carved: [],
      capturingSource: capturedLookahead(els, look),
      collapsedRun: null,
    };
  }

  if (at === els.length - 1) {
    let before = els.slice(0, at);
    let collapsedRun: string | null = null;
    // `c+(?!A)` backtracks to a single `c` whenever no alternative starts with `c`: same as
    // `c(?!A)`. (`c+(?=A)` has no such shortcut: it also matches `ccA`.)
    const last = before[before.length - 1];
    if (
      look.negate &&
      last &&
      last.type === 'Quantifier' &&
      last.min === 1 &&
      last.max === Infinity &&
      last.element.type === 'Character'
    ) {
      const c = String.fromCharCode(last.element.value);
      if (alternatives.some((a) => a.text.startsWith(c))) return null;
      before = [...before.slice(0, -1), last.element];
      collapsedRun = c;
    }
    const prefix = expandLiteralLanguage(before.map((e) => e.raw).join(''));
    if (prefix && (prefix.consumesRest || prefix.expansions.some((e) => e.exact))) return null;
    if (!prefix && look.negate) return null;
    const carved: { prefixIndex: number; prefix: CarvedPrefix }[] = [];
    prefix?.expansions.forEach((p, prefixIndex) => {
      for (const a of alternatives)
        carved.push({ prefixIndex, prefix: { text: p.text + a.text, exact: a.exact } });
    });
    const capturingSource = look.negate ? null : capturedLookahead(els, look);
    return { kind: 'trailing', negate: look.negate, prefix, carved, capturingSource, collapsedRun };
  }

  const head = els
    .slice(0, at)
    .map((e) => e.raw)
    .join('');
  if (look.negate && (head === '^http:\\/\\/' || head === '^http://')) {
    const restSource =
      head +
      els
        .slice(at + 1)
        .map((e) => e.raw)
        .join('');
    return {
      kind: 'leading',
      restSource,
      carved: alternatives.map((a) => ({ text: `http://${a.text}`, exact: a.exact })),
    };
  }
  return null;
}

/** `P(?=A)` at the end of `els` as `P(A)`. */
function capturedLookahead(els: readonly AST.Element[], look: AST.LookaroundAssertion): string {
  const before = els
    .slice(0, els.indexOf(look))
    .map((e) => e.raw)
    .join('');
  return `${before}(${look.alternatives.map((a) => a.raw).join('|')})`;
}

/**
 * `P(?!A)`: the source of P and every string A can start with (`exact`: must end the URL), when
 * P has no lookaround and A is a small finite language; else null.
 */
export function finiteNegativeTail(
  source: string,
): { before: string; lookahead: CarvedPrefix[] } | null {
  const els = topLevelElements(source);
  const look = els?.[els.length - 1];
  if (!els || look?.type !== 'Assertion' || look.kind !== 'lookahead' || !look.negate) return null;
  const before = els
    .slice(0, -1)
    .map((e) => e.raw)
    .join('');
  if (hasLookaround(before) || hasLookaround(look.alternatives.map((a) => a.raw).join('|')))
    return null;
  const lookahead = lookaheadLanguage(look);
  return lookahead ? { before, lookahead } : null;
}

function containsLookaroundOrCapture(look: AST.LookaroundAssertion): boolean {
  const raw = look.alternatives.map((a) => a.raw).join('|');
  return /\(\?<?[=!]/.test(raw) || /\((?!\?)/.test(raw.replace(/\\./g, ''));
}

/** Every string the lookahead's alternatives can start with, if that set is small and finite. */
function lookaheadLanguage(
  look: AST.LookaroundAssertion,
): { text: string; exact: boolean }[] | null {
  const out: { text: string; exact: boolean }[] = [];
  for (const alt of look.alternatives) {
    const lang = expandLiteralLanguage(`^${alt.raw}`);
    if (!lang) return null;
    if (lang.consumesRest) return null;
    for (const e of lang.expansions) out.push({ text: e.text, exact: e.exact === true });
  }
  return out.length > 32 ? null : out;
}

/**
 * An exclusion `P(?!A)` whose prefix P is a small finite set of URL starts and whose lookahead
 * A may be any regex: URLs under P are excluded unless A follows. `c+(?!A)` (a run) is read as
 * one `c`, which is the same only when no alternative of A can start inside the run, or every
 * one swallows it first (`/+(?!/*X)`, X not starting with `/`): then A follows the one `c`
 * exactly when the reference's A follows the whole run. Without `^`, P may also match later in
 * the URL; `anchored` says which.
 */
export interface NegativeTail {
  prefixes: string[];
  anchored: boolean;
  /** A's source, for `^P(?:A)`. */
  lookSource: string;
}

export function negativeTail(source: string): NegativeTail | null {
  const els = topLevelElements(source);
  const look = els?.[els.length - 1];
  if (!els || !look || look.type !== 'Assertion' || look.kind !== 'lookahead' || !look.negate)
    return null;
  let before = els.slice(0, -1);
  if (hasLookaround(before.map((e) => e.raw).join(''))) return null;
  const anchored = before[0]?.type === 'Assertion' && before[0].kind === 'start';
  const last = before[before.length - 1];
  if (
    last?.type === 'Quantifier' &&
    last.min === 1 &&
    last.max === Infinity &&
    last.element.type === 'Character'
  ) {
    const c = String.fromCharCode(last.element.value);
    const alts = look.alternatives.map((a) => a.elements);
    const none = alts.every((a) => startsWithout(a, c));
    const swallow = alts.every((a) => {
      const [first, ...rest] = a;
      return (
        first?.type === 'Quantifier' &&
        first.min === 0 &&
        first.max === Infinity &&
        first.element.type === 'Character' &&
        String.fromCharCode(first.element.value) === c &&
        startsWithout(rest, c)
      );
    });
    if (!none && !swallow) return null;
    before = [...before.slice(0, -1), last.element];
  }
  const raw = before.map((e) => e.raw).join('');
  const lang = expandLiteralLanguage(anchored ? raw : `^${raw}`);
  if (!lang || lang.consumesRest || lang.expansions.some((e) => e.exact)) return null;
  const prefixes = lang.expansions.map((e) => e.text);
  if (!anchored && !prefixes.every((p) => p.startsWith('http://'))) return null;
  return { prefixes, anchored, lookSource: look.alternatives.map((a) => a.raw).join('|') };
}

/** Whether a match of `elements` can never start with `c` (nor be empty before a `c`). */
function startsWithout(elements: readonly AST.Element[], c: string): boolean {
  const [first, ...rest] = elements;
  if (first === undefined) return false;
  switch (first.type) {
    case 'Character':
    case 'CharacterClass':
    case 'CharacterSet':
      return !matchesChar(first, c);
    case 'Assertion':
      // `$` only holds at the URL's end, where no `c` follows.
      return first.kind === 'end';
    case 'Group':
    case 'CapturingGroup':
      return first.alternatives.every((a) => startsWithout([...a.elements, ...rest], c));
    case 'Quantifier':
      return first.min >= 1 && startsWithout([first.element], c);
    default:
      return false;
  }
}
