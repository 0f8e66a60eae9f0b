import { availableParallelism, loadavg } from 'node:os';

/** Rulesets in the 2018 corpus: the unit of work of most corpus-wide tests. */
export const CORPUS_RULESETS = 24_264;

/**
 * A test timeout derived from the work the test does, not a fixed guess: `units` of work at a
 * generous `msPerUnit` each (several times what a quiet 2-core machine needs), plus a fixed
 * start-up allowance, scaled up by how oversubscribed the processors are when the file loads.
 * It is a bound against hangs, never a speed check: speed figures live in `npm run bench*`.
 */
export function workTimeout(units: number, msPerUnit: number, startupMs = 30_000): number {
  const oversubscribed = Math.max(1, loadavg()[0]! / availableParallelism());
  return Math.ceil((startupMs + units * msPerUnit) * oversubscribed);
}
