import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExtension } from '../src/build/build.js';
import { startDeadEndSite, type DeadEndSite } from './support/dead-end-site.js';
import { launchFirefoxWithExtension, type FirefoxTab, type FirefoxWithExtension } from './support/firefox.js';

const POLL = { timeout: 25_000, interval: 100 };
/** How long a loaded page is watched: longer than HTTPS-first's 3-second timer. */
const WATCH_MS = 4000;
const INTERSTITIAL = /^moz-extension:\/\/[^/]+\/ui\/interstitial\.html\?/;

/** The failure classes one port can show in Firefox (its names map to loopback, not its ports). */
const CASES = [
  { name: 'reset', host: 'reset.example.test' },
  { name: 'timeout', host: 'hang.example.test' },
  { name: 'TLS handshake', host: 'tls.example.test' },
  { name: 'www. twin failing too', host: 'twinfail.example.test' },
  { name: 'www. twin answering 404', host: 'twin404.example.test' },
];
const HOSTS = [
  ...CASES.map((c) => c.host),
  'www.twinfail.example.test',
  'www.twin404.example.test',
  'good.example.test',
  'back.tls.example.test',
  'fresh.tls.example.test',
];

/**
 * Never a dead end (issue 29), in Firefox ESR with its own HTTPS-First on: every failure class
 * ends on the fallback page, one click on "Continue to HTTP site" reaches the HTTP page, and
 * the page stays. Refused connections, DNS failures of the HTTPS host alone and certificate
 * errors need per-port name mapping or a strict certificate check: Chromium's test has them.
 */
describe('Firefox: an HTTP-only site is never a dead end', () => {
  let site: DeadEndSite;
  let firefox: FirefoxWithExtension;
  let extPage: FirefoxTab;
  let dir: string;
  const at = (scheme: string, host: string, path = '/') => `${scheme}://${host}:${site.port}${path}`;
  const href = (tab: FirefoxTab) => () => tab.evaluate<string>('location.href').catch(() => '');
  const text = (tab: FirefoxTab, selector: string) => () =>
    tab.evaluate<string>(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? ''`).catch(() => '');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'httpsify-ff-dead-ends-'));
    mkdirSync(join(dir, 'rules'));
    writeFileSync(join(dir, 'rules', 'other.xml'), '<ruleset name="Other"><target host="other.example.net"/><rule from="^http:" to="https:"/></ruleset>');
    const built = await buildExtension({ rulesets: [join(dir, 'rules')], outDir: join(dir, 'ext'), browsers: ['firefox'], zip: false });
    site = await startDeadEndSite();
    firefox = await launchFirefoxWithExtension(built.dirs.firefox!, HOSTS, { prefs: { 'dom.security.https_first': true } });
    extPage = await firefox.newTab();
    await extPage.goto(`${firefox.extensionOrigin}/ui/options.html`);
    const stored = () => extPage.evaluate<unknown>(`browser.storage.local.get('schemaVersion').then((o) => o.schemaVersion ?? null)`).catch(() => null);
    for (let i = 0; i < 150 && (await stored()) !== 1; i++) await new Promise((r) => setTimeout(r, 100));
    await extPage.evaluate(`browser.storage.local.set({ portalProbeUrl: ${JSON.stringify(at('http', 'good.example.test', '/success.txt'))} })`);
  });

  afterAll(async () => {
    await firefox?.close();
    await site?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function fallbackPage(url: string, given?: FirefoxTab): Promise<FirefoxTab> {
    const tab = given ?? (await firefox.newTab());
    await tab.start(url);
    await expect.poll(href(tab), POLL).toMatch(INTERSTITIAL);
    await expect.poll(() => tab.evaluate<string | undefined>('document.body.dataset.ready').catch(() => undefined), POLL).toBe('true');
    return tab;
  }

  it('every failure class reaches the HTTP page in one click, and the page stays', async () => {
    const tabs = await Promise.all(
      CASES.map(async (c) => {
        const url = at('http', c.host, '/page?q=1');
        const tab = await fallbackPage(url);
        if (c.host.startsWith('twin404')) {
          expect(await tab.evaluate<boolean>('document.querySelector("#twin").hidden')).toBe(true);
          expect(await text(tab, '#tried-list')()).toContain('answered with error 404, so it is not the site');
        }
        await tab.evaluate('void document.querySelector("#http-once").click()');
        await expect.poll(href(tab), POLL).toBe(url);
        await expect.poll(text(tab, 'body'), POLL).toBe(`plain http ${c.host} /page?q=1`);
        return { c, tab, url };
      }),
    );
    await new Promise((r) => setTimeout(r, WATCH_MS));
    for (const { c, tab, url } of tabs) {
      expect(await href(tab)(), c.name).toBe(url);
      await tab.close();
    }
  });

  it('"Go back" skips the failed attempt; with nothing before it, opens a new-tab page', async () => {
    const tab = await firefox.newTab();
    expect(await tab.goto(at('http', 'good.example.test', '/start'))).toBe(at('https', 'good.example.test', '/start'));
    await fallbackPage(at('http', 'back.tls.example.test'), tab);
    await tab.evaluate('void document.querySelector("#go-back").click()');
    await expect.poll(href(tab), POLL).toBe(at('https', 'good.example.test', '/start'));
    await tab.close();
    const fresh = await fallbackPage(at('http', 'fresh.tls.example.test'));
    // A tab that opened at the failing address has no page before it: a new-tab page takes its
    // place (the tab itself closes; one new tab opens).
    expect(await fresh.evaluate<number>('history.length')).toBe(2);
    const count = () => extPage.evaluate<number>('browser.tabs.query({}).then((t) => t.length)');
    const before = await count();
    await fresh.evaluate('void document.querySelector("#go-back").click()').catch(() => undefined);
    await expect
      .poll(
        () =>
          fresh.evaluate<string>('location.href').then(
            () => 'open',
            () => 'closed',
          ),
        POLL,
      )
      .toBe('closed');
    expect(await count()).toBe(before);
  });
});
