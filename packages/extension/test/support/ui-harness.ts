import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchWithExtension, switchProtectionModeOff, type LoadedExtension } from './browser.js';
import { startDualServer, startHttpOnly, startTlsHang, type DualServer } from './servers.js';
import { checkScreenshot, expectVisibleTexts } from './screenshots.js';
import { buildWithUi } from './ui-extension.js';

/** Browser tests wait for the background through storage; under load that takes more than a second. */
export const POLL = { timeout: 10_000, interval: 100 };

export const RULESETS = {
  'site.xml':
    '<ruleset name="Site Rules"><target host="site.example.test"/><rule from="^http:" to="https:"/></ruleset>',
  'cdn.xml':
    '<ruleset name="CDN Rules"><target host="cdn.example.test"/><rule from="^http:" to="https:"/></ruleset>',
  'exp.xml':
    '<ruleset name="Experimental Rules" default_off="breaks video"><target host="exp.example.test"/><rule from="^http:" to="https:"/></ruleset>',
  // Its HTTPS site redirects back to HTTP: the redirect-loop guard's case.
  'loop.xml':
    '<ruleset name="Loop Rules"><target host="loop.example.test"/><rule from="^http:" to="https:"/></ruleset>',
};

/**
 * Screenshots a page (or one part of it) and checks that it is a real rendering of the right
 * width showing the given texts: not blank, not one colour, the texts visible in the page.
 */
export async function shot(
  page: Page,
  name: string,
  check: { width?: number; texts?: string[]; part?: string; viewport?: boolean } = {},
): Promise<void> {
  const target = check.part === undefined ? null : page.locator(check.part);
  // A modal dialog's backdrop covers the viewport only: shoot just that.
  const png =
    target === null
      ? await page.screenshot({ fullPage: check.viewport !== true })
      : await target.screenshot();
  checkScreenshot(png, name, check.width);
  expectVisibleTexts(await (target ?? page.locator('body')).innerText(), name, check.texts ?? []);
}

export interface UiHarness {
  server: DualServer;
  /** Port of a plain-HTTP-only server (HTTPS attempts fail at once). */
  plainPort: number;
  /** Port where HTTP answers and TLS hangs. */
  hangPort: number;
  ext: LoadedExtension;
  id: string;
  url(host: string, path?: string): string;
  stored(key: string): Promise<unknown>;
  tabIdOf(p: Page): Promise<number>;
  /** The popup for a page, or for a tab id. */
  openPopup(target: Page | number): Promise<Page>;
  openOptions(): Promise<Page>;
  close(): Promise<void>;
}

/**
 * A Chromium build of the test rulesets with the UI, loopback servers for the test hosts, and the
 * browser. Hosts: site/cdn/exp.example.test (rulesets; exp is default-off and its page embeds
 * http:// images from the other two), anything.uncovered.test (no ruleset).
 */
export async function startUiHarness(
  rulesets: string[] | null = null,
  options: { modeOff?: boolean } = {},
): Promise<UiHarness> {
  let dirs = rulesets;
  if (dirs === null) {
    const rulesDir = mkdtempSync(join(tmpdir(), 'httpsify-ui-rules-'));
    for (const [f, xml] of Object.entries(RULESETS)) writeFileSync(join(rulesDir, f), xml);
    dirs = [rulesDir];
  }
  const built = await buildWithUi(dirs, mkdtempSync(join(tmpdir(), 'httpsify-ui-ext-')));
  const server: DualServer = await startDualServer((req, res, secure) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (req.url === '/success.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end('success\n');
    }
    if (host === 'loop.example.test' && secure) {
      res.writeHead(302, { location: `http://${req.headers.host}${req.url}` });
      return void res.end();
    }
    if (req.url?.endsWith('.png')) {
      res.writeHead(404);
      return void res.end();
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    const p = server.port;
    // The page stays on HTTP (its ruleset is off by default), so its http:// images are ours to
    // upgrade: on an HTTPS page Chromium's mixed-content autoupgrade would get there first.
    const body =
      host === 'exp.example.test'
        ? `<img src="http://site.example.test:${p}/a.png"><img src="http://cdn.example.test:${p}/b.png">`
        : '';
    res.end(
      `<!doctype html><title>${host}</title><body>${secure ? 'https' : 'http'} ${host}${body}</body>`,
    );
  });
  const plain = await startHttpOnly();
  const hang = await startTlsHang(plain.server);
  const ext = await launchWithExtension(built.dirs.chromium as string, [
    '*.example.test',
    '*.uncovered.test',
  ]);
  const id = new URL(ext.worker.url()).host;
  const url = (host: string, path = '/') => `http://${host}:${server.port}${path}`;
  const stored = (key: string) =>
    ext.worker.evaluate(async (k) => (await chrome.storage.local.get(k))[k], key);
  const tabIdOf = (p: Page) =>
    ext.worker.evaluate(
      async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id ?? -1,
      p.url(),
    );
  // The UI half is ready once settings are stamped with their schema version.
  for (let i = 0; i < 150 && (await stored('schemaVersion')) !== 1; i++)
    await new Promise((r) => setTimeout(r, 100));
  await ext.worker.evaluate(
    async (probe) => chrome.storage.local.set({ portalProbeUrl: probe }),
    url('probe.uncovered.test', '/success.txt'),
  );
  if (options.modeOff === true) await switchProtectionModeOff(ext);
  return {
    server,
    plainPort: plain.port,
    hangPort: hang.port,
    ext,
    id,
    url,
    stored,
    tabIdOf,
    async openPopup(target) {
      const tabId = typeof target === 'number' ? target : await tabIdOf(target);
      const popup = await ext.context.newPage();
      // The width of the popup's content (Chromium sizes a toolbar popup to it).
      await popup.setViewportSize({ width: 360, height: 560 });
      await popup.goto(`chrome-extension://${id}/ui/popup.html?tabId=${tabId}`);
      await popup.waitForSelector('body[data-ready="true"]');
      return popup;
    },
    async openOptions() {
      const page = await ext.context.newPage();
      await page.goto(`chrome-extension://${id}/ui/options.html`);
      await page.waitForSelector('body[data-ready="true"]');
      return page;
    },
    async close() {
      await ext.close();
      await server.close();
      plain.server.close();
      hang.server.close();
    },
  };
}
