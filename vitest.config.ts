import { configDefaults, defineConfig } from 'vitest/config';
import { browserTestExclusions } from './packages/extension/test/support/browser-requirements.js';
import { CORPUS_RULESETS, workTimeout } from './packages/engine/test/support/work-timeout.js';

// The longest common unit of work, one pass over the 2018 corpus, bounds a test or hook unless
// it says otherwise; scaled by the machine's load when the run starts (a bound against hangs,
// never a speed check).
const corpusPass = workTimeout(CORPUS_RULESETS, 10);

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    // Outside CI, browser tests whose browser is not installed are left out (one line says so).
    exclude: [...configDefaults.exclude, ...browserTestExclusions(import.meta.dirname)],
    testTimeout: corpusPass,
    hookTimeout: corpusPass,
    pool: 'forks',
    // Extensions the tests build carry the test suite's handles (platform/test-hooks.ts).
    env: { HTTPSIFY_TEST_HOOKS: '1' },
  },
});
