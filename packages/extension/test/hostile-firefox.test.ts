import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExtension } from '../src/packaging/build.js';
import { UI_PORT_NAME, type UiRequest } from '../src/protocol/ui-protocol.js';
import { writeRulesetsDir } from './support/e2e-site.js';
import {
  launchFirefoxWithExtension,
  type FirefoxTab,
  type FirefoxWithExtension,
} from './support/firefox.js';
import {
  FLOOD_HOST,
  HOSTILE_RULESETS,
  NAV_HOST,
  hostileHandler,
  openRedirect,
} from './support/hostile-site.js';
import { startDualServer, type DualServer } from './support/servers.js';

const POLL = { timeout: 15_000, interval: 100 };
const FLOOD = 300;
/** Answering hosts one window is sent to, one after the other (the page's time bounds how many). */
const NAVS = 1500;
const HOSTS = [
  'evil.example.test',
  'victim.example.test',
  'lb.example.test',
  'free.example.test',
  'off.example.test',
  ...Array.from({ length: FLOOD }, (_, i) => FLOOD_HOST(i)),
  ...Array.from({ length: NAVS }, (_, i) => NAV_HOST(i)),
];

/**
 * Firefox ESR, attacked as a website would (blocking webRequest: no handoff page here): after
 * each attack the settings, the loop guard and the known hosts are as before, and the victims'
 * pages still end on HTTPS (also the one only HTTPS-first upgrades, which "open over HTTP this
 * time" would have left on HTTP).
 */
describe('Firefox: a hostile page cannot relax protection', () => {
  let server: DualServer;
  let firefox: FirefoxWithExtension;
  let extPage: FirefoxTab;
  const dirs: string[] = [];
  const at = (scheme: string, host: string, path = '/') =>
    `${scheme}://${host}:${server.port}${path}`;
  const request = <T>(req: UiRequest) =>
    extPage.evaluate<T>(`new Promise((resolve) => {
      const port = browser.runtime.connect({ name: ${JSON.stringify(UI_PORT_NAME)} });
      port.onMessage.addListener((m) => { port.disconnect(); resolve(m.response); });
      port.postMessage({ id: 1, request: ${JSON.stringify(req)} });
    })`);
  const snapshot = async () => {
    const s = await request<Record<string, unknown>>({ type: 'settings' });
    const state = await extPage.evaluate<{ loopBlockedHosts: string[] }>(
      `browser.runtime.sendMessage({ type: 'getState' })`,
    );
    const known = await request<{ count: number; thirdParty: number }>({ type: 'knownHosts' });
    // What the store holds (written in batches: a poll waits for the last one).
    const stored = await extPage.evaluate<{ hosts?: [string, number, number?][] } | undefined>(
      `browser.storage.local.get('knownHttpsHosts').then((o) => o.knownHttpsHosts)`,
    );
    return {
      protection: {
        settings: [s.globalEnabled, s.httpsFirst, s.disabledSites, s.httpAllowedSites],
        loop: state.loopBlockedHosts,
      },
      known: known.count,
      thirdParty: known.thirdParty,
      visited: (stored?.hosts ?? [])
        .filter((h) => h[2] !== 0)
        .map((h) => h[0])
        .sort(),
    };
  };
  type Snapshot = Awaited<ReturnType<typeof snapshot>>;
  /** Protection as before, no visited host lost (the store's batch write is polled). */
  const unchanged = async (before: Snapshot) => {
    await expect.poll(async () => (await snapshot()).protection, POLL).toEqual(before.protection);
    expect((await snapshot()).known).toBeGreaterThanOrEqual(before.known);
    // Visited hosts go only when the user's own navigation fails: give a wrong forget time to land.
    await new Promise((r) => setTimeout(r, 2500));
    await expect
      .poll(async () => (await snapshot()).visited, POLL)
      .toEqual(expect.arrayContaining(before.visited));
  };
  /** Clicks the page's #go (with a user's activation: one window may open), waits for it to finish. */
  const walk = async (query: string, timeout = 60_000) => {
    const tab = await firefox.newTab();
    await tab.goto(at('https', 'evil.example.test', `/walk?${query}`));
    await tab.evaluate(`document.getElementById('go').click()`, { userActivation: true });
    await expect
      .poll(
        () => tab.evaluate<boolean>(`document.body.dataset.done === 'true'`).catch(() => false),
        { timeout, interval: 250 },
      )
      .toBe(true);
    const sent = await tab.evaluate<number>('Number(document.body.dataset.sent)');
    await tab.close();
    return sent;
  };
  const landsOn = async (url: string): Promise<string> => {
    const tab = await firefox.newTab();
    await tab.start(url);
    await expect
      .poll(
        () =>
          tab
            .evaluate<boolean>(`document.body?.textContent?.includes(' /') ?? false`)
            .catch(() => false),
        POLL,
      )
      .toBe(true);
    const final = await tab.evaluate<string>('location.href');
    await tab.close();
    return final;
  };
  const victimsProtected = async () => {
    for (const host of ['victim.example.test', 'lb.example.test', 'free.example.test'])
      expect(await landsOn(at('http', host, '/after'))).toBe(at('https', host, '/after'));
  };

  beforeAll(async () => {
    const rulesDir = writeRulesetsDir(HOSTILE_RULESETS, 'httpsify-hostile-ff-rules-');
    const outDir = mkdtempSync(join(tmpdir(), 'httpsify-hostile-ff-ext-'));
    dirs.push(rulesDir, outDir);
    const built = await buildExtension({
      rulesets: [rulesDir],
      outDir,
      browsers: ['firefox'],
      zip: false,
    });
    server = await startDualServer(hostileHandler(() => server.port));
    firefox = await launchFirefoxWithExtension(built.dirs.firefox as string, HOSTS);
    extPage = await firefox.newTab();
    await extPage.goto(`${firefox.extensionOrigin}/ui/popup.html`);
    for (
      let i = 0;
      i < 150 &&
      (
        await request<{ httpsFirst?: boolean }>({ type: 'settings' }).catch(() => ({
          httpsFirst: false,
        }))
      ).httpsFirst !== true;
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
  });

  it('the victims are protected, and known once visited (control)', async () => {
    await victimsProtected();
    await expect
      .poll(async () => (await snapshot()).visited, POLL)
      .toEqual(expect.arrayContaining(['free.example.test', 'victim.example.test']));
  });

  afterAll(async () => {
    await firefox?.close();
    await server?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('frames, opens and navigates to every extension page with parameters of its choosing', async () => {
    const before = await snapshot();
    const victim = at('http', 'free.example.test', '/');
    const tab = await firefox.newTab();
    await tab.goto(
      at(
        'https',
        'evil.example.test',
        `/frames?ext=${encodeURIComponent(firefox.extensionOrigin)}&to=${encodeURIComponent(victim)}`,
      ),
    );
    await new Promise((r) => setTimeout(r, 1500));
    await tab.close();
    // Even shown (as if it were reachable), a forged fallback page's buttons change nothing.
    const forgedUrl = `${firefox.extensionOrigin}/ui/fallback.html?url=${encodeURIComponent(victim)}&reason=timeout&ticket=${'0'.repeat(32)}`;
    for (const id of ['http-once', 'http-always']) {
      const forged = await firefox.newTab();
      await forged.goto(forgedUrl);
      await expect
        .poll(
          () =>
            forged.evaluate<boolean>(`document.body?.dataset.ready === 'true'`).catch(() => false),
          POLL,
        )
        .toBe(true);
      await forged.evaluate(`document.getElementById(${JSON.stringify(id)}).click()`);
      // The page asked (and was refused), then left for the address: upgraded as before.
      await expect
        .poll(() => forged.evaluate<string>('location.href').catch(() => ''), POLL)
        .toBe(at('https', 'free.example.test', '/'));
      await forged.close();
    }
    await unchanged(before);
  });

  it('navigating to the same URL again and again is no loop', async () => {
    const before = await snapshot();
    const tab = await firefox.newTab();
    for (let i = 0; i < 6; i++) {
      await tab.start(at('http', 'free.example.test', '/again'));
      await tab.start(at('http', 'victim.example.test', '/again'));
    }
    await tab.close();
    await unchanged(before);
  });

  it("redirect chains through another host's HTTPS ending on a victim's HTTP URL are no loop", async () => {
    const before = await snapshot();
    for (const host of ['victim.example.test', 'free.example.test']) {
      expect(await landsOn(at('https', 'evil.example.test', `/bounce?n=4&host=${host}`))).toBe(
        at('https', host, '/landed'),
      );
    }
    await unchanged(before);
  });

  it('hundreds of third-party HTTPS subresources teach the known hosts at most a page’s share', async () => {
    const before = await snapshot();
    const tab = await firefox.newTab();
    await tab.start(at('http', 'evil.example.test', `/flood?n=${FLOOD}`));
    await expect
      .poll(() => tab.evaluate<number>('document.images.length').catch(() => 0), POLL)
      .toBe(FLOOD);
    await expect
      .poll(() => tab.evaluate<boolean>('[...document.images].every((i) => i.complete)'), {
        timeout: 60_000,
        interval: 250,
      })
      .toBe(true);
    expect(
      new Set(
        server.log
          .filter((r) => r.host.endsWith('.flood.example.test') && r.secure)
          .map((r) => r.host),
      ).size,
    ).toBe(FLOOD);
    // Asked while the page is open: a busy machine may report the last answers after the tab closed.
    // Most of a page's share is learnt at once; a loaded machine may drop a late answer or two.
    await expect
      .poll(async () => (await snapshot()).thirdParty - before.thirdParty, POLL)
      .toBeGreaterThanOrEqual(20);
    await tab.close();
    expect((await snapshot()).thirdParty - before.thirdParty).toBeLessThanOrEqual(24);
    await unchanged(before);
  });

  /** A victim's open redirect (`/redir?to=`), driven in every shape a page can write. */
  const openRedirectShapes = (host: string): string[] => {
    const p = server.port;
    const http = (path: string, h = host) => `http://${h}:${p}${path}`;
    const nest = (levels: number, last: string, wrap: (to: string) => string) => {
      let to = last;
      for (let i = 0; i < levels; i++) to = wrap(to);
      return to;
    };
    const self = (to: string) => http(`/redir?to=${encodeURIComponent(to)}`);
    return [
      // Nested: each hop is the host's HTTPS answer sending the chain to another of its HTTP URLs.
      openRedirect(host, p, nest(5, http('/landed'), self)),
      // Through another host's open redirect between the victim's hops.
      openRedirect(
        host,
        p,
        nest(5, http('/landed'), (to) => openRedirect('evil.example.test', p, self(to))),
      ),
      // With fragments, and with the host and port spelled other ways (upper case, leading zeros).
      openRedirect(
        host,
        p,
        nest(5, `${http('/landed')}#f`, (to) => `${self(to)}#frag`),
      ),
      openRedirect(
        host,
        p,
        nest(
          5,
          http('/landed'),
          (to) => `http://${host.toUpperCase()}:0${p}/redir?to=${encodeURIComponent(to)}`,
        ),
      ),
      // The same redirect back to the same URL, over and over (the URL is not the redirect's own).
      openRedirect(
        host,
        p,
        nest(5, http('/landed'), () => self(http('/landed'))),
      ),
    ];
  };

  it("a victim's open redirect, in every shape, is no loop", async () => {
    const before = await snapshot();
    for (const host of ['victim.example.test', 'free.example.test']) {
      for (const shape of openRedirectShapes(host))
        expect(await landsOn(shape), shape).toMatch(
          new RegExp(`^${at('https', host, '/landed')}(#.*)?$`),
        );
      // A page sending one window through it again and again: each round ends on HTTPS.
      const again = openRedirect(host, server.port, at('http', host, '/landed'));
      expect(
        await walk(
          `urls=${encodeURIComponent(JSON.stringify([again, again, again, again]))}&gap=1500`,
        ),
      ).toBe(4);
    }
    await unchanged(before);
    await victimsProtected();
  });

  it('a page sending a window to every port of a visited host makes the extension forget nothing', async () => {
    const before = await snapshot();
    expect(before.visited).toEqual(
      expect.arrayContaining(['free.example.test', 'victim.example.test']),
    );
    const ports = [
      80,
      443,
      8080,
      8443,
      1080,
      3000,
      9,
      server.port + 1,
      server.port === 65535 ? 1 : 65535,
    ];
    const urls = ports.flatMap((p) => [
      `http://free.example.test:${p}/`,
      `http://victim.example.test:${p}/x`,
    ]);
    expect(await walk(`urls=${encodeURIComponent(JSON.stringify(urls))}&gap=1500`, 120_000)).toBe(
      urls.length,
    );
    await unchanged(before);
    await victimsProtected();
  });

  it('a page sending a window to hundreds of answering hosts teaches no visit, and at most its share', async () => {
    const before = await snapshot();
    // Bounded in time by the page itself: as many as it manages in 30 s.
    const sent = await walk(`flood=${NAVS}&ms=30000&gap=1000`, 120_000);
    console.log(`Firefox: one page sent a window to ${sent} answering hosts`);
    expect(sent).toBeGreaterThan(50);
    const landed = new Set(
      server.log
        .filter((r) => r.host.endsWith('.nav.example.test') && r.secure && r.path === '/nav-landed')
        .map((r) => r.host),
    );
    expect(landed.size).toBeGreaterThan(50);
    expect((await snapshot()).visited.filter((h) => h.endsWith('.nav.example.test'))).toEqual([]);
    expect((await snapshot()).thirdParty - before.thirdParty).toBeLessThanOrEqual(96);
    await unchanged(before);
  });

  it('a page combining them changes nothing either', async () => {
    const before = await snapshot();
    const p = server.port;
    const urls = [
      ...openRedirectShapes('victim.example.test').slice(0, 2),
      `http://free.example.test:${p + 1}/`,
      `http://free.example.test:80/`,
      // A dozen fresh hosts among the rest (the flood above sends hundreds on their own).
      ...Array.from({ length: 12 }, (_, i) => `http://${NAV_HOST(NAVS - 1 - i)}:${p}/nav-landed`),
      openRedirect(
        'free.example.test',
        p,
        `http://free.example.test:${p}/redir?to=${encodeURIComponent(`http://free.example.test:${p}/landed`)}`,
      ),
      `http://victim.example.test:443/`,
    ];
    expect(await walk(`urls=${encodeURIComponent(JSON.stringify(urls))}&gap=1500`, 180_000)).toBe(
      urls.length,
    );
    expect((await snapshot()).visited.filter((h) => h.endsWith('.nav.example.test'))).toEqual([]);
    await unchanged(before);
    await victimsProtected();
  });

  it("a page's own request is decided by its own page, not by a navigation it started and stopped", async () => {
    await request({ type: 'siteAdd', list: 'disabledSites', entry: 'off.example.test' });
    await expect
      .poll(async () => (await snapshot()).protection.settings[2], POLL)
      .toEqual(['off.example.test']);
    const probe = `/probe-${Date.now()}.gif`;
    const tab = await firefox.newTab();
    // An http:// page (at a loopback address HTTPS-first leaves alone) starts a navigation to the
    // switched-off site, stops it, then loads an image from a ruleset-covered site.
    await tab.goto(
      `http://127.0.0.1:${server.port}/stopper?off=${encodeURIComponent(at('http', 'off.example.test', '/slow'))}&probe=${encodeURIComponent(at('http', 'victim.example.test', probe))}`,
    );
    await expect
      .poll(
        () => tab.evaluate<boolean>(`document.body.dataset.done === 'true'`).catch(() => false),
        POLL,
      )
      .toBe(true);
    expect(await tab.evaluate<string>('location.href')).toMatch(/^http:\/\/127\.0\.0\.1:/);
    await tab.close();
    expect(
      server.log
        .filter((r) => r.path === probe)
        .map((r) => `${r.secure ? 'https' : 'http'}://${r.host}`),
    ).toEqual(['https://victim.example.test']);
    await request({ type: 'siteRemove', list: 'disabledSites', entry: 'off.example.test' });
    await expect.poll(async () => (await snapshot()).protection.settings[2], POLL).toEqual([]);
  });

  it('after every attack, the victims still end on HTTPS', async () => {
    await victimsProtected();
  });
});
