import { createEngine, type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide } from '../src/decision/decide.js';
import { POLL, startUiHarness, type UiHarness } from './support/ui-harness.js';
import { decisionState } from './support/decision-state.js';

/** A valid rule whose regex is too large for Chromium's RE2 (its program is over the limit). */
const HEAVY_FROM = '^http://heavy\\.uncovered\\.test(:\\d+)?/(?:[a-z0-9]{1,40}/){1,40}old';
const HEAVY_XML = `<ruleset name="Heavy"><target host="heavy.uncovered.test"/><rule from="${HEAVY_FROM}" to="https://heavy.uncovered.test$1/new"/></ruleset>`;

/**
 * Attack: a user rule whose regex Chromium cannot hold is left out of the settings layer by the
 * DNR compiler (`uiDnrRules` counts it in `omitted`, and nothing reads that count). decide()
 * applies the rule; the browser does not, and the options page says nothing: HTTPS-first off,
 * the page stays on HTTP with no word of it.
 */
describe('attack: a user rule too heavy for Chromium is dropped without a word', () => {
  let h: UiHarness;
  let page: Page;

  beforeAll(async () => {
    h = await startUiHarness(null, { modeOff: true });
    page = await h.ext.context.newPage();
  }, 240_000);

  afterAll(async () => {
    await h?.close();
  });

  it('upgrades what decide() upgrades, or says on the options page that it cannot', async () => {
    const supported = await h.ext.worker.evaluate(
      async (regex) => (await chrome.declarativeNetRequest.isRegexSupported({ regex })).isSupported,
      HEAVY_FROM.replace('\\d', '[0-9]'),
    );
    expect(supported).toBe(false);
    const url = h.url('heavy.uncovered.test', '/a/b/old');
    const user = createEngine([parseRulesetXml(HEAVY_XML, 'heavy.xml').ruleset as Ruleset]);
    const state = decisionState({
      httpsFirst: false,
      userRewrite: (u) => {
        const rewritten = user.rewrite(u);
        return rewritten === null ? null : { rewritten, ruleset: 'Heavy' };
      },
    });
    const expected = decide({ url, kind: 'navigation', tab: { tabId: 1 }, state });
    const target = `https://heavy.uncovered.test:${h.server.port}/new`;
    expect(expected).toEqual({
      action: 'upgrade',
      url: `https://heavy.uncovered.test:${h.server.port}/new`,
      reason: 'user-rule',
      ruleset: 'Heavy',
    });

    const options = await h.openOptions();
    // As the rule form saves it.
    const saved = await h.ext.worker.evaluate(async (xml) => {
      const ui = (
        globalThis as unknown as {
          httpsifyUi: { controller: Promise<{ handle(r: unknown): Promise<unknown> }> };
        }
      ).httpsifyUi;
      return (await ui.controller).handle({ type: 'userRuleSave', xml });
    }, HEAVY_XML);
    expect(saved).not.toHaveProperty('error');
    await expect
      .poll(async () => ((await h.stored('userRules')) as unknown[] | undefined)?.length, POLL)
      .toBe(1);
    // The extension's own decision state applies the rule (decide() step 5 reads this).
    const inWorker = await h.ext.worker.evaluate(async (u) => {
      const ui = (
        globalThis as unknown as {
          httpsifyUi: {
            controller: Promise<{
              snapshot: { userRules: { rewriteWithRuleset(u: string): unknown } | null };
            }>;
          };
        }
      ).httpsifyUi;
      return (await ui.controller).snapshot.userRules?.rewriteWithRuleset(u);
    }, url);
    expect(inWorker).toMatchObject({ rewritten: target });
    await options.reload();
    await options.waitForSelector('body[data-ready="true"]');
    const told = await options.locator('#limits').isVisible();
    await page.goto(url);
    const followed = page.url() === target;
    // Either the browser does what decide() says, or the user is told it does not.
    expect({ followed, told }).not.toEqual({ followed: false, told: false });
  }, 180_000);
});
