import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusRulesDir } from '../../engine/test/support/corpus.js';
import { POLL, shot, startUiHarness, type UiHarness } from './support/ui-harness.js';

/** The options page with the full 2018 corpus (about 24,000 rulesets) loaded in the engine. */
describe('"All rulesets" with the full corpus', () => {
  let h: UiHarness;
  let o: Page;
  let openMs = 0;

  beforeAll(async () => {
    h = await startUiHarness([corpusRulesDir()]);
    const started = Date.now();
    o = await h.openOptions();
    openMs = Date.now() - started;
  });

  afterAll(async () => {
    await h?.close();
  });

  it('opens and keeps the DOM small (virtualised list)', async () => {
    const total = Number(
      (await o.locator('#ruleset-count').textContent())?.split(' of ')[1]?.split(' ')[0],
    );
    expect(total).toBeGreaterThan(20_000);
    // How long it took is a figure, not a verdict: on a loaded machine any bound fails.
    console.log(`options page with ${total} rulesets opened in ${openMs} ms`);
    expect(await o.locator('#ruleset-list .vrow').count()).toBeLessThan(80);
    // Scroll to the end: the last rulesets render, the DOM stays the same size.
    await o.locator('#ruleset-list').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect
      .poll(
        () => o.locator('#ruleset-list .vrow:not([hidden])').last().getAttribute('data-index'),
        POLL,
      )
      .toBe(String(total - 1));
    expect(await o.locator('#ruleset-list .vrow').count()).toBeLessThan(80);
  });

  it('searches and filters 24k rulesets', async () => {
    const started = Date.now();
    await o.locator('#ruleset-search').fill('eff');
    await expect.poll(() => o.locator('#ruleset-count').textContent(), POLL).toMatch(/^\d+ of/);
    await o.locator('#ruleset-search').fill('tools.wmflabs.org');
    await expect
      .poll(
        async () =>
          o
            .locator('#ruleset-list .vrow:not([hidden]) input')
            .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).dataset.name)),
        POLL,
      )
      .toContain('Wikimedia');
    await o.locator('#ruleset-search').fill('');
    await o.locator('#ruleset-filter').selectOption('default-off');
    await expect
      .poll(
        async () => Number((await o.locator('#ruleset-count').textContent())?.split(' ')[0]),
        POLL,
      )
      .toBeGreaterThan(100);
    console.log(`search and filter over the corpus took ${Date.now() - started} ms`);
    await shot(o, 'options-24k-default-off');
  });
});
