import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOP_RULES_MAX } from '../src/https-first/loop-guard.js';
import { POLL, RULESETS, startUiHarness, type UiHarness } from './support/ui-harness.js';

/** A default ruleset of a new domain and right-wildcard targets (one handoff regex each). */
const WILD =
  '<ruleset name="Wild Rules"><target host="wild.example.test"/><target host="www.wild.*"/><target host="www.wilder.*"/><rule from="^http:" to="https:"/></ruleset>';
const filler = (i: number) => ({
  name: `Mine ${i}`,
  xml: `<ruleset name="Mine ${i}"><target host="u${i}.mine.test"/><rule from="^http://u${i}\\.mine\\.test/([^/?]+)/old" to="https://u${i}.mine.test/new/$1"/></ruleset>`,
});

/**
 * Attack in real Chromium: the user's own rules hold all the regex rules but two. Switching
 * "Site Rules" off fits (its shadow and its handoff rule); switching "Wild Rules" off too does
 * not, nor does its page-loads fallback. The overrides layer keeps the still-asked subset:
 * Site Rules' `allow` shadow without the handoff rule (its domain list changed). decide()
 * upgrades site.example.test's page by HTTPS-first; the browser leaves it on HTTP.
 */
describe('attack: a refused overrides layer keeps a shadow without its handoff (Chromium)', () => {
  let h: UiHarness;
  let page: Page;
  const regexCount = () =>
    h.ext.worker.evaluate(async () => {
      const all = [
        ...(await chrome.declarativeNetRequest.getDynamicRules()),
        ...(await chrome.declarativeNetRequest.getSessionRules()),
      ];
      return all.filter((r) => r.condition.regexFilter !== undefined).length;
    });
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
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-attack-rules-'));
    for (const [f, xml] of Object.entries(RULESETS)) writeFileSync(join(dir, f), xml);
    writeFileSync(join(dir, 'wild.xml'), WILD);
    h = await startUiHarness([dir]);
    page = await h.ext.context.newPage();
  }, 240_000);

  afterAll(async () => {
    await h?.close();
  });

  it("sends Site Rules' page where decide() does after both switches", async () => {
    // Settle: the start's layers are written.
    await expect.poll(regexCount, POLL).toBeGreaterThan(10);
    await new Promise((r) => setTimeout(r, 1000));
    // Each rule one regex, and one more for the set (its credentials `allow`); the loop
    // verdicts' reserve is never the user's (background/chromium.ts).
    const room = 1_000 - LOOP_RULES_MAX;
    const n = room - (await regexCount()) - 3;
    await h.ext.worker.evaluate(
      async (rules) => chrome.storage.local.set({ userRules: rules }),
      Array.from({ length: n }, (_, i) => filler(i)),
    );
    await expect.poll(regexCount, POLL).toBe(room - 2);
    await handle({ type: 'setRuleset', name: 'Site Rules', active: false });
    await expect.poll(regexCount, POLL).toBe(room);
    // Refused (the switch itself is saved: decide() has both rulesets off).
    await handle({ type: 'setRuleset', name: 'Wild Rules', active: false }).catch(() => undefined);
    expect(await h.stored('rulesetOverrides')).toEqual({
      'Site Rules': false,
      'Wild Rules': false,
    });
    await new Promise((r) => setTimeout(r, 1000));
    // decide(): Site Rules off, no other ruleset, HTTPS-first on: upgrade (or the handoff
    // page, which asks decide()). Never HTTP.
    await page.goto(h.url('site.example.test', '/p')).catch(() => undefined);
    await page.waitForURL((u) => u.protocol !== 'chrome-extension:');
    expect(page.url()).toBe(`https://site.example.test:${h.server.port}/p`);
  }, 180_000);

  it('still says on the options page, after a worker restart, that the rulesets are cut', async () => {
    const o = await h.openOptions();
    const before = await o.locator('#limits').isVisible();
    await o.close();
    const cdp = await h.ext.context.newCDPSession(await h.ext.context.newPage());
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    await new Promise((r) => setTimeout(r, 1000));
    const again = await h.openOptions();
    await new Promise((r) => setTimeout(r, 2000));
    await again.reload();
    await again.waitForSelector('body[data-ready="true"]');
    expect({ before, after: await again.locator('#limits').isVisible() }).toEqual({
      before: true,
      after: true,
    });
  }, 120_000);
});
