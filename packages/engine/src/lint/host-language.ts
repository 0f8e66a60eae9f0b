import type { AST } from '@eslint-community/regexpp';
import { coveringTarget } from './target-match.js';

/**
 * Decides whether a rule's host part can match any host one of the ruleset's targets makes the
 * ruleset a candidate for: the intersection of two regular languages, walked as a product of
 * two small automata over the characters a URL's host (and port) can hold after WHATWG parsing.
 *
 * The host part's automaton over-approximates the regex (lookarounds and `\b` are ignored, a
 * back-reference reads any string), so "no host" is a proof that the rule never fires; a host
 * found is checked again against the real RegExp and the candidate lookup (`coveringTarget`),
 * and only a host that passes both counts as a witness.
 */

/** Characters of a lower-case host name, plus `:` for the port. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789-_.:';
const LABEL_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789-_';
const DIGITS = '0123456789';

/** Characters (as a bitmask over ALPHABET) an edge accepts. */
type CharMask = bigint;

const maskOf = (chars: string): CharMask => {
  let m = 0n;
  for (const c of chars) {
    const i = ALPHABET.indexOf(c);
    if (i >= 0) m |= 1n << BigInt(i);
  }
  return m;
};
const ANY: CharMask = maskOf(ALPHABET);

interface Automaton {
  /** eps[s]: states reachable from s without reading. */
  eps: number[][];
  /** edges[s]: [mask, to] pairs. */
  edges: [CharMask, number][][];
  start: number;
  accept: number;
}

class Builder {
  eps: number[][] = [];
  edges: [CharMask, number][][] = [];
  state(): number {
    this.eps.push([]);
    this.edges.push([]);
    return this.eps.length - 1;
  }
  epsilon(from: number, to: number): void {
    (this.eps[from] as number[]).push(to);
  }
  edge(from: number, mask: CharMask, to: number): void {
    if (mask !== 0n) (this.edges[from] as [CharMask, number][]).push([mask, to]);
  }
}

/** States beyond which the host part counts as too complex to judge. */
const MAX_STATES = 4000;

class TooComplex extends Error {}

/** The characters of ALPHABET a class, set or character element matches, decided by the real RegExp. */
function maskOfElement(raw: string): CharMask {
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${raw})$`);
  } catch {
    return ANY;
  }
  let m = 0n;
  for (let i = 0; i < ALPHABET.length; i++)
    if (re.test(ALPHABET[i] as string)) m |= 1n << BigInt(i);
  return m;
}

/** Adds the elements between `from` and a new end state; returns the end state. */
function buildElements(b: Builder, elements: readonly AST.Element[], from: number): number {
  let at = from;
  for (const el of elements) at = buildElement(b, el, at);
  return at;
}

function buildAlternatives(
  b: Builder,
  alternatives: readonly AST.Alternative[],
  from: number,
): number {
  const end = b.state();
  for (const alt of alternatives) b.epsilon(buildElements(b, alt.elements, from), end);
  return end;
}

function buildElement(b: Builder, el: AST.Element, from: number): number {
  if (b.eps.length > MAX_STATES) throw new TooComplex();
  switch (el.type) {
    case 'Character':
    case 'CharacterSet':
    case 'CharacterClass':
    case 'ExpressionCharacterClass': {
      const to = b.state();
      b.edge(from, maskOfElement(el.raw), to);
      return to;
    }
    case 'Group':
    case 'CapturingGroup':
      return buildAlternatives(b, el.alternatives, from);
    case 'Quantifier': {
      let at = from;
      const min = Math.min(el.min, 20);
      for (let i = 0; i < min; i++) at = buildElement(b, el.element, at);
      if (el.max === el.min && el.min <= 20) return at;
      // Over-approximate any upper bound above the minimum as "any number more".
      const loop = b.state();
      b.epsilon(at, loop);
      const back = buildElement(b, el.element, loop);
      b.epsilon(back, loop);
      return loop;
    }
    case 'Backreference': {
      const loop = b.state();
      b.epsilon(from, loop);
      b.edge(loop, ANY, loop);
      return loop;
    }
    default:
      // Assertions (^, $, \b, lookarounds) read nothing; ignoring them only widens the language.
      return from;
  }
}

function hostPartAutomaton(elements: readonly AST.Element[]): Automaton {
  const b = new Builder();
  const start = b.state();
  const accept = buildElements(b, elements, start);
  return { eps: b.eps, edges: b.edges, start, accept };
}

/**
 * The hosts (with an optional `:port`) a target makes its ruleset a candidate for, as the
 * reference lookup does: `*` as the leftmost label stands for one label, or for any number of
 * labels when at least two labels follow it; elsewhere it stands for exactly one label.
 */
function targetAutomaton(target: string): Automaton {
  const b = new Builder();
  const start = b.state();
  const labels = target.split('.');
  let at = start;
  labels.forEach((label, i) => {
    if (i > 0) {
      const dot = b.state();
      b.edge(at, maskOf('.'), dot);
      at = dot;
    }
    if (label === '*') {
      const one = b.state();
      b.edge(at, maskOf(LABEL_CHARS), one);
      b.edge(one, maskOf(LABEL_CHARS), one);
      if (i === 0 && labels.length - 1 >= 2) {
        // `*.b.c` also covers `x.y.b.c`: more labels before the first.
        b.edge(one, maskOf('.'), at);
      }
      at = one;
      return;
    }
    for (const c of label) {
      const next = b.state();
      b.edge(at, maskOf(c), next);
      at = next;
    }
  });
  // An explicit port (80 disappears when the URL is parsed; any other stays in the host part).
  const colon = b.state();
  const port = b.state();
  b.edge(at, maskOf(':'), colon);
  b.edge(colon, maskOf(DIGITS), port);
  b.edge(port, maskOf(DIGITS), port);
  const accept = b.state();
  b.epsilon(at, accept);
  b.epsilon(port, accept);
  return { eps: b.eps, edges: b.edges, start, accept };
}

function closure(a: Automaton, states: readonly number[]): number[] {
  const seen = new Set(states);
  const stack = [...states];
  while (stack.length > 0) {
    const s = stack.pop() as number;
    for (const t of a.eps[s] as number[]) {
      if (!seen.has(t)) {
        seen.add(t);
        stack.push(t);
      }
    }
  }
  return [...seen];
}

/** Shortest string both automata accept; when there is none, the number of states visited. */
function intersection(x: Automaton, y: Automaton, budget: number): string | number | 'too-complex' {
  const startX = closure(x, [x.start]);
  const startY = closure(y, [y.start]);
  const key = (p: number, q: number): number => p * y.eps.length + q;
  const parent = new Map<number, [number, string]>();
  const queue: [number, number][] = [];
  for (const p of startX) {
    for (const q of startY) {
      const k = key(p, q);
      if (!parent.has(k)) {
        parent.set(k, [-1, '']);
        queue.push([p, q]);
      }
    }
  }
  for (let head = 0; head < queue.length; head++) {
    if (queue.length > budget) return 'too-complex';
    const [p, q] = queue[head] as [number, number];
    if (p === x.accept && q === y.accept) {
      let text = '';
      for (let k = key(p, q); ;) {
        const [prev, ch] = parent.get(k) as [number, string];
        if (prev === -1) break;
        text = ch + text;
        k = prev;
      }
      return text;
    }
    for (const [mx, px] of x.edges[p] as [CharMask, number][]) {
      for (const [my, qy] of y.edges[q] as [CharMask, number][]) {
        const both = mx & my;
        if (both === 0n) continue;
        let bit = 0;
        while (((both >> BigInt(bit)) & 1n) === 0n) bit++;
        const ch = ALPHABET[bit] as string;
        for (const p2 of closure(x, [px])) {
          for (const q2 of closure(y, [qy])) {
            const k2 = key(p2, q2);
            if (parent.has(k2)) continue;
            parent.set(k2, [key(p, q), ch]);
            queue.push([p2, q2]);
          }
        }
      }
    }
  }
  return queue.length;
}

/** Product states one ruleset may visit in all before its verdict is "unknown" (no hang on hostile input). */
const TOTAL_BUDGET = 2_000_000;

export type HostReach =
  /** A host the rule's host part matches and one of the targets covers. */
  | { kind: 'reachable'; host: string }
  /** Proven: no host covered by any target matches the host part. */
  | { kind: 'unreachable' }
  /** Too large to decide, or the only hosts found fail the real regex (lookarounds): no verdict. */
  | { kind: 'unknown' };

/**
 * Whether a closed host part (`elements`, whose source is `hostSource`) can match a host that
 * one of `targets` covers. `hostRe` is the real host-part regex anchored at both ends.
 */
export function hostReach(
  elements: readonly AST.Element[],
  hostRe: { test(input: string): boolean },
  targets: readonly string[],
): HostReach {
  let hostAutomaton: Automaton;
  try {
    hostAutomaton = hostPartAutomaton(elements);
  } catch (err) {
    if (err instanceof TooComplex) return { kind: 'unknown' };
    throw err;
  }
  const targetSet = new Set(targets);
  // Without a `:` the host part cannot match a port, so a plain target is one string to test.
  const colon = maskOf(':');
  const portFree = hostAutomaton.edges.every((edges) =>
    edges.every(([mask]) => (mask & colon) === 0n),
  );
  let unsure = false;
  let budget = TOTAL_BUDGET;
  for (const target of targets) {
    if (!target.includes('*')) {
      if (hostRe.test(target)) return { kind: 'reachable', host: target };
      if (portFree) continue;
    }
    if (budget <= 0) return { kind: 'unknown' };
    const found = intersection(hostAutomaton, targetAutomaton(target), Math.min(budget, 200_000));
    if (typeof found === 'number') {
      budget -= found;
      continue;
    }
    if (found === 'too-complex') {
      unsure = true;
      budget = 0;
      continue;
    }
    const name = found.replace(/:\d*$/, '');
    if (hostRe.test(found) && coveringTarget(name, targetSet) !== null)
      return { kind: 'reachable', host: name };
    // The over-approximation found a host the real regex rejects (a lookaround, say): no proof.
    unsure = true;
  }
  return unsure ? { kind: 'unknown' } : { kind: 'unreachable' };
}
