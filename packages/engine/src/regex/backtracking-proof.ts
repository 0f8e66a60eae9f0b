import type { AST } from '@eslint-community/regexpp';
import { charSetOf, intersects, type CharSet } from './char-sets.js';
import { canMatchEmpty } from './empty-match.js';

/**
 * A proof that a backtracking matcher (V8's irregexp) runs a pattern in time linear, or at worst
 * quadratic, in the input, or the reason no proof was found. Decided by analysis of the pattern
 * alone: no timing.
 *
 * The backtracker explores, for each prefix of the input, every path through the pattern that
 * reads it. Build the pattern's position automaton (Glushkov: one state per character piece,
 * counted repeats unrolled, assertions relaxed to "always holds", which only adds paths) with an
 * implicit lazy `[^]*?` in front when the pattern is not anchored, since the matcher retries at
 * every start index. A lookahead is a side branch of that automaton: wherever the matcher
 * reaches it, it runs the body from there, which costs exactly what continuing into the body
 * would, and the body's end leads nowhere (the match goes on from where the lookahead started,
 * along the main branch). So one automaton accounts for the whole work: the number of paths that
 * read some prefix of the input. If no two distinct paths that read the same text ever end in
 * the same state, that is at most one path per (prefix, state): linear. Otherwise the
 * ambiguity decides (boundAmbiguity): exponential when two paths split and meet within one loop
 * (`(a|aa)+`), and polynomial of degree d when d loops follow one another with the same text
 * readable in each and between them (`[a-z]*[a-z]*x` is d = 1; the work is n^(d+1)).
 *
 * Proven means d = 0 (linear) or d = 1 (quadratic: an anchored `/+(?!.+\.css)`, where the
 * lookahead is run at every index of a run of slashes and reads to the end each time, or an
 * unanchored `.*\.x\.com$`); a quadratic pattern is given bounded input (safe-regex.ts). Degree
 * 2 and more is not proven: `/+(?!.+/groups/.+/documents/)` is cubic. Backreferences,
 * lookbehinds, nullable repeated parts and oversized automata are not proven either (a counted
 * limit, not a clock, bounds the work).
 */
export type BacktrackingProof =
  { proven: true; quadratic: boolean } | { proven: false; reason: string };

/** Most automaton states, after unrolling counted repeats. */
const MAX_POSITIONS = 2000;
/** Most pairs of transitions the product walk may compare. */
const MAX_PRODUCT_STEPS = 2_000_000;
/** Optional parts that may themselves match empty text. */
const MAX_OPTIONAL_EMPTIES = 4;

class NotProven extends Error {}

/**
 * A part of the pattern: the states it can start and end with (`first` also holds the entries
 * of lookahead bodies met before its first character, which have no way out to `last`).
 */
interface Fragment {
  first: number[];
  last: number[];
  nullable: boolean;
}

const EMPTY: Fragment = { first: [], last: [], nullable: true };

class Automaton {
  readonly sets: CharSet[] = [];
  /**
   * Successors, with repeats: `(a+)+` links a to itself once per loop, and the backtracker
   * tries both links, so they are two paths (see splitParallel).
   */
  readonly follow: number[][] = [];
  /** Optional parts that can match empty text anyway (each doubles the ways to match nothing). */
  private optionalEmpties = 0;

  position(set: CharSet): Fragment {
    if (this.sets.length >= MAX_POSITIONS)
      throw new NotProven(
        `it is too large to analyse (more than ${MAX_POSITIONS} character positions once repeats are counted out)`,
      );
    this.sets.push(set);
    this.follow.push([]);
    const p = this.sets.length - 1;
    return { first: [p], last: [p], nullable: false };
  }

  link(from: readonly number[], to: readonly number[]): void {
    for (const p of from) for (const q of to) (this.follow[p] as number[]).push(q);
  }

  concat(a: Fragment, b: Fragment): Fragment {
    this.link(a.last, b.first);
    return {
      first: a.nullable ? [...a.first, ...b.first] : a.first,
      last: b.nullable ? [...a.last, ...b.last] : b.last,
      nullable: a.nullable && b.nullable,
    };
  }

  alternatives(alts: readonly AST.Alternative[]): Fragment {
    const out: Fragment = { first: [], last: [], nullable: false };
    if (alts.filter((alt) => alt.elements.every(canMatchEmpty)).length > 1) {
      throw new NotProven(
        'two of its alternatives can both match empty text, so there are several ways to match nothing',
      );
    }
    for (const alt of alts) {
      const f = this.sequence(alt.elements);
      out.first.push(...f.first);
      out.last.push(...f.last);
      out.nullable ||= f.nullable;
    }
    return out;
  }

  sequence(elements: readonly AST.Element[]): Fragment {
    let acc: Fragment = EMPTY;
    for (const el of elements) acc = this.concat(acc, this.element(el));
    return acc;
  }

  element(el: AST.Element): Fragment {
    switch (el.type) {
      case 'Character':
      case 'CharacterSet':
      case 'CharacterClass': {
        const set = charSetOf(el as AST.Character | AST.CharacterSet | AST.CharacterClass);
        if (set === null)
          throw new NotProven(`it uses ${el.raw}, which this analysis does not read`);
        return this.position(set);
      }
      case 'Group':
      case 'CapturingGroup':
        return this.alternatives(el.alternatives);
      case 'Assertion':
        if (el.kind === 'lookbehind') {
          // A lookbehind over a short, fixed set of texts costs a bounded amount wherever it is
          // tried (`(?<!x)`); one that can read back arbitrarily far is not read here.
          if (!boundedText(el.alternatives, 0))
            throw new NotProven(
              `it uses the lookbehind ${el.raw}, which can read back an unbounded distance`,
            );
          return EMPTY;
        }
        if (el.kind === 'lookahead') {
          // A side branch: entered from wherever the pattern stands, leading nowhere after.
          const body = this.alternatives(el.alternatives);
          return { first: body.first, last: [], nullable: true };
        }
        return EMPTY;
      case 'Backreference':
        throw new NotProven(`it uses the backreference ${el.raw}, whose cost no analysis bounds`);
      case 'Quantifier':
        return this.repeat(el);
      default:
        throw new NotProven(`it uses ${el.raw}, which this analysis does not read`);
    }
  }

  /** `e{min,max}` unrolled: min copies, then `e*` or max-min nested optional copies. */
  repeat(q: AST.Quantifier): Fragment {
    if (q.max === 0) return EMPTY;
    // Even `(?:b?)?` has two ways to match nothing, which a sequence of them multiplies; a few
    // optional ones (`^(?!www\.)?\w` in the corpus) multiply the work by at most 2^4.
    if (q.max <= 1 && canMatchEmpty(q.element) && ++this.optionalEmpties <= MAX_OPTIONAL_EMPTIES) {
      return { ...this.element(q.element), nullable: true };
    }
    if (canMatchEmpty(q.element)) {
      throw new NotProven(
        `the repeated or optional part ${q.element.raw} can itself match empty text, so there are several ways to match nothing`,
      );
    }
    // Every copy adds at least one position (the element is not nullable), so `position`
    // stops a huge count such as {1,100000} within MAX_POSITIONS copies.
    let acc: Fragment = EMPTY;
    if (q.max === Infinity) {
      // e{n,} = e{n-1} e+, and e+ is one copy that may go round again (no extra copy: two
      // copies would look like two ways through to the path counting below).
      for (let i = 1; i < q.min; i++) acc = this.concat(acc, this.element(q.element));
      const loop = this.element(q.element);
      this.link(loop.last, loop.first);
      return this.concat(acc, { ...loop, nullable: q.min === 0 });
    }
    for (let i = 0; i < q.min; i++) acc = this.concat(acc, this.element(q.element));
    // (e(e(e)?)?)?: each optional copy only reachable after the one before it.
    let tail: Fragment = EMPTY;
    for (let i = q.max - q.min; i > 0; i--) {
      const copy = this.element(q.element);
      const inner = this.concat(copy, tail);
      tail = { ...inner, nullable: true };
    }
    return this.concat(acc, tail);
  }
  /**
   * Makes every path a path of states: a second link from p to q (two loops closing on the same
   * character, as in `(a+)+`, or an alternative repeated, as in `(a|a)`) goes to a copy of q
   * instead, so that the two ways show up as two states reading the same text. Returns the
   * start links, treated the same way.
   */
  splitParallel(start: readonly number[]): number[] {
    const dedupe = (list: readonly number[]): number[] => {
      const seen = new Set<number>();
      const out: number[] = [];
      for (const q of list) {
        if (!seen.has(q)) {
          seen.add(q);
          out.push(q);
          continue;
        }
        const copy = this.position(this.sets[q] as CharSet).first[0] as number;
        this.follow[copy] = this.follow[q] as number[];
        out.push(copy);
      }
      return out;
    };
    const first = dedupe(start);
    for (let p = 0; p < this.follow.length; p++)
      this.follow[p] = dedupe(this.follow[p] as number[]);
    return first;
  }
}

/** Whether two paths that split can meet again in one state while reading the same text. */
function reconverges(
  automaton: Automaton,
  start: readonly number[],
  selfLoopStart: boolean,
): boolean {
  const n = automaton.sets.length + 1;
  const init = n - 1;
  const follow = (p: number): Iterable<number> =>
    p === init ? startFollow : (automaton.follow[p] as number[]);
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
        if (++steps > MAX_PRODUCT_STEPS)
          throw new NotProven('it is too complex to analyse within the step limit');
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

/** Proves a parsed flag-less pattern linear or quadratic for a backtracking matcher, or says why not. */
export function proveBacktrackingBounded(pattern: AST.Pattern): BacktrackingProof {
  try {
    const anchored = anchoredAtStart(pattern.alternatives);
    const automaton = new Automaton();
    const whole = automaton.alternatives(pattern.alternatives);
    const start = automaton.splitParallel(whole.first);
    // Unanchored, the matcher retries from every index: a loop on any character in front.
    const degree = reconverges(automaton, start, !anchored)
      ? ambiguityDegree(automaton, start, !anchored)
      : 0;
    if (degree > 1) {
      throw new NotProven(
        `the same text can be read along many different paths through it, so a backtracking matcher's work may grow with the ${degree + 1 === 3 ? 'cube' : `power ${degree + 1}`} of the input length`,
      );
    }
    return { proven: true, quadratic: degree === 1 };
  } catch (err) {
    if (err instanceof NotProven) return { proven: false, reason: err.message };
    throw err;
  }
}

/** Most chains of loops that may lead to one state (see ambiguityDegree). */
const MAX_AMBIGUITY = 64;

const EXPONENTIAL =
  'the same text can be read along many different paths through it, so a backtracking matcher may retry exponentially often';
const TOO_AMBIGUOUS =
  'the same text can be read along too many different paths through it for a backtracking matcher';

/** Iterative Tarjan: component number per node of `0..count-1`, numbered sinks first. */
function components(count: number, successors: (v: number) => readonly number[]): Int32Array {
  const comp = new Int32Array(count).fill(-1);
  const index = new Int32Array(count).fill(-1);
  const low = new Int32Array(count);
  const onStack = new Uint8Array(count);
  const stack: number[] = [];
  let next = 0;
  let compCount = 0;
  for (let root = 0; root < count; root++) {
    if (index[root] !== -1) continue;
    const work: [number, number][] = [[root, 0]];
    index[root] = low[root] = next++;
    stack.push(root);
    onStack[root] = 1;
    while (work.length > 0) {
      const frame = work[work.length - 1] as [number, number];
      const v = frame[0];
      const succ = successors(v);
      if (frame[1] < succ.length) {
        const w = succ[frame[1]++] as number;
        if (index[w] === -1) {
          index[w] = low[w] = next++;
          stack.push(w);
          onStack[w] = 1;
          work.push([w, 0]);
        } else if (onStack[w] === 1) low[v] = Math.min(low[v] as number, index[w] as number);
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = (work[work.length - 1] as [number, number])[0];
        low[parent] = Math.min(low[parent] as number, low[v] as number);
      }
      if (low[v] === index[v]) {
        let w: number;
        do {
          w = stack.pop() as number;
          onStack[w] = 0;
          comp[w] = compCount;
        } while (w !== v);
        compCount++;
      }
    }
  }
  return comp;
}

/**
 * When two paths can split and meet again, how fast the number of paths reading one text into
 * one state grows with the text's length [Weber & Seidl]: exponentially when there is an EDA
 * (two paths split and meet within one loop: `(a|a)+`), which is refused; otherwise as n^d,
 * where d is the longest chain of IDAs (states p != q in different loops with p->p, p->q, q->q
 * reading one text: `a*a*` is one). Returns d. Within that growth, a path is fixed by the chain
 * of loops (strongly connected components) it passes, the edges between them and where it
 * leaves each IDA loop, so the number of chains of loops (at most MAX_AMBIGUITY) bounds the
 * constant factor. Checked on the product automaton (pairs of states reading the same text); the
 * IDA test drops "the same text" across its two halves, which only overestimates d.
 */
function ambiguityDegree(
  automaton: Automaton,
  start: readonly number[],
  selfLoopStart: boolean,
): number {
  const n = automaton.sets.length + 1;
  const init = n - 1;
  const startFollow = [...start, ...(selfLoopStart ? [init] : [])];
  const follow = (p: number): readonly number[] =>
    p === init ? startFollow : (automaton.follow[p] as number[]);
  const followLists = Array.from({ length: n }, (_, p) => follow(p));
  const setOf = (p: number): CharSet => (p === init ? ANY_UNIT : (automaton.sets[p] as CharSet));
  let steps = 0;
  const spend = (k: number): void => {
    steps += k;
    if (steps > MAX_PRODUCT_STEPS)
      throw new NotProven('it is too complex to analyse within the step limit');
  };
  // The product automaton, reachable part, with dense local ids.
  const ids = new Map<number, number>();
  const pairs: number[] = [];
  const edges: number[][] = [];
  const idOf = (p: number, q: number): number => {
    const key = p * n + q;
    let id = ids.get(key);
    if (id === undefined) {
      id = pairs.length;
      ids.set(key, id);
      pairs.push(key);
      edges.push([]);
    }
    return id;
  };
  idOf(init, init);
  for (let i = 0; i < pairs.length; i++) {
    const p = Math.floor((pairs[i] as number) / n);
    const q = (pairs[i] as number) % n;
    const fp = followLists[p] as readonly number[];
    const fq = followLists[q] as readonly number[];
    spend(fp.length * fq.length + 1);
    for (const p2 of fp)
      for (const q2 of fq)
        if (intersects(setOf(p2), setOf(q2))) (edges[i] as number[]).push(idOf(p2, q2));
  }
  const pairComp = components(pairs.length, (v) => edges[v] as number[]);
  // EDA: one component holding a diagonal pair and an off-diagonal one.
  const diagonalIn = new Map<number, boolean>();
  const offIn = new Map<number, boolean>();
  pairs.forEach((key, i) => {
    const c = pairComp[i] as number;
    if (Math.floor(key / n) === key % n) diagonalIn.set(c, true);
    else offIn.set(c, true);
  });
  for (const c of diagonalIn.keys()) if (offIn.has(c)) throw new NotProven(EXPONENTIAL);
  // IDA: from (p,p) to some (p,q), and from there to (q,q), with p and q both on loops.
  const stateComp = components(n, (v) => followLists[v] as readonly number[]);
  const compSize = new Map<number, number>();
  for (let v = 0; v < n; v++)
    compSize.set(stateComp[v] as number, (compSize.get(stateComp[v] as number) ?? 0) + 1);
  const onLoop = (v: number): boolean =>
    (compSize.get(stateComp[v] as number) as number) > 1 ||
    (followLists[v] as readonly number[]).includes(v);
  const reach = (from: number): Set<number> => {
    const seen = new Set([from]);
    const queue = [from];
    while (queue.length > 0) {
      const v = queue.pop() as number;
      spend((edges[v] as number[]).length + 1);
      for (const w of edges[v] as number[]) {
        if (!seen.has(w)) {
          seen.add(w);
          queue.push(w);
        }
      }
    }
    return seen;
  };
  // IDAs as links between loops (state components): (p,p) reaches (p,q), which reaches (q,q).
  // Within one loop an IDA would be an EDA, already refused above.
  const idaLinks = new Map<number, Set<number>>();
  for (let p = 0; p < n; p++) {
    const diag = ids.get(p * n + p);
    if (diag === undefined || !onLoop(p)) continue;
    const from = stateComp[p] as number;
    const linked = idaLinks.get(from) ?? new Set<number>();
    idaLinks.set(from, linked);
    for (const id of reach(diag)) {
      const key = pairs[id] as number;
      const q = key % n;
      const to = stateComp[q] as number;
      if (Math.floor(key / n) !== p || to === from || linked.has(to) || !onLoop(q)) continue;
      const target = ids.get(q * n + q);
      if (target !== undefined && reach(id).has(target)) linked.add(to);
    }
  }
  // The longest chain of IDA links. Components are numbered sinks first, so a link always goes
  // to a lower number, whose chain is known when its source is reached in ascending order.
  const longest = new Map<number, number>();
  let degree = 0;
  for (const from of [...idaLinks.keys()].sort((x, y) => x - y)) {
    let here = 0;
    for (const to of idaLinks.get(from) as Set<number>)
      here = Math.max(here, 1 + (longest.get(to) ?? 0));
    longest.set(from, here);
    degree = Math.max(degree, here);
  }
  // Chains of components from the start, counted with one per edge between components.
  const order = Array.from({ length: n }, (_, v) => v).sort(
    (a, b) => (stateComp[b] as number) - (stateComp[a] as number),
  );
  const compChains = new Map<number, number>();
  compChains.set(stateComp[init] as number, 1);
  for (const v of order) {
    const c = stateComp[v] as number;
    const here = compChains.get(c) ?? 0;
    for (const w of followLists[v] as readonly number[]) {
      const d = stateComp[w] as number;
      if (d !== c) compChains.set(d, (compChains.get(d) ?? 0) + here);
    }
  }
  for (const [, count] of compChains) if (count > MAX_AMBIGUITY) throw new NotProven(TOO_AMBIGUOUS);
  return degree;
}

/** Longest text a lookbehind body may read and still count as a bounded check. */
const MAX_LOOKBEHIND_TEXT = 64;

/**
 * Whether the alternatives only read characters, classes and groups of them, repeated a bounded
 * number of times, for at most MAX_LOOKBEHIND_TEXT characters: no lookaround, backreference or
 * unbounded repeat inside. Such a body is a constant-cost check at each position.
 */
function boundedText(alts: readonly AST.Alternative[], depth: number): boolean {
  const longest = (el: AST.Element): number => {
    switch (el.type) {
      case 'Character':
      case 'CharacterSet':
      case 'CharacterClass':
        return 1;
      case 'Group':
      case 'CapturingGroup':
        return depth < 8 && boundedText(el.alternatives, depth + 1)
          ? el.alternatives.reduce(
              (m, a) =>
                Math.max(
                  m,
                  a.elements.reduce((n, e) => n + longest(e), 0),
                ),
              -Infinity,
            )
          : Infinity;
      case 'Quantifier':
        return el.max === Infinity ? Infinity : el.max * longest(el.element);
      default:
        return Infinity;
    }
  };
  return alts.every(
    (alt) => alt.elements.reduce((n, e) => n + longest(e), 0) <= MAX_LOOKBEHIND_TEXT,
  );
}
