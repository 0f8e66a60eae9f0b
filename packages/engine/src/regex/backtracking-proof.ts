import type { AST } from '@eslint-community/regexpp';
import { charSetOf, intersects, type CharSet } from './char-sets.js';

/**
 * A proof that a backtracking matcher (V8's irregexp) runs a pattern in time linear in the
 * input, or the reason no proof was found. Decided by analysis of the pattern alone: no timing.
 *
 * The backtracker explores, for each prefix of the input, every path through the pattern that
 * reads it. Build the pattern's position automaton (Glushkov: one state per character piece,
 * counted repeats unrolled, assertions relaxed to "always holds", which only adds paths) with an
 * implicit lazy `[^]*?` in front when the pattern is not anchored, since the matcher retries at
 * every start index. If no two distinct paths that read the same text ever end in the same
 * state, then every (prefix, state) pair has at most one path, so the matcher visits at most
 * (input length + 1) x (states) paths: linear. The check walks pairs of states that read the
 * same text (the product automaton) and fails as soon as a pair that had split meets again,
 * which is exactly what `(a+)+`, `(a|aa)+`, `[a-z]*[a-z]*x` and an unanchored `x.*y` do.
 *
 * Lookarounds are proven separately: their body must be proven too and read a bounded number
 * of characters, so each evaluation costs a constant. Backreferences, nullable repeated parts
 * and oversized automata are not proven (a counted limit, not a clock, bounds the work).
 */
export type BacktrackingProof = { proven: true; quadratic: boolean } | { proven: false; reason: string };

/** Most automaton states, after unrolling counted repeats. */
const MAX_POSITIONS = 2000;
/** Most pairs of transitions the product walk may compare. */
const MAX_PRODUCT_STEPS = 2_000_000;
/** Longest text a lookaround body may read and still count as bounded. */
const MAX_LOOKAROUND_LENGTH = 256;

class NotProven extends Error {}

interface Fragment {
  first: number[];
  last: number[];
  nullable: boolean;
  /** Longest text it reads (Infinity when unbounded). */
  maxLength: number;
}

class Automaton {
  readonly sets: CharSet[] = [];
  readonly follow: Set<number>[] = [];
  /** Lookaround bodies met on the way, proven after the main automaton. */
  readonly lookarounds: { look: AST.LookaroundAssertion; offset: number }[] = [];

  position(set: CharSet): Fragment {
    if (this.sets.length >= MAX_POSITIONS) throw new NotProven(`it is too large to analyse (more than ${MAX_POSITIONS} character positions once repeats are counted out)`);
    this.sets.push(set);
    this.follow.push(new Set());
    const p = this.sets.length - 1;
    return { first: [p], last: [p], nullable: false, maxLength: 1 };
  }

  link(from: readonly number[], to: readonly number[]): void {
    for (const p of from) for (const q of to) (this.follow[p] as Set<number>).add(q);
  }

  concat(a: Fragment, b: Fragment): Fragment {
    this.link(a.last, b.first);
    return {
      first: a.nullable ? [...a.first, ...b.first] : a.first,
      last: b.nullable ? [...a.last, ...b.last] : b.last,
      nullable: a.nullable && b.nullable,
      maxLength: a.maxLength + b.maxLength,
    };
  }

  /** `offset`: the most text the pattern can have read before this part starts. */
  alternatives(alts: readonly AST.Alternative[], offset: number): Fragment {
    const out: Fragment = { first: [], last: [], nullable: false, maxLength: 0 };
    for (const alt of alts) {
      const f = this.sequence(alt.elements, offset);
      out.first.push(...f.first);
      out.last.push(...f.last);
      out.nullable ||= f.nullable;
      out.maxLength = Math.max(out.maxLength, f.maxLength);
    }
    return out;
  }

  sequence(elements: readonly AST.Element[], offset: number): Fragment {
    let acc: Fragment = { first: [], last: [], nullable: true, maxLength: 0 };
    for (const el of elements) acc = this.concat(acc, this.element(el, offset + acc.maxLength));
    return acc;
  }

  element(el: AST.Element, offset: number): Fragment {
    switch (el.type) {
      case 'Character':
      case 'CharacterSet':
      case 'CharacterClass': {
        const set = charSetOf(el as AST.Character | AST.CharacterSet | AST.CharacterClass);
        if (set === null) throw new NotProven(`it uses ${el.raw}, which this analysis does not read`);
        return this.position(set);
      }
      case 'Group':
      case 'CapturingGroup':
        return this.alternatives(el.alternatives, offset);
      case 'Assertion':
        if (el.kind === 'lookbehind') throw new NotProven(`it uses the lookbehind ${el.raw}, which this analysis does not read`);
        if (el.kind === 'lookahead') this.lookarounds.push({ look: el, offset });
        return { first: [], last: [], nullable: true, maxLength: 0 };
      case 'Backreference':
        throw new NotProven(`it uses the backreference ${el.raw}, whose cost no analysis bounds`);
      case 'Quantifier':
        return this.repeat(el, offset);
      default:
        throw new NotProven(`it uses ${el.raw}, which this analysis does not read`);
    }
  }

  /** `e{min,max}` unrolled: min copies, then `e*` or max-min nested optional copies. */
  repeat(q: AST.Quantifier, offset: number): Fragment {
    if (q.max === 0) return { first: [], last: [], nullable: true, maxLength: 0 };
    if (q.max > 1 && this.nullable(q.element)) {
      throw new NotProven(`the repeated part ${q.element.raw} can match empty text, which backtracking matchers retry without bound`);
    }
    // Every copy adds at least one position (the element is not nullable), so `position`
    // stops a huge count such as {1,100000} within MAX_POSITIONS copies.
    let acc: Fragment = { first: [], last: [], nullable: true, maxLength: 0 };
    // Inside a repeat, a lookaround is met again on every iteration.
    const inside = q.max > 1 ? Infinity : offset;
    for (let i = 0; i < q.min; i++) acc = this.concat(acc, this.element(q.element, inside));
    if (q.max === Infinity) {
      const loop = this.element(q.element, inside);
      this.link(loop.last, loop.first);
      return this.concat(acc, { ...loop, nullable: true, maxLength: Infinity });
    }
    // (e(e(e)?)?)?: each optional copy only reachable after the one before it.
    let tail: Fragment = { first: [], last: [], nullable: true, maxLength: 0 };
    for (let i = q.max - q.min; i > 0; i--) {
      const copy = this.element(q.element, inside);
      const inner = this.concat(copy, tail);
      tail = { ...inner, nullable: true };
    }
    return this.concat(acc, tail);
  }

  private nullable(el: AST.Node): boolean {
    switch (el.type) {
      case 'Character':
      case 'CharacterSet':
      case 'CharacterClass':
        return false;
      case 'Group':
      case 'CapturingGroup':
        return el.alternatives.some((alt) => alt.elements.every((e) => this.nullable(e)));
      case 'Quantifier':
        return el.min === 0 || this.nullable(el.element);
      default:
        return true;
    }
  }
}

/** Whether two paths that split can meet again in one state while reading the same text. */
function reconverges(automaton: Automaton, start: readonly number[], selfLoopStart: boolean): boolean {
  const n = automaton.sets.length + 1;
  const init = n - 1;
  const follow = (p: number): Iterable<number> => (p === init ? startFollow : (automaton.follow[p] as Set<number>));
  const startFollow = new Set(start);
  if (selfLoopStart) startFollow.add(init);
  const setOf = (p: number): CharSet => (p === init ? ANY_UNIT : (automaton.sets[p] as CharSet));
  // Pairs are unordered (p <= q); a diagonal pair is one path or two that have not split.
  const seenSplit = new Uint8Array(n * n);
  const seenJoined = new Uint8Array(n);
  const meet = new Int8Array(n * n);
  const overlap = (p: number, q: number): boolean => {
    const k = p * n + q;
    if (meet[k] === 0) meet[k] = intersects(setOf(p), setOf(q)) ? 1 : -1;
    return meet[k] === 1;
  };
  const stack: number[] = [init, init];
  seenJoined[init] = 1;
  let steps = 0;
  while (stack.length > 0) {
    const q = stack.pop() as number;
    const p = stack.pop() as number;
    const split = p !== q;
    for (const p2 of follow(p)) {
      for (const q2 of follow(q)) {
        if (++steps > MAX_PRODUCT_STEPS) throw new NotProven('it is too complex to analyse within the step limit');
        if (!split && q2 < p2) continue; // the mirror pair is visited too
        if (!overlap(p2, q2)) continue;
        if (p2 === q2) {
          if (split) return true;
          if (seenJoined[p2] === 0) {
            seenJoined[p2] = 1;
            stack.push(p2, p2);
          }
          continue;
        }
        const a = Math.min(p2, q2);
        const b = Math.max(p2, q2);
        if (seenSplit[a * n + b] === 0) {
          seenSplit[a * n + b] = 1;
          stack.push(a, b);
        }
      }
    }
  }
  return false;
}

const ANY_UNIT: CharSet = [0, 0xffff];

function anchoredAtStart(alternatives: readonly AST.Alternative[]): boolean {
  return alternatives.every((alt) => {
    const first = alt.elements[0];
    return first !== undefined && first.type === 'Assertion' && first.kind === 'start';
  });
}

/** Set by prove when a lookaround makes the pattern quadratic (see below). */
let quadratic = false;

function prove(alternatives: readonly AST.Alternative[], anchored: boolean, depth: number): Fragment {
  const automaton = new Automaton();
  // Unanchored, the whole pattern is tried again from every index: no part is met a bounded number of times.
  const whole = automaton.alternatives(alternatives, anchored ? 0 : Infinity);
  if (reconverges(automaton, whole.first, !anchored)) {
    throw new NotProven('the same text can be read along two different paths through it, so a backtracking matcher may retry exponentially or polynomially often');
  }
  for (const { look, offset } of automaton.lookarounds) {
    if (depth > 4) throw new NotProven('its lookarounds nest too deeply to analyse');
    // A lookaround is tried from one index, never retried from the next: anchored.
    const body = prove(look.alternatives, true, depth + 1);
    // Its cost is (times it runs) x (text it reads). One that reads unboundedly far is fine
    // where only boundedly many indexes can reach it (`^http://a\.com/(?!.*\.css)`), not
    // where every index can (inside a repeat, or in an unanchored pattern).
    // Met at every index of a run, each time reading up to the end, it is quadratic at worst:
    // `/+(?!.+\.css)` in 71 corpus exclusions. The caller bounds the input for those.
    if (body.maxLength > MAX_LOOKAROUND_LENGTH && offset === Infinity) quadratic = true;
  }
  return whole;
}

/** Proves a parsed flag-less pattern linear for a backtracking matcher, or says why not. */
export function proveBacktrackingLinear(pattern: AST.Pattern): BacktrackingProof {
  try {
    quadratic = false;
    prove(pattern.alternatives, anchoredAtStart(pattern.alternatives), 0);
    return { proven: true, quadratic };
  } catch (err) {
    if (err instanceof NotProven) return { proven: false, reason: err.message };
    throw err;
  }
}
