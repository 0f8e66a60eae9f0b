import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExtension } from '../src/packaging/build.js';
import { UI_PORT_NAME, type UiRequest } from '../src/protocol/ui-protocol.js';
import {
  launchFirefoxWithExtension,
  type FirefoxTab,
  type FirefoxWithExtension,
} from './support/firefox.js';
import { startProtectionSite, type ProtectionSite } from './support/protection-site.js';

const POLL = { timeout: 15_000, interval: 100 };
const HOSTS = [
  'works.example.test',
  'nossl.example.test',
  'bare.example.test',
  'www.bare.example.test',
  'cdn.example.test',
  'other.example.test',
  'hotel.example.test',
  'ruled.example.test',
  'www.ruled.example.test',
  'probe.example.test',
  'kept.example.test',
  'intranet',
];
const RULESET =
  '<ruleset name="Ruled Example"><target host="ruled.example.test"/><rule from="^http://ruled\\.example\\.test:" to="https://www.ruled.example.test:"/></ruleset>';
/** Its authors know /plain/ breaks over HTTPS; it rewrites only /ruled/ itself. */
const KEPT_RULESET =
  '<ruleset name="Kept Example"><target host="kept.example.test"/><exclusion pattern="^http://kept\\.example\\.test:\\d+/plain/"/><rule from="^http://kept\\.example\\.test:(\\d+)/ruled/" to="https://kept.example.test:$1/ruled/"/></ruleset>';
/** Rewrites the home page only: the fallback's HTTP probe asks for exactly that address. */
const NOSSL_HOME_RULESET =
  '<ruleset name="Nossl Home"><target host="nossl.example.test"/><rule from="^http://nossl\\.example\\.test:(\\d+)/$" to="https://nossl.example.test:$1/"/></ruleset>';
const DAY = 24 * 60 * 60 * 1000;

/**
 * The protection mode in Firefox ESR (blocking webRequest). All hosts share one local port
 * (Firefox maps names, not ports), so every upgrade keeps that port.
 */
describe('protection mode in Firefox', () => {
  let site: ProtectionSite;
  let firefox: FirefoxWithExtension;
  let tab: FirefoxTab;
  let extPage: FirefoxTab;
  let rulesDir: string;
  let outDir: string;
  const at = (scheme: string, host: string, path = '/') =>
    `${scheme}://${host}${host === 'intranet' ? '' : ''}:${site.port}${path}`;
  const request = <T>(req: UiRequest) =>
    extPage.evaluate<T>(`new Promise((resolve) => {
      const port = browser.runtime.connect({ name: ${JSON.stringify(UI_PORT_NAME)} });
      port.onMessage.addListener((m) => { port.disconnect(); resolve(m.response); });
      port.postMessage({ id: 1, request: ${JSON.stringify(req)} });
    })`);
  const tabStatus = async () => {
    const id = await extPage.evaluate<number>(
      `browser.tabs.query({}).then((ts) => ts.find((t) => t.url === ${JSON.stringify(await tab.evaluate<string>('location.href'))}).id)`,
    );
    return (await request<{ status: unknown }>({ type: 'popup', tabId: id })).status;
  };
  const href = () => tab.evaluate<string>('location.href').catch(() => '');
  const imagesDone = () =>
    expect
      .poll(
        () =>
          tab.evaluate<boolean>('[...document.images].every((i) => i.complete)').catch(() => false),
        POLL,
      )
      .toBe(true);

  beforeAll(async () => {
    rulesDir = mkdtempSync(join(tmpdir(), 'httpsify-prot-ff-rules-'));
    writeFileSync(join(rulesDir, 'ruled.xml'), RULESET);
    writeFileSync(join(rulesDir, 'kept.xml'), KEPT_RULESET);
    writeFileSync(join(rulesDir, 'nossl.xml'), NOSSL_HOME_RULESET);
    outDir = mkdtempSync(join(tmpdir(), 'httpsify-prot-ff-ext-'));
    const built = await buildExtension({
      rulesets: [rulesDir],
      outDir,
      browsers: ['firefox'],
      zip: false,
    });
    site = await startProtectionSite('cdn.example.test', 'other.example.test');
    firefox = await launchFirefoxWithExtension(built.dirs.firefox as string, HOSTS);
    tab = await firefox.newTab();
    extPage = await firefox.newTab();
    await extPage.goto(`${firefox.extensionOrigin}/ui/popup.html`);
    const deadline = Date.now() + POLL.timeout;
    while (
      Date.now() < deadline &&
      (await extPage.evaluate<unknown>(
        'browser.storage.local.get("schemaVersion").then((o) => o.schemaVersion ?? null)',
      )) === null
    )
      await new Promise((r) => setTimeout(r, 100));
    await extPage.evaluate(
      `browser.storage.local.set({ portalProbeUrl: ${JSON.stringify(`http://probe.example.test:${site.port}/success.txt`)} })`,
    );
  });

  afterAll(async () => {
    await firefox?.close();
    await site?.close();
    rmSync(rulesDir, { recursive: true, force: true });
    rmSync(outDir, { recursive: true, force: true });
  });

  it('is on by default and tells which ruleset or upgrade made a page secure', async () => {
    expect(await tab.goto(at('http', 'works.example.test', '/a?b=1'))).toBe(
      at('https', 'works.example.test', '/a?b=1'),
    );
    await expect.poll(tabStatus, POLL).toMatchObject({ secure: true, kind: 'https-by-upgrade' });
    expect(await tab.goto(at('http', 'ruled.example.test', '/r'))).toBe(
      at('https', 'www.ruled.example.test', '/r'),
    );
    await expect
      .poll(tabStatus, POLL)
      .toMatchObject({ secure: true, kind: 'https-by-ruleset', ruleset: 'Ruled Example' });
  });

  it('upgrades the subresources of an HTTP page to a host learned from a navigation; makes its cookies Secure', async () => {
    expect(await tab.goto(at('http', 'cdn.example.test', '/set-cookie'))).toBe(
      at('https', 'cdn.example.test', '/set-cookie'),
    );
    const cookies = () =>
      extPage.evaluate<string[]>(
        `browser.cookies.getAll({ domain: 'cdn.example.test' }).then((all) => all.map((c) => c.name + ':' + c.secure).sort())`,
      );
    await expect.poll(cookies, POLL).toEqual(['pref:true', 'sid:true']);
    await expect
      .poll(() => request<{ count: number }>({ type: 'knownHosts' }).then((r) => r.count), POLL)
      .toBeGreaterThanOrEqual(2);
    const before = site.log.length;
    expect(await tab.goto(at('http', 'intranet', '/'))).toBe(at('http', 'intranet', '/'));
    await imagesDone();
    const images = site.log.slice(before).filter((r) => r.path.startsWith('/pixel.png'));
    // Firefox may fetch an image twice (a reload of the cached page): what counts is which scheme each host saw.
    expect([...new Set(images.map((r) => `${r.host} ${r.secure}`))].sort()).toEqual([
      'cdn.example.test true',
      'other.example.test false',
    ]);
    await expect
      .poll(tabStatus, POLL)
      .toMatchObject({ secure: false, kind: 'http-no-rule', localAddress: true });
  });

  it('lets an expired entry go: the host is tried over HTTP again', async () => {
    await extPage.evaluate(
      `browser.storage.local.set({ knownHttpsHosts: { v: 1, hosts: [['cdn.example.test', ${Date.now() - 31 * DAY}]] } })`,
    );
    await expect
      .poll(() => request<{ count: number }>({ type: 'knownHosts' }).then((r) => r.count), POLL)
      .toBe(0);
    const before = site.log.length;
    await tab.goto(at('http', 'intranet', '/'));
    await imagesDone();
    expect(
      site.log
        .slice(before)
        .filter((r) => r.host === 'cdn.example.test')
        .map((r) => r.secure),
    ).toEqual([false]);
  });

  it('offers the www. host when the bare one has no HTTPS, without sending the path over HTTP', async () => {
    await tab.start(at('http', 'bare.example.test', '/private/page?token=1'));
    await expect.poll(href, POLL).toMatch(/fallback\.html/);
    // Offered as a choice, never followed on the user's behalf; one click reaches it.
    await expect
      .poll(
        () =>
          tab.evaluate<string>('document.querySelector("#twin-link").textContent').catch(() => ''),
        POLL,
      )
      .toBe('Try the secure site www.bare.example.test instead');
    await tab.evaluate('void document.querySelector("#twin-link").click()');
    await expect
      .poll(href, POLL)
      .toBe(at('https', 'www.bare.example.test', '/private/page?token=1'));
    expect(site.seen('bare.example.test').filter((s) => s.includes('/private'))).toEqual([]);
    expect(site.seen('www.bare.example.test')).toContain('HEAD https /');
  });

  it("leaves the address a ruleset excludes on HTTP, for the page and for a known host's images; upgrades the rest", async () => {
    const kept = (scheme: string, path: string) => at(scheme, 'kept.example.test', path);
    expect(await tab.goto(kept('http', '/plain/page?q=1'))).toBe(kept('http', '/plain/page?q=1'));
    expect(site.seen('kept.example.test').filter((s) => !s.includes('favicon'))).toEqual([
      'GET http /plain/page?q=1',
    ]);
    await expect
      .poll(tabStatus, POLL)
      .toMatchObject({ secure: false, kind: 'http-ruleset-excludes', ruleset: 'Kept Example' });
    // Another path of the same host: the mode upgrades it, and the host becomes known.
    expect(await tab.goto(kept('http', '/other'))).toBe(kept('https', '/other'));
    await expect.poll(tabStatus, POLL).toMatchObject({ secure: true, kind: 'https-by-upgrade' });
    // Its subresources on an HTTP page: the excluded one stays on HTTP, the others are upgraded.
    const before = site.log.length;
    const srcs = [
      kept('http', '/plain/pixel.png'),
      kept('http', '/other/pixel.png'),
      kept('http', '/ruled/pixel.png'),
    ];
    await tab.goto(
      at('http', 'intranet', `/embed?${srcs.map((s) => `src=${encodeURIComponent(s)}`).join('&')}`),
    );
    await imagesDone();
    await expect
      .poll(
        () =>
          [
            ...new Set(
              site.log
                .slice(before)
                .filter((r) => r.host === 'kept.example.test')
                .map((r) => `${r.secure ? 'https' : 'http'} ${r.path}`),
            ),
          ].sort(),
        POLL,
      )
      .toEqual(['http /plain/pixel.png', 'https /other/pixel.png', 'https /ruled/pixel.png']);
  });

  it('ends on the fallback page after a failed upgrade, with what was tried; only the host is asked over HTTP', async () => {
    await tab.start(at('http', 'nossl.example.test', '/secret/path?q=1'));
    await expect.poll(href, POLL).toMatch(/fallback\.html/);
    const params = new URL(await href()).searchParams;
    expect(params.get('url')).toBe(at('http', 'nossl.example.test', '/secret/path?q=1'));
    const tried = JSON.parse(params.get('tried') ?? '[]') as { url: string }[];
    expect(tried.map((t) => t.url)).toEqual([
      at('https', 'nossl.example.test'),
      at('https', 'www.nossl.example.test'),
    ]);
    // The probe asks http://host/ as sent: neither Firefox's default extension policy
    // (upgrade-insecure-requests) nor our own ruleset for the home page upgrades it.
    expect(params.get('http')).toBe('ok');
    expect(site.seen('nossl.example.test').filter((s) => / http /.test(s))).toEqual([
      'HEAD http /',
    ]);
    await expect
      .poll(
        () =>
          tab.evaluate<string>('document.querySelector("#http-probe").textContent').catch(() => ''),
        POLL,
      )
      .toContain('answers over plain HTTP');
  });

  it('behind a captive portal, the fallback page says so; only the click opens HTTP', async () => {
    await extPage.evaluate(
      `browser.storage.local.set({ portalProbeUrl: ${JSON.stringify(`http://probe.example.test:${site.port}/login`)} })`,
    );
    await tab.start(at('http', 'hotel.example.test', '/'));
    await expect.poll(href, POLL).toMatch(/fallback\.html/);
    // The portal check itself went out over plain HTTP, as a portal expects.
    expect(site.seen('probe.example.test')).toContain('GET http /login');
    await expect
      .poll(
        () =>
          tab
            .evaluate<string>('document.querySelector("#reason-text").textContent')
            .catch(() => ''),
        POLL,
      )
      .toContain('sign in first');
    // On such a network continuing holds for this tab only, and says so.
    expect(await tab.evaluate<string>('document.querySelector("#http-once").textContent')).toBe(
      'Continue to HTTP site in this tab',
    );
    await tab.evaluate('void document.querySelector("#http-once").click()');
    await expect.poll(href, POLL).toBe(at('http', 'hotel.example.test', '/'));
    // Another tab still gets HTTPS-first for the host (and its fallback page again).
    const other = await firefox.newTab();
    await other.start(at('http', 'hotel.example.test', '/other'));
    await expect
      .poll(() => other.evaluate<string>('location.href').catch(() => ''), POLL)
      .toMatch(/fallback\.html|^https:/);
    await other.close();
    // Whoever answers the probe relaxes nothing else: a host that speaks TLS is still upgraded.
    expect(await tab.goto(at('http', 'works.example.test', '/captive'))).toBe(
      at('https', 'works.example.test', '/captive'),
    );
  });
});
