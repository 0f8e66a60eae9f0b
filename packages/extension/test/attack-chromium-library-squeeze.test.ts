import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusTarball } from '../../engine/test/support/corpus.js';
import { decide } from '../src/decision/decide.js';
import { POLL, RULESETS, startUiHarness, type UiHarness } from './support/ui-harness.js';
import { decisionState } from './support/decision-state.js';

/** One default-off ruleset of 110 rules, each needing its own regex rule in Chromium. */
function bigRuleset(): string {
  const hosts = Array.from({ length: 110 }, (_, i) => `u${i}.big.example.test`);
  const rules = hosts
    .map((h, i) => {
      const re = h.replace(/\./g, '\\.');
      return `<rule from="^http://${re}/([^/?]+)/old${i}" to="https://${h}/new${i}/$1"/>`;
    })
    .join('');
  return `<ruleset name="Big" default_off="test">${hosts.map((h) => `<target host="${h}"/>`).join('')}${rules}</ruleset>`;
}

const LONG = { timeout: 240_000, interval: 500 };

/**
 * The regex squeeze with the real 2018 HTTPS Everywhere library imported on the options page:
 * the library takes all but the share it leaves for the settings; with the global switch off,
 * switching on one default-off ruleset of 110 regex rules lets the overrides take that share
 * too. Back on, the settings layer fits in no form and is left empty: no HTTPS-first upgrade,
 * while decide() upgrades every page no ruleset covers.
 */
describe('attack: the 2018 library and one ruleset switched on squeeze out HTTPS-first', () => {
  let h: UiHarness;
  let options: Page;
  const dynamic = () =>
    h.ext.worker.evaluate(async () => chrome.declarativeNetRequest.getDynamicRules());
  const regexCount = async () =>
    (await dynamic()).filter((r) => r.condition.regexFilter !== undefined).length;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-attack-rules-'));
    for (const [f, xml] of Object.entries(RULESETS)) writeFileSync(join(dir, f), xml);
    writeFileSync(join(dir, 'big.xml'), bigRuleset());
    h = await startUiHarness([dir]);
    options = await h.openOptions();
  }, 240_000);

  afterAll(async () => {
    await h?.close();
  });

  it('upgrades an uncovered page after the switch goes off and on', async () => {
    await options.locator('#library-archive').setInputFiles(corpusTarball);
    await options.locator('#library-preview').waitFor({ state: 'visible', timeout: 240_000 });
    await options.locator('#library-apply').click();
    await expect
      .poll(() => options.locator('#library-status').textContent(), LONG)
      .toMatch(/^Imported /);
    await expect.poll(regexCount, LONG).toBeGreaterThan(800);

    const globalOff = async () =>
      (await dynamic()).some((r) => r.action.type === 'allow' && r.priority === 2_000_000);
    await options.locator('#opt-globalEnabled').uncheck();
    await expect.poll(globalOff, POLL).toBe(true);
    // The user switches one ruleset on (as the rulesets list does).
    await h.ext.worker.evaluate(async () => {
      const ui = (
        globalThis as unknown as {
          httpsifyUi: { controller: Promise<{ handle(r: unknown): Promise<unknown> }> };
        }
      ).httpsifyUi;
      await (await ui.controller).handle({ type: 'setRuleset', name: 'Big', active: true });
    });
    await expect.poll(async () => (await dynamic()).some((r) => r.id < 2_000_000), POLL).toBe(true);
    await options.reload();
    await options.locator('#opt-globalEnabled').check();
    await expect.poll(globalOff, POLL).toBe(false);

    const url = h.url('works.uncovered.test', '/b');
    const state = decisionState();
    expect(decide({ url, kind: 'navigation', tab: { tabId: 1 }, state })).toMatchObject({
      action: 'upgrade',
      reason: 'https-first',
    });
    const page = await h.ext.context.newPage();
    await page.goto(url);
    expect(page.url()).toBe(`https://works.uncovered.test:${h.server.port}/b`);
  }, 600_000);
});
