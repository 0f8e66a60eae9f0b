import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExtension } from '../src/packaging/build.js';
import {
  launchFirefoxWithExtension,
  type FirefoxTab,
  type FirefoxWithExtension,
} from './support/firefox.js';
import { page, serveLoopHost, SHARED_TEST_RULESETS, writeRulesetsDir } from './support/e2e-site.js';
import { startDualServer, type DualServer } from './support/servers.js';

const HOSTS = [
  'plain.example.test',
  'old.example.test',
  'new.example.test',
  'off.example.test',
  'loop.example.test',
  'cookie.example.test',
  'page.uncovered.test',
];

// A 1×1 transparent GIF, so the subresource loads like a real image.
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

describe('Firefox MV3 extension (blocking webRequest) in a real Firefox', () => {
  const scratch: string[] = [];
  let server: DualServer;
  let firefox: FirefoxWithExtension;
  let tab: FirefoxTab;
  let origin: (scheme: string, host: string) => string;

  beforeAll(async () => {
    const rulesDir = writeRulesetsDir(SHARED_TEST_RULESETS, 'httpsify-ff-rules-');
    const outDir = mkdtempSync(join(tmpdir(), 'httpsify-ff-ext-'));
    scratch.push(rulesDir, outDir);
    const built = await buildExtension({
      rulesets: [rulesDir],
      outDir,
      browsers: ['firefox'],
      zip: false,
    });
    server = await startDualServer((req, res, secure) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      const scheme = secure ? 'https' : 'http';
      if (serveLoopHost(req, res, secure)) return;
      if (req.url === '/cookie')
        return page(res, `cookie over ${scheme}`, {
          'set-cookie': `${host === 'cookie.example.test' ? 'sid' : 'other'}=1; Path=/`,
        });
      if (req.url === '/img')
        return page(res, `<img id="i" src="http://plain.example.test:${server.port}/pixel.gif">`);
      if (req.url === '/pixel.gif') {
        res.writeHead(200, { 'content-type': 'image/gif' });
        res.end(GIF);
        return;
      }
      page(res, `${scheme} ${host} ${req.url}`);
    });
    origin = (scheme, host) => `${scheme}://${host}:${server.port}`;
    firefox = await launchFirefoxWithExtension(built.dirs.firefox!, HOSTS);
    tab = await firefox.newTab();
    // These tests are about the rulesets: the protection mode (on by default) goes off, so that
    // a host no ruleset covers is a real control. protection-firefox.test.ts covers the mode.
    const extPage = await firefox.newTab();
    await extPage.goto(`${firefox.extensionOrigin}/ui/popup.html`);
    await extPage.evaluate('browser.storage.local.set({ httpsFirst: false })');
    const modeOn = `new Promise((resolve) => { const p = browser.runtime.connect({ name: 'httpsify-ui' }); p.onMessage.addListener((m) => resolve(m.response.httpsFirst)); p.postMessage({ id: 1, request: { type: 'settings' } }); })`;
    for (let i = 0; i < 100 && (await extPage.evaluate<boolean>(modeOn)); i++)
      await new Promise((r) => setTimeout(r, 100));
    await extPage.close();
  });

  afterAll(async () => {
    await firefox?.close();
    await server?.close();
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });

  const bodyText = () => tab.evaluate<string>('document.body.textContent');
  /** Evaluates in one of the extension's own pages, where the `browser.*` APIs are. */
  const inExtensionPage = async <T>(expression: string): Promise<T> => {
    const extensionTab = await firefox.newTab();
    try {
      await extensionTab.goto(`${firefox.extensionOrigin}/ui/popup.html`);
      return await extensionTab.evaluate<T>(expression);
    } finally {
      await extensionTab.close();
    }
  };
  /** Asks the background script as the popup does. */
  const sendToBackground = (request: unknown) =>
    inExtensionPage<unknown>(`browser.runtime.sendMessage(${JSON.stringify(request)})`);

  it('installs the build as a temporary add-on under its gecko id', () => {
    expect(firefox.extensionId).toBe('httpsify@httpsify.org');
  });

  it('leaves a host no ruleset covers on http:// (control)', async () => {
    expect(await tab.goto(`${origin('http', 'page.uncovered.test')}/plain`)).toBe(
      `${origin('http', 'page.uncovered.test')}/plain`,
    );
    expect(await bodyText()).toBe('http page.uncovered.test /plain');
  });

  it('ends a navigation to a covered http:// site on https://', async () => {
    expect(await tab.goto(`${origin('http', 'plain.example.test')}/hello?x=1`)).toBe(
      `${origin('https', 'plain.example.test')}/hello?x=1`,
    );
    expect(await bodyText()).toBe('https plain.example.test /hello?x=1');
  });

  it('respects an exclusion', async () => {
    expect(await tab.goto(`${origin('http', 'plain.example.test')}/excluded/page`)).toBe(
      `${origin('http', 'plain.example.test')}/excluded/page`,
    );
    expect(await bodyText()).toBe('http plain.example.test /excluded/page');
  });

  it('lands a host rewrite with $1 on the right URL', async () => {
    expect(await tab.goto(`${origin('http', 'old.example.test')}/a/b?c=1`)).toBe(
      `${origin('https', 'new.example.test')}/moved/a/b?c=1`,
    );
    expect(await bodyText()).toBe('https new.example.test /moved/a/b?c=1');
  });

  it('leaves a default_off ruleset off until it is switched on', async () => {
    const url = `${origin('http', 'off.example.test')}/`;
    expect(await tab.goto(url)).toBe(url);
    expect(
      await sendToBackground({ type: 'setRulesetActive', name: 'Off Example', active: true }),
    ).toMatchObject({ overrides: { 'Off Example': true } });
    expect(await tab.goto(url)).toBe(`${origin('https', 'off.example.test')}/`);
    await sendToBackground({ type: 'setRulesetActive', name: 'Off Example', active: null });
    expect(await tab.goto(url)).toBe(url);
  });

  it('upgrades a subresource (an <img>) of an http:// page', async () => {
    const before = server.log.length;
    expect(await tab.goto(`${origin('http', 'page.uncovered.test')}/img`)).toBe(
      `${origin('http', 'page.uncovered.test')}/img`,
    );
    // The image really loaded (naturalWidth is 0 for a failed image).
    expect(await tab.evaluate<number>('document.getElementById("i").naturalWidth')).toBe(1);
    const fetched = server.log.slice(before).filter((r) => r.path === '/pixel.gif');
    expect(fetched.map((r) => [r.host, r.secure])).toEqual([['plain.example.test', true]]);
  });

  it('adds the Secure flag to a <securecookie> cookie of an upgraded host, and only there', async () => {
    expect(await tab.goto(`${origin('http', 'cookie.example.test')}/cookie`)).toBe(
      `${origin('https', 'cookie.example.test')}/cookie`,
    );
    expect(await tab.goto(`${origin('http', 'page.uncovered.test')}/cookie`)).toBe(
      `${origin('http', 'page.uncovered.test')}/cookie`,
    );
    const secureFlags = () =>
      inExtensionPage<Record<string, boolean>>(
        `browser.cookies.getAll({}).then((all) => Object.fromEntries(all.map((c) => [c.name + '@' + c.domain, c.secure])))`,
      );
    await expect
      .poll(secureFlags, { timeout: 5000 })
      .toEqual({ 'sid@cookie.example.test': true, 'other@page.uncovered.test': false });
  });

  it('stops an HTTPS→HTTP redirect loop on the HTTP page, and later visits go straight to HTTP', async () => {
    const url = `${origin('http', 'loop.example.test')}/`;
    const before = server.log.length;
    expect(await tab.goto(url)).toBe(url);
    expect(await bodyText()).toBe('plain http page');
    const hits = server.log
      .slice(before)
      .filter((r) => r.host === 'loop.example.test' && r.path === '/');
    const secureHits = hits.filter((r) => r.secure).length;
    expect(secureHits).toBeGreaterThanOrEqual(3);
    expect(secureHits).toBeLessThan(20);
    expect(await sendToBackground({ type: 'getState' })).toMatchObject({
      loopBlockedHosts: ['loop.example.test'],
    });
    const again = server.log.length;
    expect(await tab.goto(url)).toBe(url);
    expect(
      server.log
        .slice(again)
        .filter((r) => r.host === 'loop.example.test' && r.path === '/')
        .map((r) => r.secure),
    ).toEqual([false]);
  });
});
