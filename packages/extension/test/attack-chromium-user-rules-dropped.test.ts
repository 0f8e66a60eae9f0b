import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide } from '../src/decision/decide.js';
import { POLL, startUiHarness, type UiHarness } from './support/ui-harness.js';
import { decisionState } from './support/decision-state.js';

/** The user's own rule for one host, then rules each needing a regex: more than Chromium's 1,000. */
const KEEP = {
  name: 'Keep',
  xml: '<ruleset name="Keep"><target host="keep.uncovered.test"/><rule from="^http:" to="https:"/></ruleset>',
};
const FILLERS = Array.from({ length: 1_050 }, (_, i) => ({
  name: `Mine ${i}`,
  xml: `<ruleset name="Mine ${i}"><target host="u${i}.mine.test"/><rule from="^http://u${i}\\.mine\\.test/([^/?]+)/old" to="https://u${i}.mine.test/new/$1"/></ruleset>`,
}));

/**
 * Attack: when the user's rules do not fit, the settings layer is written "without the user's
 * rules" but with the sites' entries. decide() puts a user rule (step 5) before "rulesets only"
 * (step 8), so a host the user both upgrades by their own rule and set to "rulesets only" is
 * upgraded; the fallback keeps the entry's `allow` above HTTPS-first and drops the rule, so the
 * browser leaves the page on HTTP: laxer than decide(), though the writer promises a refusal
 * never is.
 */
describe("attack: the settings fallback without the user's rules keeps the sites' allows", () => {
  let h: UiHarness;
  let page: Page;
  const dynamic = () =>
    h.ext.worker.evaluate(async () => chrome.declarativeNetRequest.getDynamicRules());
  const handle = (request: unknown) =>
    h.ext.worker.evaluate(async (r) => {
      const ui = (
        globalThis as unknown as {
          httpsifyUi: { controller: Promise<{ handle(r: unknown): Promise<unknown> }> };
        }
      ).httpsifyUi;
      return (await ui.controller).handle(r);
    }, request);

  beforeAll(async () => {
    h = await startUiHarness();
    page = await h.ext.context.newPage();
  }, 240_000);

  afterAll(async () => {
    await h?.close();
  });

  it("upgrades a 'rulesets only' host the user's own rule upgrades", async () => {
    const url = h.url('keep.uncovered.test', '/k');
    const https = `https://keep.uncovered.test:${h.server.port}/k`;
    const state = decisionState({
      httpAllowedBy: () => 'keep.uncovered.test',
      userRewrite: (u) => ({ rewritten: u.replace(/^http:/, 'https:'), ruleset: 'Keep' }),
    });
    expect(decide({ url, kind: 'navigation', tab: { tabId: 1 }, state })).toMatchObject({
      action: 'upgrade',
      url: https,
      reason: 'user-rule',
    });
    await handle({ type: 'siteAdd', list: 'httpAllowedSites', entry: 'keep.uncovered.test' });
    await h.ext.worker.evaluate(
      async (rules) => chrome.storage.local.set({ userRules: rules }),
      [KEEP],
    );
    await expect
      .poll(
        async () =>
          (await dynamic()).some((r) => (r.priority ?? 0) > 100_000 && (r.priority ?? 0) < 500_000),
        POLL,
      )
      .toBe(true);
    // While everything fits the browser agrees with decide().
    await page.goto(url);
    expect(page.url()).toBe(https);

    // Many more rules of the user's own: they no longer fit.
    await h.ext.worker.evaluate(
      async (rules) => chrome.storage.local.set({ userRules: rules }),
      [KEEP, ...FILLERS],
    );
    await expect
      .poll(
        async () =>
          (await dynamic()).some((r) => (r.priority ?? 0) > 100_000 && (r.priority ?? 0) < 500_000),
        POLL,
      )
      .toBe(false);
    await page.goto(h.url('keep.uncovered.test', '/k2'));
    expect(page.url()).toBe(`https://keep.uncovered.test:${h.server.port}/k2`);
  }, 180_000);
});
