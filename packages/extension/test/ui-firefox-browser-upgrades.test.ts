import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExtension } from '../src/packaging/build.js';
import { AXE_EXPRESSION } from './support/axe.js';
import { startDeadEndSite, type DeadEndSite } from './support/dead-end-site.js';
import {
  launchFirefoxWithExtension,
  type FirefoxTab,
  type FirefoxWithExtension,
} from './support/firefox.js';
import { checkScreenshot } from './support/screenshots.js';

const POLL = { timeout: 25_000, interval: 100 };

/**
 * Ports 80 and 443 of a loopback address of this run's own (Firefox upgrades only default
 * ports and has no per-port resolver rules), forwarded to the dead-end site.
 */
async function defaultPorts(sitePort: number): Promise<{ ip: string; close(): void }> {
  const ip = `127.${1 + (process.pid % 250)}.${1 + Math.floor(Math.random() * 250)}.${2 + Math.floor(Math.random() * 250)}`;
  const servers: Server[] = [];
  for (const port of [80, 443]) {
    const server = createServer((client) => {
      const upstream = connect(sitePort, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) =>
      server.once('error', reject).listen(port, ip, () => resolve()),
    );
    servers.push(server);
  }
  return { ip, close: () => servers.forEach((s) => s.close()) };
}

/**
 * The recovery journey in Firefox ESR with its own HTTPS-Only Mode on and off. Measured
 * (docs/browser-upgrades.md): under HTTPS-Only no extension can keep a page on HTTP (a redirect
 * back ends on Firefox's error page) nor open about:preferences, so the popup must name the
 * per-site exception exactly; with it off, "Off" lands on the http:// page.
 */
describe.each([
  { httpsOnly: true, name: 'HTTPS-Only on' },
  { httpsOnly: false, name: 'HTTPS-Only off' },
])('Firefox, $name: popup and "Site not working?"', ({ httpsOnly }) => {
  let site: DeadEndSite;
  let ports: { ip: string; close(): void };
  let firefox: FirefoxWithExtension;
  let tab: FirefoxTab;
  let popup: FirefoxTab;
  let dir: string;
  const tag = httpsOnly ? 'https-only-on' : 'https-only-off';
  const href = () => tab.evaluate<string>('location.href').catch(() => '');
  const status = () => popup.evaluate<string>('document.body.dataset.status ?? ""').catch(() => '');
  const popupText = () => popup.evaluate<string>('document.body.innerText').catch(() => '');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'httpsify-ff-upgrades-'));
    const built = await buildExtension({
      rulesets: [],
      outDir: join(dir, 'ext'),
      browsers: ['firefox'],
      zip: false,
    });
    site = await startDeadEndSite();
    ports = await defaultPorts(site.port);
    firefox = await launchFirefoxWithExtension(built.dirs.firefox!, [], {
      prefs: { 'network.dns.forceResolve': ports.ip },
    });
    // The remote agent resets these at start: set them in the running browser.
    await firefox.setPrefs({ 'dom.security.https_only_mode': httpsOnly });
    tab = await firefox.newTab();
    popup = await firefox.newTab();
    await popup.goto(`${firefox.extensionOrigin}/ui/options.html`);
    const stored = () =>
      popup
        .evaluate<unknown>(
          `browser.storage.local.get('schemaVersion').then((o) => o.schemaVersion ?? null)`,
        )
        .catch(() => null);
    for (let i = 0; i < 150 && (await stored()) !== 1; i++)
      await new Promise((r) => setTimeout(r, 100));
    await popup.evaluate(
      `browser.storage.local.set({ portalProbeUrl: 'http://good.example.com/success.txt' })`,
    );
  });

  afterAll(async () => {
    await firefox?.close();
    ports?.close();
    await site?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function openPopupFor(url: RegExp): Promise<void> {
    const tabId = await popup.evaluate<number>(
      `browser.tabs.query({}).then((ts) => ts.find((t) => ${url}.test(t.url))?.id ?? -1)`,
    );
    await popup.setViewport(360, 600);
    await popup.goto(`${firefox.extensionOrigin}/ui/popup.html?tabId=${tabId}`);
    await expect
      .poll(() => popup.evaluate<string | undefined>('document.body.dataset.ready'), POLL)
      .toBe('true');
  }
  async function shots(name: string): Promise<void> {
    for (const scheme of ['light', 'dark'] as const) {
      await firefox.setColorScheme(scheme);
      checkScreenshot(await popup.screenshot(), `firefox-${tag}-${name}-${scheme}`);
    }
    await firefox.setColorScheme('light');
  }
  /** The popup's words agree with the address bar. */
  async function agrees(): Promise<void> {
    await expect
      .poll(
        async () =>
          `${(await status()).startsWith('https-')} ${(await href()).startsWith('https:')}`,
        POLL,
      )
      .toMatch(/^(true true|false false)$/);
  }

  it('"Off" lands on HTTP, or the popup names the exact Firefox setting', async () => {
    await tab.goto('http://good.example.com/page?q=1');
    await expect.poll(href, POLL).toBe('https://good.example.com/page?q=1');
    await openPopupFor(/good\.example\.com/);
    await expect
      .poll(status, POLL)
      .toMatch(httpsOnly ? /^https-by-(browser|upgrade)$/ : /^https-by-upgrade$/);
    await agrees();
    await shots('popup-upgraded-360');
    await popup.evaluate(`void document.querySelector('#site-mode-off').click()`);
    if (httpsOnly) {
      // HTTPS-Only upgrades the http:// address again: the popup says so, and how to change it.
      await new Promise((r) => setTimeout(r, 1500));
      await expect.poll(href, POLL).toBe('https://good.example.com/page?q=1');
      await expect.poll(status, POLL).toBe('https-by-browser');
      await expect.poll(popupText, POLL).toContain('Manage Exceptions');
      expect(await popup.evaluate<boolean>(`document.querySelector('#status-action').hidden`)).toBe(
        true,
      );
    } else {
      await expect.poll(href, POLL).toBe('http://good.example.com/page?q=1');
      await expect
        .poll(() => tab.evaluate<string>('document.body.textContent'), POLL)
        .toBe('plain http good.example.com /page?q=1');
      await expect.poll(status, POLL).toBe('http-site-off');
    }
    await agrees();
    await shots('popup-off-360');
    expect(
      await popup.evaluate<number>('document.documentElement.scrollWidth'),
    ).toBeLessThanOrEqual(360);
    const violations = await popup.evaluate<string[]>(AXE_EXPRESSION);
    expect(violations).toEqual([]);
    await popup.setViewport(1280, 800);
    await shots('popup-off-1280');
  });
});
