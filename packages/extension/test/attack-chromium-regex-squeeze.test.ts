import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide } from '../src/decision/decide.js';
import { POLL, RULESETS, startUiHarness, type UiHarness } from './support/ui-harness.js';
import { decisionState } from './support/decision-state.js';

/** Default-off rulesets whose rules each need their own regex: more than Chromium's 1,000. */
const BIG = 10;
const PER = 110;
function bigRuleset(k: number): string {
  const hosts = Array.from({ length: PER }, (_, i) => `u${i}.b${k}.example.test`);
  const targets = hosts.map((h) => `<target host="${h}"/>`).join('');
  const rules = hosts
    .map((h, i) => {
      const re = h.replace(/\./g, '\\.');
      return `<rule from="^http://${re}/([^/?]+)/old${i}" to="https://${h}/new${i}/$1"/>`;
    })
    .join('');
  return `<ruleset name="Big ${k}" default_off="test">${targets}${rules}</ruleset>`;
}

/** decide() for a page of a host no ruleset covers, HTTPS-first on, nothing relaxed. */
const plainState = decisionState();

/**
 * Attack: the overrides layer compiles its switched-on rulesets into every regex rule the other
 * layers leave free at that moment, reserving none for the settings layer. With the global switch
 * off (or HTTPS-first off) the settings layer holds no regex, so switching rulesets on then takes
 * the local-name exemptions' share too. Turning the switch back on, none of the settings
 * layer's sets fits; the writer keeps "the rules still asked for" of the global-off layer, i.e.
 * none: HTTPS-first's upgrade is gone while decide() upgrades every uncovered page.
 */
describe('attack: switched-on rulesets squeeze the settings layer out of the regex budget', () => {
  let h: UiHarness;
  let options: Page;
  const dynamic = () =>
    h.ext.worker.evaluate(async () => chrome.declarativeNetRequest.getDynamicRules());
  const handle = (request: unknown) =>
    h.ext.worker.evaluate(async (r) => {
      const ui = (
        globalThis as unknown as {
          httpsifyUi: { controller: Promise<{ handle(r: unknown): Promise<unknown> }> };
        }
      ).httpsifyUi;
      await (await ui.controller).handle(r);
    }, request);

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-attack-rules-'));
    for (const [f, xml] of Object.entries(RULESETS)) writeFileSync(join(dir, f), xml);
    for (let k = 0; k < BIG; k++) writeFileSync(join(dir, `big${k}.xml`), bigRuleset(k));
    h = await startUiHarness([dir]);
    options = await h.openOptions();
  }, 240_000);

  afterAll(async () => {
    await h?.close();
  });

  it('still upgrades an uncovered page after the global switch goes off and on', async () => {
    const page = await h.ext.context.newPage();
    const url = h.url('works.uncovered.test', '/a');
    const expected = decide({
      url,
      kind: 'navigation',
      tab: { tabId: 1 },
      state: plainState,
    });
    expect(expected).toMatchObject({ action: 'upgrade', reason: 'https-first' });
    await page.goto(url);
    expect(page.url()).toBe(`https://works.uncovered.test:${h.server.port}/a`);

    const globalOff = async () =>
      (await dynamic()).some((r) => r.action.type === 'allow' && r.priority === 2_000_000);
    await options.locator('#opt-globalEnabled').uncheck();
    await expect.poll(globalOff, POLL).toBe(true);
    // The user switches the big rulesets on (as the rulesets list does, one by one).
    for (let k = 0; k < BIG; k++)
      await handle({ type: 'setRuleset', name: `Big ${k}`, active: true });
    await expect
      .poll(
        async () => (await dynamic()).filter((r) => r.condition.regexFilter !== undefined).length,
        POLL,
      )
      .toBeGreaterThan(850);
    await options.reload();
    await options.locator('#opt-globalEnabled').check();
    await expect.poll(globalOff, POLL).toBe(false);

    // decide() upgrades the uncovered page again; the browser must too.
    await page.goto(h.url('works.uncovered.test', '/b'));
    expect(page.url()).toBe(`https://works.uncovered.test:${h.server.port}/b`);
  }, 180_000);

  it('does not answer the switch with an import-file error the user never caused', async () => {
    // The big rulesets are still on (the test above): the switch off fits, back on does not.
    const globalOff = async () =>
      (await dynamic()).some((r) => r.action.type === 'allow' && r.priority === 2_000_000);
    await options.reload();
    await options.locator('#opt-globalEnabled').uncheck();
    await expect.poll(globalOff, POLL).toBe(true);
    await options.locator('#opt-globalEnabled').check();
    await expect.poll(globalOff, POLL).toBe(false);
    const error = options.locator('#error');
    // The writer's DnrBudgetError reads "Name: text", the shape of a bad value in an imported
    // settings file: the page says so, about a switch the user just clicked.
    // The page's answer to the click (the request's reply) comes within moments.
    await new Promise((r) => setTimeout(r, 2000));
    const said = (await error.isVisible()) ? await error.locator('span').first().textContent() : '';
    expect(said).not.toMatch(/in the file/);
  }, 120_000);

  it('upgrades again once the rulesets are switched back off and there is room', async () => {
    // Each switch is saved; while the settings layer is still refused its request says so.
    for (let k = 0; k < BIG; k++)
      await handle({ type: 'setRuleset', name: `Big ${k}`, active: false }).catch(() => undefined);
    await expect
      .poll(
        async () => (await dynamic()).filter((r) => r.condition.regexFilter !== undefined).length,
        POLL,
      )
      .toBeLessThan(100);
    // Room for everything again; decide() has upgraded uncovered pages all along.
    const page = await h.ext.context.newPage();
    await expect
      .poll(async () => {
        await page.goto(h.url('works.uncovered.test', '/c'));
        return page.url();
      }, POLL)
      .toBe(`https://works.uncovered.test:${h.server.port}/c`);
  }, 120_000);
});
