import { visitRegExpAST, type AST } from '@eslint-community/regexpp';
import { literalPrefix } from './literal-prefix.js';
import { parsePatternOrThrow } from './pattern-ast.js';

/**
 * Guard against catastrophic backtracking in untrusted ruleset regexes.
 *
 * Policy (documented in docs/regex-guard.md):
 * 1. Static screen: a regex is *suspicious* when an unbounded quantifier contains another
 *    unbounded quantifier (star height 2, e.g. `(a+)+`), or contains an alternation
 *    (e.g. `(a|ab)*`): the shapes that can backtrack super-linearly.
 * 2. Measurement: suspicious regexes (every regex, with `measureAll`) are run against
 *    adversarial inputs: the regex's own literal prefix (to get past `^http://…`) followed by a
 *    pumped string and a character that forces failure, at growing sizes. Growth stops as soon
 *    as one run exceeds the budget, so an exponential regex is caught at a small size instead
 *    of hanging the guard itself.
 * 3. A run counts as over budget when the best of three tries exceeds `budgetMs` (default
 *    50 ms) on an input of at most `maxInput` characters (default 4096, longer than almost every
 *    real URL; cookie patterns use 255, the longest domain). One slow try alone is not trusted:
 *    first-use compilation and a busy machine both produce spikes.
 * 4. A *suspicious* regex over budget is *refused*: the ruleset holding it is reported as an
 *    error and not loaded. A regex over budget that the screen did not flag is super-linear but
 *    polynomial (typically an unanchored `.*` scan): it is reported as a warning and kept.
 */
export interface GuardOptions {
  measureAll?: boolean;
  budgetMs?: number;
  maxInput?: number;
}

export interface GuardVerdict {
  suspicious: boolean;
  refused: boolean;
  /** Over budget but not flagged by the screen: reported, not refused. */
  slow: boolean;
  /** Slowest measured run, in milliseconds, and the input length it took. */
  worstMs: number;
  worstLength: number;
  reason?: string;
}

function isUnbounded(q: AST.Quantifier): boolean {
  return q.max === Infinity || q.max > 16;
}

/** Static screen; also returns characters worth pumping (the literals inside quantified parts). */
export function screenRegex(source: string): { suspicious: boolean; pumpChars: string[] } {
  let pattern: AST.Pattern;
  try {
    pattern = parsePatternOrThrow(source);
  } catch {
    return { suspicious: false, pumpChars: [] };
  }
  let suspicious = false;
  const pump = new Set<string>();
  visitRegExpAST(pattern, {
    onQuantifierEnter(q) {
      if (!isUnbounded(q)) return;
      visitRegExpAST(q.element, {
        onQuantifierEnter(inner) {
          if (inner !== q && isUnbounded(inner)) suspicious = true;
        },
        onAlternativeEnter(alt) {
          if ('alternatives' in alt.parent && alt.parent.alternatives.length > 1) suspicious = true;
        },
        onCharacterEnter(ch) {
          if (ch.value > 0x20 && ch.value < 0x7f) pump.add(String.fromCharCode(ch.value));
        },
      });
    },
  });
  return { suspicious, pumpChars: [...pump] };
}

function timeOnce(re: RegExp, input: string): number {
  const start = performance.now();
  re.test(input);
  return performance.now() - start;
}

/** Best of up to three runs, so a spike from compilation or a busy machine is not a verdict. */
function timeTest(re: RegExp, input: string, budget: number): number {
  let best = timeOnce(re, input);
  for (let i = 0; i < 2 && best > budget; i++) best = Math.min(best, timeOnce(re, input));
  return best;
}

export function guardRegex(source: string, options: GuardOptions = {}): GuardVerdict {
  const budget = options.budgetMs ?? 50;
  const maxInput = options.maxInput ?? 4096;
  const { suspicious, pumpChars } = screenRegex(source);
  const verdict: GuardVerdict = { suspicious, refused: false, slow: false, worstMs: 0, worstLength: 0 };
  if (!suspicious && options.measureAll !== true) return verdict;
  let re: RegExp;
  try {
    re = new RegExp(source);
  } catch {
    return verdict;
  }
  const prefix = literalPrefix(source)?.prefix ?? 'http://';
  const pumps = new Set(['a', 'a.', 'a-', 'a/', '0', ...pumpChars, pumpChars.join('')]);
  // A control character cannot occur in a real href but fails most classes; the others are
  // characters a URL can hold that still end a run of the pumped text.
  for (const terminator of ['\u0001', '!', '/', '?']) for (const pumpUnit of pumps) {
    if (pumpUnit === '') continue;
    // Small linear steps first: an exponential regex doubles its time every repetition or two,
    // so it trips the budget within a few steps of crossing it instead of jumping past it.
    for (let reps = 2; prefix.length + reps * pumpUnit.length <= maxInput; reps = reps < 40 ? reps + 2 : reps * 2) {
      const input = prefix + pumpUnit.repeat(reps) + terminator;
      const ms = timeTest(re, input, budget);
      if (ms > verdict.worstMs) {
        verdict.worstMs = ms;
        verdict.worstLength = input.length;
      }
      if (ms > budget) {
        verdict.refused = suspicious;
        verdict.slow = !suspicious;
        verdict.reason = `took ${ms.toFixed(1)} ms on a ${input.length}-character input (pumping ${JSON.stringify(pumpUnit)}); budget ${budget} ms`;
        return verdict;
      }
    }
  }
  return verdict;
}
