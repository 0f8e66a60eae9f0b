import type { Journal } from './journal.js';
import type { SweepJob, SweepResult } from './verdicts.js';

/**
 * Runs jobs from a stream at most `concurrency` at a time, pulling the next only when a slot is
 * free (so memory holds the jobs in flight, never the list), skipping keys the journal has, and
 * journaling each result as it comes. Returns how many ran in this call.
 */
export async function runPool(
  jobs: AsyncIterable<SweepJob>,
  journal: Journal,
  concurrency: number,
  check: (job: SweepJob) => Promise<SweepResult>,
  onResult: (result: SweepResult) => void = () => undefined,
): Promise<number> {
  const iterator = jobs[Symbol.asyncIterator]();
  const inFlight = new Set<string>();
  let ran = 0;
  let exhausted = false;
  const nextJob = async (): Promise<SweepJob | null> => {
    while (!exhausted) {
      const next = await iterator.next();
      if (next.done === true) {
        exhausted = true;
        return null;
      }
      if (!journal.done.has(next.value.key) && !inFlight.has(next.value.key)) return next.value;
    }
    return null;
  };
  // One iterator shared by the lanes: a pending `next()` is awaited before the next call.
  let pulling: Promise<unknown> = Promise.resolve();
  const pull = (): Promise<SweepJob | null> => {
    const p = pulling.then(nextJob);
    pulling = p.catch(() => undefined);
    return p;
  };
  const lane = async (): Promise<void> => {
    for (;;) {
      const job = await pull();
      if (job === null) return;
      inFlight.add(job.key);
      const result = await check(job);
      inFlight.delete(job.key);
      if (journal.append(result)) {
        ran++;
        onResult(result);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return ran;
}
