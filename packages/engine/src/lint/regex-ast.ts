import type { AST } from '@eslint-community/regexpp';
import { childrenOf } from '../regex/pattern-ast.js';
export { countCapturingGroups, parsePattern } from '../regex/pattern-ast.js';

/**
 * Branch count of a pattern, which sets how many tests a rule or exclusion needs:
 * 1 + for every disjunction (top level or in a group) its alternatives minus one
 *   + for every quantifier that may match zero times or repeat (`?`, `*`, `+`, `{0,n}`, `{1,3}`) one.
 * A fixed count (`{3}`), character classes and escapes add nothing, and lookarounds add
 * nothing: a URL a lookaround rejects is not the rule's, so no test of the rule can show it
 * (EFF's checker subtracted them; see docs/writing-rulesets.md).
 */
export function branchCount(pattern: AST.Pattern): number {
  let branches = 0;
  const visit = (node: AST.Node): void => {
    switch (node.type) {
      case 'Pattern':
      case 'Group':
      case 'CapturingGroup':
        branches += node.alternatives.length - 1;
        break;
      case 'Quantifier':
        // Optional (`?`, `*`) or repeatable (`+`, `{1,3}`): one more test, as EFF's checker counted.
        if (node.min === 0 || node.max > node.min) branches += 1;
        break;
      case 'Assertion':
        return;
      default:
        break;
    }
    for (const child of childrenOf(node)) visit(child);
  };
  visit(pattern);
  return 1 + branches;
}

/** The host part of an `^http://host/...` pattern, as top-level AST elements. */
export interface HostPart {
  /** Source text of the host part (between `://` and the first top-level `/`). */
  source: string;
  elements: AST.Element[];
  /** Offset of the host part in the pattern source. */
  start: number;
  /** Whether a top-level `/` closes the host part. */
  closed: boolean;
}

/** Scheme prefixes a ruleset pattern may start with; longest first. */
const SCHEME_PREFIXES = ['^https?://', '^http(s)?://', '^http(?:s)?://', '^https://', '^http://'];

/**
 * Splits `^http://host-part/...` at the first `/` outside any group. Null when the pattern does
 * not start with a scheme prefix, has a top-level `|`, or the prefix or host part cannot be
 * separated at top level (a group spanning `://` or the `/`).
 */
export function hostPartOf(source: string, pattern: AST.Pattern): HostPart | null {
  const prefix = SCHEME_PREFIXES.find((p) => source.startsWith(p));
  if (prefix === undefined || pattern.alternatives.length !== 1) return null;
  const elements = (pattern.alternatives[0] as AST.Alternative).elements;
  const first = elements.findIndex((e) => e.start >= prefix.length);
  if (first === -1) return { source: '', elements: [], start: prefix.length, closed: false };
  if (first > 0 && (elements[first - 1] as AST.Element).end > prefix.length) return null;
  const host: AST.Element[] = [];
  for (let i = first; i < elements.length; i++) {
    const el = elements[i] as AST.Element;
    if (isSlash(el)) {
      return {
        source: source.slice(prefix.length, el.start),
        elements: host,
        start: prefix.length,
        closed: true,
      };
    }
    host.push(el);
  }
  // No top-level `/`: if one hides inside a group, host and path cannot be told apart.
  if (host.some((el) => el.raw.includes('/'))) return null;
  return {
    source: source.slice(prefix.length),
    elements: host,
    start: prefix.length,
    closed: false,
  };
}

/** A top-level `/` or `/+` (some rules accept repeated slashes) ends the host part. */
function isSlash(el: AST.Element): boolean {
  if (el.type === 'Character') return el.value === 0x2f;
  return (
    el.type === 'Quantifier' &&
    el.min >= 1 &&
    el.element.type === 'Character' &&
    el.element.value === 0x2f
  );
}

/** Offsets of unescaped `.` (any character) inside the given elements, outside character classes. */
export function unescapedDots(elements: readonly AST.Node[]): number[] {
  const found: number[] = [];
  const visit = (node: AST.Node): void => {
    if (node.type === 'CharacterSet' && node.kind === 'any') found.push(node.start);
    for (const child of childrenOf(node)) visit(child);
  };
  for (const el of elements) visit(el);
  return found;
}

const SAMPLE_LIMIT = 48;
const CLASS_PROBES = ['a', 'w', 'x', '0', '1', '-', '_', '.', '/', '?', '=', ' '];

function probeClass(raw: string): string {
  const re = new RegExp(`^${raw}$`);
  for (const probe of CLASS_PROBES) if (re.test(probe)) return probe;
  return '';
}

function crossJoin(left: string[], right: string[]): string[] {
  const out: string[] = [];
  for (const a of left) {
    for (const b of right) {
      out.push(a + b);
      if (out.length >= SAMPLE_LIMIT) return out;
    }
  }
  return out;
}

function samplesOfAlternatives(alternatives: readonly AST.Alternative[]): string[] {
  const out: string[] = [];
  for (const alt of alternatives) {
    for (const s of samplesOf(alt.elements)) {
      if (out.length >= SAMPLE_LIMIT) return out;
      out.push(s);
    }
  }
  return out;
}

function samplesOfElement(el: AST.Element): string[] {
  switch (el.type) {
    case 'Character':
      return [String.fromCodePoint(el.value)];
    case 'CharacterSet':
      // An unescaped `.` in a host part usually stands for a literal dot: try both readings.
      return el.kind === 'any' ? ['a', '.'] : [probeClass(el.raw)];
    case 'CharacterClass':
      return [probeClass(el.raw)];
    case 'Group':
    case 'CapturingGroup':
      return samplesOfAlternatives(el.alternatives);
    case 'Quantifier': {
      const inner = samplesOfElement(el.element);
      const once = el.min <= 1 ? inner : inner.map((s) => s.repeat(el.min));
      return el.min === 0 ? ['', ...once].slice(0, SAMPLE_LIMIT) : once;
    }
    default:
      // Assertions and back-references consume nothing we can predict; callers verify samples.
      return [''];
  }
}

/**
 * A few strings the elements may match, one per combination of branches (bounded): every
 * alternative, each optional part present and absent, one representative character per class.
 * Lookarounds are ignored here, so callers must check samples against the real RegExp.
 */
export function samplesOf(elements: readonly AST.Element[]): string[] {
  let acc = [''];
  for (const el of elements) acc = crossJoin(acc, samplesOfElement(el));
  return acc;
}
