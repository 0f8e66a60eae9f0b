import { configDefaults, defineConfig } from 'vitest/config';
import { browserTestExclusions } from './packages/extension/test/support/browser-requirements.js';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    // Outside CI, browser tests whose browser is not installed are left out (one line says so).
    exclude: [...configDefaults.exclude, ...browserTestExclusions(import.meta.dirname)],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
