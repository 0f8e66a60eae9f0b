import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe.js';
import { POLL, shot, startUiHarness, type UiHarness } from './support/ui-harness.js';

/** User rulesets each needing a regex rule in Chromium: more together than its 1,000 allow. */
const REGEX_RULESETS = 1_050;
const userRules = Array.from({ length: REGEX_RULESETS }, (_, i) => ({
  name: `Mine ${i}`,
  xml: `<ruleset name="Mine ${i}"><target host="u${i}.mine.test"/><rule from="^http://u${i}\\.mine\\.test/([^/?]+)/old" to="https://u${i}.mine.test/new/$1"/></ruleset>`,
}));

/**
 * Chromium holds at most 1,000 regex rules per extension. The user's rules asking for more are
 * left out, but the switches and the mode still hold as decide() says, and the options page says
 * in plain words what does not apply.
 */
describe("Chromium's rule limits on the options page", () => {
  let h: UiHarness;
  let o: Page;
  const dynamic = () =>
    h.ext.worker.evaluate(async () => chrome.declarativeNetRequest.getDynamicRules());

  beforeAll(async () => {
    h = await startUiHarness();
    o = await h.openOptions();
  });

  afterAll(async () => {
    await h?.close();
  });

  it('turns the global switch back on, leaves the user rules out, and says so', async () => {
    const globalOff = async () =>
      (await dynamic()).some((r) => r.action.type === 'allow' && r.priority === 2_000_000);
    await o.locator('#opt-globalEnabled').uncheck();
    await expect.poll(globalOff, POLL).toBe(true);
    expect(await o.locator('#limits').isHidden()).toBe(true);
    await h.ext.worker.evaluate(
      async (rules) => chrome.storage.local.set({ userRules: rules }),
      userRules,
    );
    await expect
      .poll(async () => ((await h.stored('userRules')) as unknown[]).length, POLL)
      .toBe(REGEX_RULESETS);
    // Back on: the user's rules do not fit; the switch must not stay off in the browser.
    await o.reload();
    await o.locator('#opt-globalEnabled').check();
    await expect.poll(globalOff, POLL).toBe(false);
    const rules = await dynamic();
    expect(rules.some((r) => r.action.type === 'upgradeScheme' && r.priority === 1)).toBe(true);
    expect(rules.some((r) => r.condition.regexFilter?.includes('mine') === true)).toBe(false);
    const limits = o.locator('#limits');
    await expect.poll(() => limits.isVisible(), POLL).toBe(true);
    expect(await limits.locator('li > span').allTextContents()).toEqual([
      'Your own rules apply to the pages you open, but not all of them to the images and scripts those pages load: they do not all fit in this browser.',
    ]);
    expect(await limits.locator('details').textContent()).toMatch(/regex rules/);
    for (const scheme of ['light', 'dark'] as const) {
      await o.emulateMedia({ colorScheme: scheme });
      await shot(o, `options-rule-limits-chromium-${scheme}`, {
        part: '#limits',
        texts: ['Not everything fits in your browser'],
      });
    }
    expect(await axeViolations(o)).toEqual([]);
    // Fewer rules: everything fits again and the notice goes.
    await h.ext.worker.evaluate(
      async (rules) => chrome.storage.local.set({ userRules: rules }),
      userRules.slice(0, 10),
    );
    await expect
      .poll(
        async () =>
          (await dynamic()).filter((r) => r.condition.regexFilter?.includes('mine')).length,
        POLL,
      )
      .toBeGreaterThan(0);
    await o.reload();
    await expect.poll(() => o.locator('#limits').isHidden(), POLL).toBe(true);
  }, 120_000);
});
