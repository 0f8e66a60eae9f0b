import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  browserTestExclusions,
  browserTestFiles,
  requireBrowser,
} from './support/browser-requirements.js';

const repoRoot = resolve(import.meta.dirname, '../../..');

describe('browser tests without the browsers', () => {
  it('finds the test files that start each browser, through the support modules', () => {
    const chromium = browserTestFiles('chromium', repoRoot);
    const firefox = browserTestFiles('firefox', repoRoot);
    // Directly (e2e-chromium imports browser.ts) and through ui-harness.ts / firefox-ui.ts.
    expect(chromium).toContain('packages/extension/test/e2e-chromium.test.ts');
    expect(chromium).toContain('packages/extension/test/ui-chromium-popup.test.ts');
    expect(firefox).toContain('packages/extension/test/e2e-firefox.test.ts');
    expect(firefox).toContain('packages/extension/test/e2e-firefox-ui.test.ts');
    expect(chromium.filter((f) => firefox.includes(f))).toEqual([]);
    // Tests that need no browser stay in.
    for (const f of [...chromium, ...firefox])
      expect(f).not.toMatch(/settings-controller|browser-requirements|cookies/);
  });

  it('outside CI leaves out the files of a missing browser and says in one line what to install', () => {
    const said: string[] = [];
    const excluded = browserTestExclusions(
      repoRoot,
      {},
      (b) => b === 'chromium',
      (line) => said.push(line),
    );
    expect(excluded).toEqual(browserTestFiles('firefox', repoRoot));
    expect(said).toEqual([
      `Skipping ${excluded.length} firefox test files: Firefox ESR is not installed (/usr/bin/firefox-esr); install the test browsers with: apt-get install chromium firefox-esr (with CI set they run and fail)\n`,
    ]);
  });

  it('in CI leaves nothing out, and the launch fails at once with that line', () => {
    expect(
      browserTestExclusions(
        repoRoot,
        { CI: 'true' },
        () => false,
        () => {},
      ),
    ).toEqual([]);
    expect(() => requireBrowser('chromium', '/nonexistent/chromium')).toThrow(
      /^Chromium is not installed \(\/nonexistent\/chromium\); install the test browsers with: apt-get install chromium firefox-esr$/,
    );
  });
});
