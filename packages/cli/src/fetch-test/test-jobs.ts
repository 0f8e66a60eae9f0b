import { createEngine, type Engine, type Ruleset } from '@httpsify/engine';
import { rulesetCoverage } from '@httpsify/engine/authoring';

/** One test URL to fetch, with what its own ruleset rewrites it to. */
export interface TestJob {
  ruleset: Ruleset;
  url: string;
  implicit: boolean;
  line: number | null;
  column: number | null;
  /** null: no rule of this ruleset rewrites the URL (nothing to fetch); see `problem`. */
  rewritten: string | null;
  problem?: string;
}

export interface CollectedJobs {
  jobs: TestJob[];
  /** Test URLs left out because an exclusion of their ruleset matches them. */
  excluded: number;
}

/**
 * The URLs the live test fetches, from the same collection `httpsify test` uses (explicit tests
 * plus `http://TARGET/` for non-wildcard targets, duplicates removed), minus the ones an
 * exclusion owns. Each is rewritten by its own ruleset alone, as the old checker did, so another
 * ruleset that happens to be tried first cannot mask a broken rule.
 */
export function collectTestJobs(rulesets: readonly Ruleset[], all: Engine): CollectedJobs {
  const jobs: TestJob[] = [];
  let excluded = 0;
  for (const ruleset of rulesets) {
    const own = createEngine([ruleset]);
    // A ruleset under test runs even if it is off by default or platform-bound.
    own.setActive(ruleset.name, true);
    for (const test of rulesetCoverage(ruleset, all).tests) {
      if (test.owner?.kind === 'exclusion') {
        excluded++;
        continue;
      }
      const outcome = own.rewriteWithRuleset(test.url);
      const job: TestJob = {
        ruleset,
        url: test.url,
        implicit: test.implicit,
        line: test.loc?.line ?? null,
        column: test.loc?.column ?? null,
        rewritten: outcome.rewritten,
      };
      if (outcome.rewritten === null)
        job.problem = outcome.error ?? 'no rule of this ruleset rewrites this URL';
      jobs.push(job);
    }
  }
  return { jobs, excluded };
}
