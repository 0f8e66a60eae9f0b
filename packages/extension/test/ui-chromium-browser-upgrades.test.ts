import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe.js';
import { launchWithExtension, type LoadedExtension } from './support/browser.js';
import { startDeadEndSite, type DeadEndSite } from './support/dead-end-site.js';
import { checkScreenshot } from './support/screenshots.js';
import { buildWithUi } from './support/ui-extension.js';

const POLL = { timeout: 25_000, interval: 100 };
/** Names Chromium upgrades by itself (public-looking, default ports), all on the dead-end site. */
const HOSTS = ['good.example.com', 'again.good.example.com', 'off.good.example.com'];

/**
 * The recovery journey as users have Chromium in 2026, with its own HTTPS-Upgrades on (as
 * shipped) and off: a site whose HTTPS works but is broken for the user; the popup's "Off"
 * must land on the http:// page (docs/browser-upgrades.md: an extension redirect back to HTTP
 * is taken as a fallback), and the popup's status must never contradict the address bar.
 */
describe.each([
  { upgrades: true, name: 'HTTPS-Upgrades on' },
  { upgrades: false, name: 'HTTPS-Upgrades off' },
])('Chromium, $name: popup and "Site not working?"', ({ upgrades, name }) => {
  let site: DeadEndSite;
  let ext: LoadedExtension;
  let id: string;
  let dir: string;
  const tag = upgrades ? 'upgrades-on' : 'upgrades-off';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'httpsify-ui-upgrades-'));
    const built = await buildWithUi([], join(dir, 'ext'));
    site = await startDeadEndSite();
    const rules = HOSTS.flatMap((h) => [
      `MAP ${h}:80 127.0.0.1:${site.port}`,
      `MAP ${h}:443 127.0.0.1:${site.port}`,
    ]);
    ext = await launchWithExtension(built.dirs.chromium as string, [], {
      browserUpgrades: upgrades,
      resolverRules: rules,
      trustedSpki: [site.trustedSpki],
    });
    id = new URL(ext.worker.url()).host;
    const stored = (k: string) =>
      ext.worker.evaluate(async (key) => (await chrome.storage.local.get(key))[key], k);
    for (let i = 0; i < 150 && (await stored('schemaVersion')) !== 1; i++)
      await new Promise((r) => setTimeout(r, 100));
    await ext.worker.evaluate(
      async (probe) => chrome.storage.local.set({ portalProbeUrl: probe }),
      'http://good.example.com/success.txt',
    );
  });

  afterAll(async () => {
    await ext?.close();
    await site?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const tabIdOf = (p: Page) =>
    ext.worker.evaluate(
      async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id ?? -1,
      p.url(),
    );
  async function popupFor(page: Page, width = 360): Promise<Page> {
    const popup = await ext.context.newPage();
    await popup.setViewportSize({ width, height: 600 });
    await popup.goto(`chrome-extension://${id}/ui/popup.html?tabId=${await tabIdOf(page)}`);
    await popup.waitForSelector('body[data-ready="true"]');
    return popup;
  }
  const statusOf = (popup: Page) => popup.evaluate(() => document.body.dataset.status ?? '');
  /** The popup's words agree with the address bar: an https- status only on an https:// page. */
  async function agrees(popup: Page, page: Page): Promise<void> {
    await expect
      .poll(
        async () =>
          (await statusOf(popup)).startsWith('https-') === page.url().startsWith('https:'),
        {
          ...POLL,
          message: `${await statusOf(popup)} vs ${page.url()}`,
        },
      )
      .toBe(true);
  }

  it('says who moved the page, and "Off" lands on HTTP', async () => {
    const page = await ext.context.newPage();
    await page.goto('http://good.example.com/page?q=1');
    await expect.poll(() => page.url(), POLL).toBe('https://good.example.com/page?q=1');
    const popup = await popupFor(page);
    // The browser upgrades before any extension rule sees the http:// request.
    await expect
      .poll(() => statusOf(popup), POLL)
      .toBe(upgrades ? 'https-by-browser' : 'https-by-upgrade');
    await agrees(popup, page);
    for (const scheme of ['light', 'dark'] as const) {
      await popup.emulateMedia({ colorScheme: scheme });
      checkScreenshot(
        await popup.screenshot({ fullPage: true }),
        `chromium-${tag}-popup-upgraded-360-${scheme}`,
        360,
      );
    }
    expect(await axeViolations(popup)).toEqual([]);
    // Keyboard: arrows move focus only; Enter chooses.
    await popup.locator('#site-mode-everything').focus();
    await popup.keyboard.press('ArrowRight');
    await popup.keyboard.press('ArrowRight');
    await new Promise((r) => setTimeout(r, 500));
    expect(await popup.evaluate(() => document.activeElement?.id)).toBe('site-mode-off');
    expect(await popup.locator('#site-mode-everything').isChecked()).toBe(true);
    expect(
      await ext.worker.evaluate(
        async () => (await chrome.storage.local.get('httpAllowedSites')).httpAllowedSites ?? [],
      ),
    ).toEqual([]);
    await popup.keyboard.press('Enter');
    await expect.poll(() => page.url(), POLL).toBe('http://good.example.com/page?q=1');
    await expect
      .poll(() => page.locator('body').textContent(), POLL)
      .toBe('plain http good.example.com /page?q=1');
    await expect.poll(() => statusOf(popup), POLL).toBe('http-site-off');
    await agrees(popup, page);
    for (const scheme of ['light', 'dark'] as const) {
      await popup.emulateMedia({ colorScheme: scheme });
      checkScreenshot(
        await popup.screenshot({ fullPage: true }),
        `chromium-${tag}-popup-off-360-${scheme}`,
        360,
      );
    }
    // No sideways scroll, and within Chromium's popup limit (800 x 600).
    expect(await popup.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      360,
    );
    expect(await popup.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(
      600,
    );
    // The next visit stays on HTTP too: Chromium took our redirect as its own fallback.
    await page.goto('http://good.example.com/next');
    await new Promise((r) => setTimeout(r, 1000));
    expect(page.url()).toBe('http://good.example.com/next');
    await popup.close();
    await page.close();
  });

  it('switching httpsify off on a moved page never credits "the link or the site"', async () => {
    const page = await ext.context.newPage();
    await page.goto('http://off.good.example.com/x');
    await expect.poll(() => page.url(), POLL).toBe('https://off.good.example.com/x');
    const popup = await popupFor(page);
    await agrees(popup, page);
    // Everything open and a very long name typed: still no sideways scroll.
    await popup.evaluate(() => {
      for (const d of Array.from(document.querySelectorAll('details'))) d.open = true;
    });
    await popup.locator('#rule-host').fill(`${'very-long-label-'.repeat(12)}example.com`);
    expect(await popup.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      360,
    );
    await popup.locator('#global-enabled').click();
    // Off: the http:// page, as asked (past Chromium's own upgrade, where it is on).
    await expect.poll(() => page.url(), POLL).toBe('http://off.good.example.com/x');
    await expect.poll(() => statusOf(popup), POLL).toBe('extension-off');
    await agrees(popup, page);
    await popup.locator('#global-enabled').click();
    await expect.poll(() => statusOf(popup), POLL).not.toBe('extension-off');
    await popup.close();
    await page.close();
  });

  it(`the popup at 1280 px, light and dark (${name})`, async () => {
    const page = await ext.context.newPage();
    await page.goto('http://again.good.example.com/');
    await expect.poll(() => page.url(), POLL).toMatch(/^https:/);
    const popup = await popupFor(page, 1280);
    for (const scheme of ['light', 'dark'] as const) {
      await popup.emulateMedia({ colorScheme: scheme });
      checkScreenshot(
        await popup.screenshot({ fullPage: true }),
        `chromium-${tag}-popup-1280-${scheme}`,
        1280,
      );
    }
    await popup.close();
    await page.close();
  });
});
