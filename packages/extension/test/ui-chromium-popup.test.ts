import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLL, shot, startUiHarness, type UiHarness } from './support/ui-harness.js';

describe('popup in Chromium: rulesets, toggles, site switch, rules, global switch, icon', () => {
  let h: UiHarness;
  let page: Page;
  let server: UiHarness['server'];
  let url: UiHarness['url'];
  let stored: UiHarness['stored'];
  let tabIdOf: UiHarness['tabIdOf'];
  let openPopup: UiHarness['openPopup'];
  // Playwright types the page function's argument as its serialised form, which a generic A cannot be
  // proven equal to; the callers pass numbers and null, which serialise to themselves.
  const worker = <T, A>(fn: (arg: A) => Promise<T> | T, arg: A): Promise<T> => h.ext.worker.evaluate(fn as (arg: unknown) => Promise<T> | T, arg as unknown);

  beforeAll(async () => {
    h = await startUiHarness();
    ({ server, url, stored, tabIdOf, openPopup } = h);
    page = await h.ext.context.newPage();
  });

  afterAll(async () => {
    await h?.close();
  });

  it('popup lists the page rulesets (main frame first, default-off apart) with counts, icon and badge', async () => {
    await page.goto(url('exp.example.test'));
    expect(page.url()).toBe(url('exp.example.test'));
    const popup = await openPopup(page);
    const names = (sel: string) => popup.locator(`${sel} input`).evaluateAll((els) => els.map((e) => (e as HTMLInputElement).dataset.name));
    // Main frame first, then alphabetical; grouped by default state.
    await expect.poll(() => names('#stable-rules'), POLL).toEqual(['CDN Rules', 'Site Rules']);
    expect(await names('#experimental-rules')).toEqual(['Experimental Rules']);
    expect(await popup.locator('#experimental-rules label').getAttribute('title')).toBe('breaks video');
    expect(await popup.locator('#experimental-rules input').isChecked()).toBe(false);
    expect(await popup.locator('#site-host').textContent()).toBe(`exp.example.test:${server.port}`);
    await expect.poll(() => popup.locator('#upgraded-count').textContent(), POLL).toBe('Requests upgraded on this page: 2');
    const tabId = await tabIdOf(page);
    await expect.poll(() => worker(async (t) => chrome.action.getBadgeText({ tabId: t }), tabId), POLL).toBe('2');
    // The badge can be switched off (a change from any window applies).
    await worker(async () => chrome.storage.local.set({ showBadge: false }), null);
    await expect.poll(() => worker(async (t) => chrome.action.getBadgeText({ tabId: t }), tabId), POLL).toBe('');
    await worker(async () => chrome.storage.local.set({ showBadge: true }), null);
    await expect.poll(() => worker(async (t) => chrome.action.getBadgeText({ tabId: t }), tabId), POLL).toBe('2');
    expect(await worker(async (t) => chrome.action.getTitle({ tabId: t }), tabId)).toBe('httpsify');
    await shot(popup, 'popup-light');
    await popup.emulateMedia({ colorScheme: 'dark' });
    await shot(popup, 'popup-dark');
    await popup.close();
  });

  it('popup toggles store only overrides and change what is upgraded; reset asks first', async () => {
    await page.goto(url('exp.example.test'));
    const popup = await openPopup(page);
    let reloaded = page.waitForEvent('load');
    await popup.locator('input[data-name="CDN Rules"]').uncheck();
    await expect.poll(() => stored('rulesetOverrides'), POLL).toEqual({ 'CDN Rules': false });
    await reloaded;
    const before = server.log.length;
    await page.goto(url('exp.example.test', '/again'));
    await expect.poll(() => server.log.slice(before).find((r) => r.host === 'cdn.example.test')?.secure, POLL).toBe(false);
    await popup.reload();
    await popup.waitForSelector('body[data-ready="true"]');
    reloaded = page.waitForEvent('load');
    await popup.locator('input[data-name="Experimental Rules"]').check();
    await expect.poll(() => stored('rulesetOverrides'), POLL).toEqual({ 'CDN Rules': false, 'Experimental Rules': true });
    await reloaded;
    expect(page.url()).toBe(`https://exp.example.test:${server.port}/again`);
    // Keyboard: the reset button opens a confirmation; Escape cancels it.
    await popup.locator('#reset-defaults').focus();
    await popup.keyboard.press('Enter');
    await expect.poll(() => popup.locator('#confirm-reset').evaluate((d) => (d as HTMLDialogElement).open), POLL).toBe(true);
    await popup.keyboard.press('Escape');
    expect(await stored('rulesetOverrides')).toEqual({ 'CDN Rules': false, 'Experimental Rules': true });
    await popup.locator('#reset-defaults').click();
    // The reset reloads the tab: wait for it, or the next test's navigation races that reload.
    reloaded = page.waitForEvent('load');
    await popup.locator('#confirm-reset-ok').click();
    await expect.poll(() => stored('rulesetOverrides'), POLL).toEqual({});
    await reloaded;
    await popup.close();
  });

  it('popup disables and re-enables the site (host with port) and shows it on the icon', async () => {
    await page.goto(url('site.example.test'));
    let popup = await openPopup(page);
    const reloaded = page.waitForEvent('load');
    await popup.locator('#disable-site').click();
    await expect.poll(() => stored('disabledSites'), POLL).toEqual([`site.example.test:${server.port}`]);
    await reloaded;
    await page.goto(url('site.example.test', '/off'));
    expect(page.url()).toBe(url('site.example.test', '/off'));
    const tabId = await tabIdOf(page);
    await expect.poll(() => worker(async (t) => chrome.action.getTitle({ tabId: t }), tabId), POLL).toBe('httpsify (disabled on this site)');
    await popup.reload();
    await popup.waitForSelector('body[data-ready="true"]');
    expect(await popup.locator('#rules').isHidden()).toBe(true);
    await shot(popup, 'popup-site-disabled');
    const reloadedAgain = page.waitForEvent('load');
    await popup.locator('#enable-site').click();
    await expect.poll(() => stored('disabledSites'), POLL).toEqual([]);
    await reloadedAgain;
    await page.goto(url('site.example.test', '/on'));
    expect(page.url()).toBe(`https://site.example.test:${server.port}/on`);
    await popup.close();
    // A wildcard entry covers every subdomain.
    popup = await h.openOptions();
    await popup.locator('[data-list="disabledSites"] .site-input').fill('*.Example.test');
    await popup.locator('[data-list="disabledSites"] button[type="submit"]').click();
    await expect.poll(() => stored('disabledSites'), POLL).toEqual(['*.example.test']);
    // The list shows the entry once the background has applied it.
    await expect.poll(() => popup.locator('[data-list="disabledSites"] .site-list li span').allTextContents(), POLL).toEqual(['*.example.test']);
    await page.goto(url('site.example.test', '/wild'));
    expect(page.url()).toBe(url('site.example.test', '/wild'));
    await popup.locator('[data-list="disabledSites"] .site-input').fill('not a host');
    await popup.locator('[data-list="disabledSites"] button[type="submit"]').click();
    await expect.poll(() => popup.locator('[data-list="disabledSites"] .site-error').isVisible(), POLL).toBe(true);
    await popup.getByRole('button', { name: 'Remove *.example.test' }).click();
    await expect.poll(() => stored('disabledSites'), POLL).toEqual([]);
    await popup.close();
  });

  it('popup shows a site HTTPS-first leaves on HTTP and tries HTTPS there again', async () => {
    const entry = `allowed.uncovered.test:${server.port}`;
    await worker(async (e) => chrome.storage.local.set({ httpsFirst: true, httpAllowedSites: [e] }), entry);
    await expect.poll(async () => {
      await page.goto(url('allowed.uncovered.test'));
      return page.url();
    }, POLL).toBe(url('allowed.uncovered.test'));
    const popup = await openPopup(page);
    await expect.poll(() => popup.locator('#site-http-allowed-note').textContent(), POLL).toBe(`HTTPS-first leaves this site on HTTP (entry ${entry}).`);
    const reloaded = page.waitForEvent('load');
    await popup.locator('#disallow-http').click();
    await expect.poll(() => stored('httpAllowedSites'), POLL).toEqual([]);
    await reloaded;
    await expect.poll(() => page.url(), POLL).toBe(`https://allowed.uncovered.test:${server.port}/`);
    await popup.close();
    // Without HTTPS-first the entry changes nothing, so the popup does not mention it.
    await worker(async (e) => chrome.storage.local.set({ httpsFirst: false, httpAllowedSites: [e] }), entry);
    const again = await openPopup(page);
    await expect.poll(() => again.locator('#site-host').textContent(), POLL).toBe(entry);
    expect(await again.locator('#site-http-allowed-note').isHidden()).toBe(true);
    expect(await again.locator('#disallow-http').isHidden()).toBe(true);
    await again.close();
    await worker(async () => chrome.storage.local.set({ httpAllowedSites: [] }), null);
  });

  it('popup adds a rule for the site after the engine validated it', async () => {
    await page.goto(url('new.uncovered.test'));
    expect(page.url()).toBe(url('new.uncovered.test'));
    const popup = await openPopup(page);
    await popup.locator('#add-rule summary').click();
    expect(await popup.locator('#rule-host').inputValue()).toBe('new.uncovered.test');
    expect(await popup.locator('#rule-from').inputValue()).toBe(`^http://new\\.uncovered\\.test:${server.port}/`);
    await popup.locator('#rule-from').fill('^http://(new');
    await popup.locator('#add-rule-form button[type="submit"]').click();
    await expect.poll(() => popup.locator('#add-rule-errors li').count(), POLL).toBeGreaterThan(0);
    expect((await stored('userRules')) ?? []).toEqual([]);
    // Lint errors (`httpsify check` messages) block saving too.
    await popup.locator('#rule-from').fill('^http://new\\.uncovered\\.test');
    await popup.locator('#add-rule-form button[type="submit"]').click();
    await expect.poll(() => popup.locator('#add-rule-errors').textContent(), POLL).toContain('must end its host part with "/"');
    await popup.locator('#rule-from').fill(`^http://new\\.uncovered\\.test:${server.port}/`);
    await popup.locator('#rule-to').fill(`https://new.uncovered.test:${server.port}/`);
    const reloaded = page.waitForEvent('load');
    await popup.locator('#add-rule-form button[type="submit"]').click();
    await expect.poll(async () => (((await stored('userRules')) ?? []) as { name: string }[]).map((r) => r.name), POLL).toEqual(['User rule: new.uncovered.test']);
    await reloaded;
    await page.goto(url('new.uncovered.test', '/x'));
    expect(page.url()).toBe(`https://new.uncovered.test:${server.port}/x`);
    await popup.close();
  });

  it('global switch off leaves every page alone and greys the icon', async () => {
    const popup = await openPopup(page);
    const reloaded = page.waitForEvent('load');
    await popup.locator('#global-enabled').uncheck();
    await expect.poll(() => stored('globalEnabled'), POLL).toBe(false);
    await reloaded;
    await page.goto(url('site.example.test', '/global-off'));
    expect(page.url()).toBe(url('site.example.test', '/global-off'));
    expect(await worker(async (t) => chrome.action.getTitle({ tabId: t }), await tabIdOf(page))).toBe('httpsify (off)');
    await popup.reload();
    await popup.waitForSelector('body[data-ready="true"]');
    expect(await popup.locator('#off-note').isVisible()).toBe(true);
    await shot(popup, 'popup-off');
    await popup.locator('#global-enabled').check();
    await expect.poll(() => stored('globalEnabled'), POLL).toBe(true);
    await popup.close();
  });
});
