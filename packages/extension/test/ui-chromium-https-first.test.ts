import type { Page } from 'playwright-core';
import { axeViolations } from './support/axe.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTPS_FIRST_EXEMPT_REGEXES } from '../src/dnr/settings-rules.js';
import { POLL, shot, startUiHarness, type UiHarness } from './support/ui-harness.js';

describe('HTTPS-first in Chromium: upgrade, fallback page, exemptions', () => {
  let h: UiHarness;
  let page: Page;
  const plain = (host: string, path = '/') => `http://${host}:${h.plainPort}${path}`;
  const title = async (p: Page) =>
    h.ext.worker.evaluate(async (t) => chrome.action.getTitle({ tabId: t }), await h.tabIdOf(p));

  /** Navigations that end on our fallback page abort in Playwright's eyes. */
  async function visit(url: string): Promise<void> {
    await page.goto(url).catch(() => undefined);
  }

  beforeAll(async () => {
    h = await startUiHarness();
    page = await h.ext.context.newPage();
    const options = await h.openOptions();
    await options.locator('#opt-httpsFirst').check();
    for (let i = 0; i < 50 && (await h.stored('httpsFirst')) !== true; i++)
      await new Promise((r) => setTimeout(r, 100));
    await options.close();
  });

  afterAll(async () => {
    await h?.close();
  });

  it('has every exemption regex accepted by Chromium', async () => {
    const verdicts = await h.ext.worker.evaluate(async (list) => {
      const out: string[] = [];
      for (const regex of list) {
        const v = await chrome.declarativeNetRequest.isRegexSupported({ regex });
        out.push(v.isSupported ? 'ok' : `${regex}: ${v.reason}`);
      }
      return out;
    }, HTTPS_FIRST_EXEMPT_REGEXES);
    expect(verdicts.filter((v) => v !== 'ok')).toEqual([]);
    const rules = await h.ext.worker.evaluate(() => chrome.declarativeNetRequest.getDynamicRules());
    expect(rules.filter((r) => r.action.type === 'upgradeScheme' && r.priority === 1)).toHaveLength(
      1,
    );
  });

  it('is on (by default) and upgrades sites without rulesets', async () => {
    await page.goto(h.url('works.uncovered.test', '/a?b=1'));
    expect(page.url()).toBe(`https://works.uncovered.test:${h.server.port}/a?b=1`);
    // The icon follows within a moment (refreshes close together go out together).
    await expect.poll(() => title(page), POLL).toBe('httpsify (HTTPS-first)');
  });

  it('sends a failed upgrade to the fallback page; "Open over HTTP this time" works for the session', async () => {
    // The tab's id while it shows a web page (the extension cannot read its own pages' tab addresses).
    const tabId = await h.tabIdOf(page);
    expect(tabId).toBeGreaterThan(0);
    await visit(plain('nossl.uncovered.test', '/p?q=1&r=2#frag'));
    await page.waitForURL(/fallback\.html/);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.locator('#target-url').textContent()).toBe(
      plain('nossl.uncovered.test', '/p?q=1&r=2#frag'),
    );
    // In words first; the raw error code on the details line.
    expect(await page.locator('#reason').textContent()).toMatch(/^net::ERR_/);
    expect(await page.locator('#reason-text').textContent()).toMatch(
      /^The site('s server does not speak HTTPS| refused a secure connection|'s security certificate)/,
    );
    // Keyboard: focus starts on "Go back".
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('go-back');
    // Large type, centred in the window.
    expect(
      await page.locator('h1').evaluate((el) => parseFloat(getComputedStyle(el).fontSize)),
    ).toBeGreaterThanOrEqual(28);
    expect(
      await page
        .locator('#reason-text')
        .evaluate((el) => parseFloat(getComputedStyle(el).fontSize)),
    ).toBeGreaterThanOrEqual(17);
    const box = await page.locator('main').boundingBox();
    const viewport = page.viewportSize() as { width: number; height: number };
    expect(Math.abs((box?.y ?? 0) + (box?.height ?? 0) / 2 - viewport.height / 2)).toBeLessThan(
      viewport.height * 0.1,
    );
    expect(await axeViolations(page)).toEqual([]);
    const texts = [
      'Secure site not available',
      'More options',
      'Continue to HTTP site',
      'until you close the browser',
    ];
    await shot(page, 'chromium-fallback-light', { texts });
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'chromium-fallback-dark', { texts });
    // The popup over the fallback page explains it and offers to try again.
    const popup = await h.openPopup(tabId);
    await expect
      .poll(() => popup.locator('#status-title').textContent(), POLL)
      .toBe('HTTPS did not work for nossl.uncovered.test');
    await shot(popup, 'chromium-popup-fallback', {
      width: 360,
      texts: ['HTTPS did not work for nossl.uncovered.test', 'Try HTTPS again'],
    });
    await popup.close();
    await page.emulateMedia({ colorScheme: 'light' });
    // "Copy address" (under "More options") puts the http:// address on the clipboard.
    await page.locator('#more summary').click();
    await shot(page, 'chromium-fallback-more', {
      texts: ['Use “Rules only” for this site', 'Error code:'],
    });
    await h.ext.context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.locator('#copy-url').click();
    await expect.poll(() => page.locator('#copied').textContent(), POLL).toBe('Address copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      plain('nossl.uncovered.test', '/p?q=1&r=2#frag'),
    );
    await page.locator('#http-once').click();
    await page.waitForURL(plain('nossl.uncovered.test', '/p?q=1&r=2#frag'));
    expect(await page.locator('body').textContent()).toContain('plain http');
    // Still allowed on the next visit, without being stored for good.
    await page.goto(plain('nossl.uncovered.test', '/again'));
    expect(page.url()).toBe(plain('nossl.uncovered.test', '/again'));
    expect((await h.stored('httpAllowedSites')) ?? []).toEqual([]);
    await expect
      .poll(
        async () =>
          ((await h.stored('stats')) as { fallbacks: number } | undefined)?.fallbacks ?? 0,
        POLL,
      )
      .toBeGreaterThan(0);
    // The popup says why the page is on HTTP, and "Try HTTPS again" really tries (and fails again here).
    const onHttp = await h.openPopup(page);
    await expect
      .poll(() => onHttp.locator('#status-title').textContent(), POLL)
      .toBe('Not secure: HTTPS did not work here');
    await onHttp.getByRole('button', { name: 'Try HTTPS again' }).click();
    await expect.poll(() => page.url(), { timeout: 15_000 }).toMatch(/fallback\.html/);
    await onHttp.close();
  });

  it('"Use “Rules only” for this site" is stored with the port', async () => {
    await visit(plain('always.uncovered.test', '/'));
    await page.waitForURL(/fallback\.html/);
    await page.waitForSelector('body[data-ready="true"]');
    await page.locator('#more summary').click();
    await page.locator('#http-always').click();
    await page.waitForURL(plain('always.uncovered.test', '/'));
    expect(await h.stored('httpAllowedSites')).toEqual([`always.uncovered.test:${h.plainPort}`]);
    await page.goto(plain('always.uncovered.test', '/two'));
    expect(page.url()).toBe(plain('always.uncovered.test', '/two'));
  });

  it('falls back after 3 seconds without an answer; "Go back" returns', async () => {
    await page.goto(h.url('start.uncovered.test', '/'));
    const started = Date.now();
    await visit(`http://slow.uncovered.test:${h.hangPort}/`);
    await expect.poll(() => page.url(), { timeout: 15_000 }).toMatch(/fallback\.html/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.locator('#reason').textContent()).toBe('no answer within 3 seconds');
    expect(await page.locator('#reason-text').textContent()).toBe(
      'The site did not answer a secure connection within 3 seconds.',
    );
    await page.locator('#go-back').click();
    await page.waitForURL(`https://start.uncovered.test:${h.server.port}/`);
  });

  it('never upgrades localhost, loopback addresses or single-label names', async () => {
    for (const u of [
      `http://localhost:${h.plainPort}/`,
      `http://127.0.0.1:${h.plainPort}/`,
      `http://app.localhost:${h.plainPort}/`,
    ]) {
      await page.goto(u);
      expect(page.url()).toBe(u);
      expect(await page.locator('body').textContent()).toContain('plain http');
    }
  });

  it('behind a captive portal, the fallback page says so; only the click opens HTTP', async () => {
    // The probe now answers like a portal login page.
    await h.ext.worker.evaluate(
      async (probe) => chrome.storage.local.set({ portalProbeUrl: probe }),
      h.url('portal.uncovered.test', '/login'),
    );
    await visit(plain('hotel.uncovered.test', '/'));
    await page.waitForURL(/fallback\.html/);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.locator('#reason-text').textContent()).toContain('sign in first');
    // It leads with the network's sign-in page: the one primary button, focused.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('portal-sign-in');
    expect(
      await page.locator('button.primary:visible').evaluateAll((bs) => bs.map((b) => b.id)),
    ).toEqual(['portal-sign-in']);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await shot(page, `chromium-captive-portal-1280-${scheme}`, { texts: ['sign-in page'] });
    }
    await page.emulateMedia({ colorScheme: 'light' });
    // It opens the probe's own address in a new tab (the network answers it with its sign-in
    // page), over HTTP; the site itself stays unopened over HTTP.
    const [signIn] = await Promise.all([
      h.ext.context.waitForEvent('page'),
      page.locator('#portal-sign-in').click(),
    ]);
    await expect.poll(() => signIn.url(), POLL).toBe(h.url('portal.uncovered.test', '/login'));
    await expect
      .poll(() => signIn.locator('body').textContent(), POLL)
      .toContain('http portal.uncovered.test');
    await signIn.close();
    expect(page.url()).toMatch(/fallback\.html/);
    await page.locator('#http-once').click();
    await page.waitForURL(plain('hotel.uncovered.test', '/'));
    expect(await page.locator('body').textContent()).toContain('plain http');
    // Whoever answered the probe relaxed nothing else: other sites are still upgraded.
    await page.goto(h.url('works.uncovered.test', '/captive'));
    expect(page.url()).toBe(`https://works.uncovered.test:${h.server.port}/captive`);
  });
});
