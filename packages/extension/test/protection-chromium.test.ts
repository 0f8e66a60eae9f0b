import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchWithExtension, type LoadedExtension } from './support/browser.js';
import { startProtectionSite, type ProtectionSite } from './support/protection-site.js';
import { buildWithUi } from './support/ui-extension.js';

const POLL = { timeout: 15_000, interval: 100 };
const HOSTS = [
  'works.example.com',
  'nossl.example.com',
  'bare.example.org',
  'www.bare.example.org',
  'cdn.example.net',
  'other.example.net',
  'hotel.example.com',
  'ruled.example.com',
  'www.ruled.example.com',
  'probe.example.com',
  'intranet',
];
/** ruled.example.com has no TLS of its own: the ruleset knows its HTTPS lives on www. */
const RULESET =
  '<ruleset name="Ruled Example"><target host="ruled.example.com"/><rule from="^http://ruled\\.example\\.com/" to="https://www.ruled.example.com/"/></ruleset>';
/** Rewrites the home page only: the fallback's HTTP probe asks for exactly that address. */
const NOSSL_HOME_RULESET =
  '<ruleset name="Nossl Home"><target host="nossl.example.com"/><rule from="^http://nossl\\.example\\.com/$" to="https://nossl.example.com/"/></ruleset>';
const DAY = 24 * 60 * 60 * 1000;

/**
 * The protection mode in Chromium with its own HTTPS-Upgrades ON, as users have it: hosts look
 * public (Chromium does not upgrade `.test` names) and are reached on ports 80/443, mapped to one
 * local server. Chromium upgrades navigations itself before our rules see them and falls back
 * to HTTP with the full path; what we check is what the user gets on top of that.
 */
describe('protection mode in Chromium with HTTPS-Upgrades on', () => {
  let site: ProtectionSite;
  let ext: LoadedExtension;
  let page: Page;
  let rulesDir: string;
  let outDir: string;
  const worker = <T, A>(fn: (arg: A) => Promise<T>, arg: A): Promise<T> =>
    ext.worker.evaluate(fn as (arg: unknown) => Promise<T>, arg as unknown);
  const stored = (key: string) => worker(async (k) => (await chrome.storage.local.get(k))[k], key);
  const tabId = () =>
    worker(
      async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id ?? -1,
      page.url(),
    );
  /** The popup's status line for the tab, as the background computes it. */
  const status = async () =>
    worker(
      async (id) => {
        const c = await (
          globalThis as unknown as {
            httpsifyUi: {
              controller: Promise<{ pageStatus(t: number, u: string | undefined): unknown }>;
            };
          }
        ).httpsifyUi.controller;
        return c.pageStatus(id, (await chrome.tabs.get(id)).url);
      },
      await tabId(),
    );
  const visit = (url: string) => page.goto(url).catch(() => undefined);

  beforeAll(async () => {
    rulesDir = mkdtempSync(join(tmpdir(), 'httpsify-prot-rules-'));
    writeFileSync(join(rulesDir, 'ruled.xml'), RULESET);
    writeFileSync(join(rulesDir, 'nossl.xml'), NOSSL_HOME_RULESET);
    outDir = mkdtempSync(join(tmpdir(), 'httpsify-prot-ext-'));
    const built = await buildWithUi([rulesDir], outDir);
    site = await startProtectionSite('cdn.example.net', 'other.example.net');
    const rules = HOSTS.flatMap((h) =>
      h === 'intranet'
        ? [`MAP ${h} 127.0.0.1:${site.port}`]
        : [`MAP ${h}:80 127.0.0.1:${site.port}`, `MAP ${h}:443 127.0.0.1:${site.port}`],
    );
    ext = await launchWithExtension(built.dirs.chromium as string, [], {
      browserUpgrades: true,
      resolverRules: rules,
    });
    for (let i = 0; i < 150 && (await stored('schemaVersion')) === undefined; i++)
      await new Promise((r) => setTimeout(r, 100));
    await worker(
      async () =>
        chrome.storage.local.set({ portalProbeUrl: 'http://probe.example.com/success.txt' }),
      null,
    );
    page = await ext.context.newPage();
  });

  afterAll(async () => {
    await ext?.close();
    await site?.close();
    rmSync(rulesDir, { recursive: true, force: true });
    rmSync(outDir, { recursive: true, force: true });
  });

  it('is on by default; a ruleset still takes a host to its own HTTPS address', async () => {
    expect(await stored('httpsFirst')).toBeUndefined();
    await visit('http://works.example.com/a?b=1');
    expect(page.url()).toBe('https://works.example.com/a?b=1');
    // Chromium upgraded this navigation before any extension saw it (webRequest and DNR only
    // see the https:// request); the popup credits the browser, not us. Firefox's test sees our
    // upgrade.
    expect(await status()).toMatchObject({ secure: true, kind: 'https-by-browser' });
    // Chromium tries https://ruled.example.com itself, fails, falls back to HTTP: the ruleset
    // takes that request to its own HTTPS host before it leaves the browser.
    await visit('http://ruled.example.com/r');
    expect(page.url()).toBe('https://www.ruled.example.com/r');
    expect(site.seen('ruled.example.com')).toEqual([]);
    expect(await status()).toMatchObject({
      secure: true,
      kind: 'https-by-ruleset',
      ruleset: 'Ruled Example',
    });
  });

  it('upgrades the subresources of an HTTP page to a host learned from a navigation; makes its cookies Secure', async () => {
    await visit('http://cdn.example.net/set-cookie');
    expect(page.url()).toBe('https://cdn.example.net/set-cookie');
    await expect
      .poll(
        () =>
          worker(
            async () =>
              (await chrome.declarativeNetRequest.getSessionRules())
                .filter((r) => r.priority === 2)
                .flatMap((r) => r.condition.requestDomains ?? []),
            null,
          ),
        POLL,
      )
      .toContain('cdn.example.net');
    // NoScript-style: the cookie set without Secure by a known HTTPS host is now Secure.
    await expect
      .poll(
        () =>
          worker(
            async () =>
              (await chrome.cookies.getAll({ domain: 'cdn.example.net' }))
                .map((c) => `${c.name}:${c.secure}`)
                .sort(),
            null,
          ),
        POLL,
      )
      .toEqual(['pref:true', 'sid:true']);
    // A single-label intranet page stays on HTTP; its image from the known host does not.
    await visit('http://intranet/');
    expect(page.url()).toBe('http://intranet/');
    await page.waitForFunction(() => Array.from(document.images).every((i) => i.complete));
    expect(
      site
        .seen('cdn.example.net')
        .filter((s) => s.includes('/pixel.png'))
        .map((s) => s.split('?')[0]),
    ).toEqual(['GET https /pixel.png']);
    expect(site.seen('other.example.net').map((s) => s.split('?')[0])).toEqual([
      'GET http /pixel.png',
    ]);
    expect(await status()).toMatchObject({
      secure: false,
      kind: 'http-no-rule',
      localAddress: true,
    });
  });

  it('lets an expired entry go: the host is tried over HTTP again', async () => {
    // As another window of the profile (or a restored profile) would leave it: seen 31 days ago.
    await worker(
      async (old) =>
        chrome.storage.local.set({ knownHttpsHosts: { v: 1, hosts: [['cdn.example.net', old]] } }),
      Date.now() - 31 * DAY,
    );
    await expect
      .poll(
        () =>
          worker(
            async () =>
              (await chrome.declarativeNetRequest.getSessionRules()).filter((r) => r.priority === 2)
                .length,
            null,
          ),
        POLL,
      )
      .toBe(0);
    // The store itself no longer holds it.
    await expect.poll(() => stored('knownHttpsHosts'), POLL).toEqual({ v: 1, hosts: [] });
    const before = site.log.length;
    await visit('http://intranet/');
    await page.waitForFunction(() => Array.from(document.images).every((i) => i.complete));
    expect(
      site.log
        .slice(before)
        .filter((r) => r.host === 'cdn.example.net')
        .map((r) => r.secure),
    ).toEqual([false]);
  });

  it('offers the www. host when the bare one has no HTTPS, without sending the path over HTTP', async () => {
    await visit('http://bare.example.org/private/page?token=1');
    await expect.poll(() => page.url(), POLL).toMatch(/fallback\.html/);
    await page.waitForSelector('body[data-ready="true"]');
    // Offered as a choice, never followed on the user's behalf; one click reaches it.
    const link = page.locator('#twin-link');
    expect(await link.textContent()).toBe('Try the secure site www.bare.example.org instead');
    await link.click();
    await expect
      .poll(() => page.url(), POLL)
      .toBe('https://www.bare.example.org/private/page?token=1');
    expect(await page.locator('body').textContent()).toContain(
      'https www.bare.example.org /private/page?token=1',
    );
    // The bare host never saw the path over plain HTTP; the twin was probed at its origin only.
    expect(site.seen('bare.example.org').filter((s) => s.includes('/private'))).toEqual([]);
    expect(site.seen('www.bare.example.org')).toContain('HEAD https /');
  });

  it('ends on the fallback page after a failed upgrade, with what was tried; HTTP probe sends only the host', async () => {
    await visit('http://nossl.example.com/secret/path?q=1');
    await expect.poll(() => page.url(), POLL).toMatch(/fallback\.html/);
    const params = new URL(page.url()).searchParams;
    expect(params.get('url')).toBe('http://nossl.example.com/secret/path?q=1');
    const tried = JSON.parse(params.get('tried') ?? '[]') as { url: string; result: string }[];
    expect(tried.map((t) => t.url)).toEqual([
      'https://nossl.example.com/',
      'https://www.nossl.example.com/',
    ]);
    expect(params.get('http')).toBe('ok');
    // The page lists the attempts in words, and that the site answers over plain HTTP.
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.locator('#tried-list li').allTextContents()).toEqual([
      expect.stringMatching(/^https:\/\/nossl\.example\.com\/ — /),
      expect.stringMatching(/^https:\/\/www\.nossl\.example\.com\/ — /),
    ]);
    expect(await page.locator('#http-probe').textContent()).toBe(
      'The site answers over plain HTTP (asked for its address only, not this page).',
    );
    // Chromium's own fallback would have sent the full path over HTTP: ours never left the browser.
    expect(
      site
        .seen('nossl.example.com')
        .filter((s) => s.startsWith('GET http ') || s.startsWith('HEAD http ')),
    ).toEqual(['HEAD http /']);
  });

  it('options: known sites, per-site states, the HttpAllowlist policy both ways, channel by address', async () => {
    const o = await ext.context.newPage();
    const id = new URL(ext.worker.url()).host;
    await o.goto(`chrome-extension://${id}/ui/options.html`);
    await o.waitForSelector('body[data-ready="true"]');
    await expect
      .poll(() => o.locator('#known-hosts-text').textContent(), POLL)
      .toMatch(/^(1 site has|([2-9]|\d{2,}) sites have) worked over HTTPS/);
    // Import Chrome's policy JSON: [*.]x is the host and its subdomains.
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-policy-'));
    const file = join(dir, 'policy.json');
    writeFileSync(file, JSON.stringify(['[*.]legacy.example.com', 'printer.example.net']));
    await o.locator('#allowlist-import').setInputFiles(file);
    await expect
      .poll(() => stored('httpAllowedSites'), POLL)
      .toEqual(['*.legacy.example.com', 'legacy.example.com', 'printer.example.net']);
    expect(await o.locator('#allowlist-result').textContent()).toBe('3 entries added.');
    // A bad list changes nothing and says which item is wrong.
    writeFileSync(file, JSON.stringify(['ok.example.com', '*']));
    await o.locator('#allowlist-import').setInputFiles(file);
    await expect
      .poll(() => o.locator('#allowlist-problems li').allTextContents(), POLL)
      .toEqual(['item 2: "*" would allow HTTP everywhere; turn the protection off instead']);
    expect(await o.locator('#allowlist-result').textContent()).toBe(
      'Nothing was imported: some entries of policy.json are not sites httpsify can allow. Correct them in the file and import it again, or add the sites by hand below.',
    );
    // Not a policy at all: a sentence, the parser's message under "Details".
    writeFileSync(file, '{"not": "a list"');
    await o.locator('#allowlist-import').setInputFiles(file);
    await expect
      .poll(() => o.locator('#allowlist-result > span').textContent(), POLL)
      .toMatch(/^Nothing was imported: policy\.json is not a Chrome HttpAllowlist policy/);
    expect(await o.locator('#allowlist-result details code').textContent()).toMatch(/^not JSON: /);
    expect(await o.locator('#allowlist-problems li').count()).toBe(0);
    expect(await stored('httpAllowedSites')).toEqual([
      '*.legacy.example.com',
      'legacy.example.com',
      'printer.example.net',
    ]);
    // Three states per site: "printer" goes to off, then back to everything.
    await o.getByLabel('Setting for printer.example.net').selectOption('off');
    await expect.poll(() => stored('disabledSites'), POLL).toEqual(['printer.example.net']);
    await o.getByLabel('Setting for printer.example.net').selectOption('upgrade');
    await expect
      .poll(async () => [await stored('disabledSites'), await stored('httpAllowedSites')], POLL)
      .toEqual([[], ['*.legacy.example.com', 'legacy.example.com']]);
    // Export in the policy's own syntax.
    const download = o.waitForEvent('download');
    await o.locator('#allowlist-export').click();
    expect(JSON.parse(readFileSync(await (await download).path(), 'utf8'))).toEqual([
      '[*.]legacy.example.com',
    ]);
    // A channel given by an address that is not https:// is refused with a reason.
    await o.locator('#channel-definition').fill('http://channels.example.com/x.channel.json');
    await o.locator('#channel-add').click();
    await expect
      .poll(() => o.locator('#channel-add-error > span').textContent(), POLL)
      .toBe(
        'The address must start with https://, so that nobody can change the definition on its way. Ask the publisher for that address.',
      );
    expect(await o.locator('#channel-add-error details code').textContent()).toBe(
      'the address must start with https://',
    );
    rmSync(dir, { recursive: true, force: true });
    await o.close();
  });

  it('behind a captive portal, the fallback page says so; only the click opens HTTP', async () => {
    await worker(
      async () => chrome.storage.local.set({ portalProbeUrl: 'http://probe.example.com/login' }),
      null,
    );
    const before = await worker(
      async () => (await chrome.declarativeNetRequest.getDynamicRules()).length,
      null,
    );
    await visit('http://hotel.example.com/');
    await expect.poll(() => page.url(), POLL).toMatch(/fallback\.html/);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.locator('#reason-text').textContent()).toContain('sign in first');
    // Whoever answers the probe relaxes nothing: every rule is still in place.
    expect(
      await worker(async () => (await chrome.declarativeNetRequest.getDynamicRules()).length, null),
    ).toBe(before);
    // On such a network continuing holds for this tab only, and says so.
    expect(await page.locator('#http-once').textContent()).toBe(
      'Continue to HTTP site in this tab',
    );
    await page.locator('#http-once').click();
    await expect.poll(() => page.url(), POLL).toBe('http://hotel.example.com/');
    expect(await page.locator('body').textContent()).toContain('http hotel.example.com /');
    // Another tab still gets HTTPS-first for the host (and its fallback page again).
    const other = await ext.context.newPage();
    await other.goto('http://hotel.example.com/other').catch(() => undefined);
    await expect.poll(() => other.url(), POLL).toMatch(/fallback\.html|^https:/);
    await other.close();
    // In the first tab the host stays on HTTP.
    await visit('http://hotel.example.com/again');
    await expect.poll(() => page.url(), POLL).toBe('http://hotel.example.com/again');
  });

  it("a tab's own choice goes with the tab, also when the tab closes while the worker sleeps", async () => {
    // The choice the sign-in page makes, granted through the test handle for a tab of its own.
    const tab = await ext.context.newPage();
    await tab.goto('about:blank');
    const liveWorker = async () =>
      ext.context.serviceWorkers().at(-1) ?? (await ext.context.waitForEvent('serviceworker'));
    const tabId = await (
      await liveWorker()
    ).evaluate(
      async () => (await chrome.tabs.query({ active: true, lastFocusedWindow: true }))[0]?.id ?? -1,
    );
    await (
      await liveWorker()
    ).evaluate(async (id) => {
      type Ui = {
        controller: Promise<{
          allowHttpOnceInTab(t: number, h: string): Promise<void>;
          httpOnceTabs: [number, string][];
        }>;
      };
      const c = await (globalThis as unknown as { httpsifyUi: Ui }).httpsifyUi.controller;
      await c.allowHttpOnceInTab(id, 'sleepy.example.com');
      await chrome.storage.session.set({ uiHttpOnceTabs: c.httpOnceTabs });
    }, tabId);
    const held = async () =>
      (await liveWorker()).evaluate(async (id) => {
        const stored = ((await chrome.storage.session.get('uiHttpOnceTabs')).uiHttpOnceTabs ??
          []) as [number, string][];
        const rules = await chrome.declarativeNetRequest.getSessionRules();
        return (
          stored.some(([t]) => t === id) ||
          rules.some((r) => r.condition.tabIds?.includes(id) === true)
        );
      }, tabId);
    expect(await held()).toBe(true);
    // The worker is stopped; closing the tab wakes it, and it starts by restoring the session.
    const cdp = await ext.context.newCDPSession(await ext.context.newPage());
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    await new Promise((r) => setTimeout(r, 500));
    await tab.close();
    await expect.poll(held, POLL).toBe(false);
  });
});
