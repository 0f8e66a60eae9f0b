import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLL, startUiHarness, type UiHarness } from './support/ui-harness.js';

const REGEX_RULESETS = 1_050;
const userRules = Array.from({ length: REGEX_RULESETS }, (_, i) => ({
  name: `Mine ${i}`,
  xml: `<ruleset name="Mine ${i}"><target host="u${i}.mine.test"/><rule from="^http://u${i}\\.mine\\.test/([^/?]+)/old" to="https://u${i}.mine.test/new/$1"/></ruleset>`,
}));

/**
 * Attack (c): the options page asks for the notice (#limits) when it renders settings, which
 * it does as soon as they are stored; the worker writes the rules after that. With the
 * settings changed from outside the open page (another options window, an import elsewhere),
 * the notice it shows is the one from before the change: it neither appears when the user's
 * rules stop fitting nor goes when they fit again, until a reload. (A3_CONTROL=1 reloads
 * after the refusal: the notice then shows, and still does not go once everything fits.)
 */
describe('attack: the "Not everything fits" notice on an open options page', () => {
  let h: UiHarness;
  let o: Page;
  const mineRules = async () =>
    (
      await h.ext.worker.evaluate(async () => chrome.declarativeNetRequest.getDynamicRules())
    ).filter((r) => r.condition.regexFilter?.includes('mine') === true).length;

  const refused = () =>
    h.ext.worker.evaluate(async () => {
      const g = globalThis as unknown as {
        httpsifyWriter: { idle(): Promise<void>; refusals(): { layer: string }[] };
      };
      await g.httpsifyWriter.idle();
      return g.httpsifyWriter.refusals().map((r) => r.layer);
    });

  beforeAll(async () => {
    h = await startUiHarness();
    o = await h.openOptions();
  });

  afterAll(async () => {
    await h?.close();
  });

  it('follows the rules as they are written, without a reload', async () => {
    const limits = o.locator('#limits');
    expect(await limits.isHidden()).toBe(true);
    // Too many of the user's own rules (stored by the options page's import, another window…).
    await h.ext.worker.evaluate(
      async (rules) => chrome.storage.local.set({ userRules: rules }),
      userRules,
    );
    // The worker has written the settings without them (its refusal is what the notice shows).
    await expect.poll(refused, POLL).toContain('settings');
    if (process.env.A3_CONTROL) await o.reload();
    await expect.poll(() => limits.isVisible(), POLL).toBe(true);
    // Fewer: everything fits again; the notice must go on the open page.
    await h.ext.worker.evaluate(
      async (rules) => chrome.storage.local.set({ userRules: rules }),
      userRules.slice(0, 10),
    );
    await expect.poll(mineRules, POLL).toBeGreaterThan(0);
    await expect.poll(() => limits.isHidden(), POLL).toBe(true);
  }, 120_000);
});
