import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchWithExtension, type LoadedExtension } from './support/browser.js';
import { startDeadEndSite, type DeadEndSite } from './support/dead-end-site.js';
import { buildWithUi } from './support/ui-extension.js';

const POLL = { timeout: 25_000, interval: 100 };
/** How long a loaded page is watched: longer than HTTPS-first's 3-second timer. */
const WATCH_MS = 4000;

/** Each way HTTPS can fail for an HTTP-only site: host, and where its port 443 leads. */
const CASES: { name: string; host: string; https: 'site' | 'closed' | 'none' }[] = [
  { name: 'refused', host: 'refused.example.com', https: 'closed' },
  { name: 'reset', host: 'reset.example.com', https: 'site' },
  { name: 'timeout', host: 'hang.example.com', https: 'site' },
  { name: 'TLS handshake', host: 'tls.example.com', https: 'site' },
  { name: 'certificate', host: 'cert.example.com', https: 'site' },
  { name: 'DNS failure of the HTTPS host', host: 'dns.example.com', https: 'none' },
  { name: 'www. twin failing too', host: 'twinfail.example.com', https: 'closed' },
  { name: 'www. twin answering 404', host: 'twin404.example.com', https: 'closed' },
];
const EXTRA: { host: string; https: 'site' | 'closed' | 'none' }[] = [
  { host: 'www.twinfail.example.com', https: 'closed' },
  { host: 'www.twin404.example.com', https: 'site' },
  { host: 'good.example.com', https: 'site' },
  { host: 'back.tls.example.com', https: 'site' },
  { host: 'fresh.tls.example.com', https: 'site' },
];

/**
 * Never a dead end (issue 29), in Chromium with its own HTTPS-Upgrades on, as users have it:
 * every failure class ends on the fallback page, and one click on "Continue to HTTP site"
 * reaches the HTTP page, which then stays. Names look public so that Chromium upgrades them
 * itself first (its upgrade races ours); `.test` names with a port take the handoff page.
 */
describe('Chromium: an HTTP-only site is never a dead end', () => {
  let site: DeadEndSite;
  let ext: LoadedExtension;
  let outDir: string;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'httpsify-dead-ends-'));
    // One ruleset for a host never visited: every host here is HTTPS-first's.
    mkdirSync(join(outDir, 'rules'));
    writeFileSync(
      join(outDir, 'rules', 'other.xml'),
      '<ruleset name="Other"><target host="other.example.net"/><rule from="^http:" to="https:"/></ruleset>',
    );
    const built = await buildWithUi([join(outDir, 'rules')], join(outDir, 'ext'));
    site = await startDeadEndSite();
    const to = (https: string) =>
      https === 'site'
        ? `127.0.0.1:${site.port}`
        : https === 'closed'
          ? `127.0.0.1:${site.closedPort}`
          : '~NOTFOUND';
    const rules = [...CASES, ...EXTRA].flatMap((c) => [
      `MAP ${c.host}:80 127.0.0.1:${site.port}`,
      `MAP ${c.host}:443 ${to(c.https)}`,
    ]);
    // The handoff page's hosts (trailing dots), on the site's own port.
    for (const h of [
      'good.example.test.',
      'tls.example.test.',
      'good.example.test',
      'tls.example.test',
    ])
      rules.push(`MAP ${h} 127.0.0.1`);
    ext = await launchWithExtension(built.dirs.chromium as string, [], {
      browserUpgrades: true,
      resolverRules: rules,
      trustedSpki: [site.trustedSpki],
    });
    const stored = (k: string) =>
      ext.worker.evaluate(async (key) => (await chrome.storage.local.get(key))[key], k);
    for (let i = 0; i < 150 && (await stored('schemaVersion')) === undefined; i++)
      await new Promise((r) => setTimeout(r, 100));
    await ext.worker.evaluate(
      async (probe) => chrome.storage.local.set({ portalProbeUrl: probe }),
      `http://good.example.com/success.txt`,
    );
  });

  afterAll(async () => {
    await ext?.close();
    await site?.close();
    if (outDir !== undefined) rmSync(outDir, { recursive: true, force: true });
  });

  async function fallbackPage(url: string, p?: Page): Promise<Page> {
    const tab = p ?? (await ext.context.newPage());
    await tab.goto(url).catch(() => undefined);
    await expect.poll(() => tab.url(), { ...POLL, message: url }).toMatch(/\/ui\/fallback\.html\?/);
    await tab.waitForSelector('body[data-ready="true"]');
    return tab;
  }

  it('every failure class reaches the HTTP page in one click, and the page stays', async () => {
    const pages = await Promise.all(
      CASES.map(async (c) => {
        const url = `http://${c.host}/page?q=1`;
        const tab = await fallbackPage(url);
        if (c.host.startsWith('twin404')) {
          // The twin's 404 is not taken for the site: not followed, not offered.
          expect(await tab.locator('#twin').isHidden()).toBe(true);
          expect(await tab.locator('#tried-list li').allTextContents()).toContain(
            'https://www.twin404.example.com/ — answered with error 404, so it is not the site',
          );
        }
        await tab.locator('#http-once').click();
        await tab.waitForURL(url);
        await expect
          .poll(() => tab.locator('body').textContent(), POLL)
          .toBe(`plain http ${c.host} /page?q=1`);
        return { c, tab, url };
      }),
    );
    await new Promise((r) => setTimeout(r, WATCH_MS));
    for (const { c, tab, url } of pages) {
      expect(tab.url(), c.name).toBe(url);
      await tab.close();
    }
  });

  it('"Go back" skips the failed attempt; with nothing before it, opens a new-tab page', async () => {
    const tab = await ext.context.newPage();
    await tab.goto('http://good.example.com/start');
    expect(tab.url()).toBe('https://good.example.com/start');
    await fallbackPage('http://back.tls.example.com/', tab);
    await tab.locator('#go-back').click();
    await tab.waitForURL('https://good.example.com/start');
    await tab.close();
    // A tab opened at the failing address (from a link, another program): nothing before it.
    const created = ext.context.waitForEvent('page');
    await ext.worker.evaluate(
      async () => void (await chrome.tabs.create({ url: 'http://fresh.tls.example.com/' })),
    );
    const fresh = await created;
    await expect.poll(() => fresh.url(), POLL).toMatch(/\/ui\/fallback\.html\?/);
    await fresh.waitForSelector('body[data-ready="true"]');
    const opened = ext.context.waitForEvent('page');
    await fresh.locator('#go-back').click();
    expect((await opened).url()).toMatch(/^chrome:\/\/new-?tab/);
    await expect.poll(() => fresh.isClosed(), POLL).toBe(true);
  });

  it('a page the handoff page opened over HTTPS stays; a failed one falls back', async () => {
    const good = await ext.context.newPage();
    await good.goto(`http://good.example.test.:${site.port}/dot`).catch(() => undefined);
    await expect.poll(() => good.url(), POLL).toBe(`https://good.example.test.:${site.port}/dot`);
    await new Promise((r) => setTimeout(r, WATCH_MS));
    expect(good.url()).toBe(`https://good.example.test.:${site.port}/dot`);
    expect(await good.locator('body').textContent()).toBe(`https good.example.test. /dot`);
    await good.close();
    const url = `http://tls.example.test.:${site.port}/dot`;
    const failed = await fallbackPage(url);
    await failed.locator('#http-once').click();
    await expect
      .poll(
        () =>
          failed
            .locator('body')
            .textContent()
            .catch(() => ''),
        POLL,
      )
      .toBe('plain http tls.example.test. /dot');
  });
});
