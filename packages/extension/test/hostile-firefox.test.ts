import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExtension } from '../src/packaging/build.js';
import { UI_PORT_NAME, type UiRequest } from '../src/protocol/ui-protocol.js';
import { writeRulesetsDir } from './support/e2e-site.js';
import { launchFirefoxWithExtension, type FirefoxTab, type FirefoxWithExtension } from './support/firefox.js';
import { FLOOD_HOST, HOSTILE_RULESETS, hostileHandler } from './support/hostile-site.js';
import { startDualServer, type DualServer } from './support/servers.js';

const POLL = { timeout: 15_000, interval: 100 };
const FLOOD = 300;
const HOSTS = ['evil.example.test', 'victim.example.test', 'lb.example.test', 'free.example.test', ...Array.from({ length: FLOOD }, (_, i) => FLOOD_HOST(i))];

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
  const at = (scheme: string, host: string, path = '/') => `${scheme}://${host}:${server.port}${path}`;
  const request = <T>(req: UiRequest) =>
    extPage.evaluate<T>(`new Promise((resolve) => {
      const port = browser.runtime.connect({ name: ${JSON.stringify(UI_PORT_NAME)} });
      port.onMessage.addListener((m) => { port.disconnect(); resolve(m.response); });
      port.postMessage({ id: 1, request: ${JSON.stringify(req)} });
    })`);
  const snapshot = async () => {
    const s = await request<Record<string, unknown>>({ type: 'settings' });
    const state = await extPage.evaluate<{ loopBlockedHosts: string[] }>(`browser.runtime.sendMessage({ type: 'getState' })`);
    const known = await request<{ count: number; thirdParty: number }>({ type: 'knownHosts' });
    return {
      protection: { settings: [s.globalEnabled, s.httpsFirst, s.disabledSites, s.httpAllowedSites], loop: state.loopBlockedHosts },
      known: known.count,
      thirdParty: known.thirdParty,
    };
  };
  type Snapshot = Awaited<ReturnType<typeof snapshot>>;
  const unchanged = async (before: Snapshot) => {
    await expect.poll(async () => (await snapshot()).protection, POLL).toEqual(before.protection);
    expect((await snapshot()).known).toBeGreaterThanOrEqual(before.known);
  };
  const landsOn = async (url: string): Promise<string> => {
    const tab = await firefox.newTab();
    await tab.start(url);
    await expect.poll(() => tab.evaluate<boolean>(`document.body?.textContent?.includes(' /') ?? false`).catch(() => false), POLL).toBe(true);
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
    const built = await buildExtension({ rulesets: [rulesDir], outDir, browsers: ['firefox'], zip: false });
    server = await startDualServer(hostileHandler(() => server.port));
    firefox = await launchFirefoxWithExtension(built.dirs.firefox as string, HOSTS);
    extPage = await firefox.newTab();
    await extPage.goto(`${firefox.extensionOrigin}/ui/popup.html`);
    for (let i = 0; i < 150 && (await request<{ httpsFirst?: boolean }>({ type: 'settings' }).catch(() => ({ httpsFirst: false }))).httpsFirst !== true; i++)
      await new Promise((r) => setTimeout(r, 100));
  });

  it('the victims are protected (control)', async () => {
    await victimsProtected();
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
    await tab.goto(at('https', 'evil.example.test', `/frames?ext=${encodeURIComponent(firefox.extensionOrigin)}&to=${encodeURIComponent(victim)}`));
    await new Promise((r) => setTimeout(r, 1500));
    await tab.close();
    // Even shown (as if it were reachable), a forged fallback page's buttons change nothing.
    const forgedUrl = `${firefox.extensionOrigin}/ui/interstitial.html?url=${encodeURIComponent(victim)}&reason=timeout&ticket=${'0'.repeat(32)}`;
    for (const id of ['http-once', 'http-always']) {
      const forged = await firefox.newTab();
      await forged.goto(forgedUrl);
      await expect.poll(() => forged.evaluate<boolean>(`document.body?.dataset.ready === 'true'`).catch(() => false), POLL).toBe(true);
      await forged.evaluate(`document.getElementById(${JSON.stringify(id)}).click()`);
      // The page asked (and was refused), then left for the address: upgraded as before.
      await expect.poll(() => forged.evaluate<string>('location.href').catch(() => ''), POLL).toBe(at('https', 'free.example.test', '/'));
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
      expect(await landsOn(at('https', 'evil.example.test', `/bounce?n=4&host=${host}`))).toBe(at('https', host, '/landed'));
    }
    await unchanged(before);
  });

  it('hundreds of third-party HTTPS subresources teach the known hosts at most a page’s share', async () => {
    const before = await snapshot();
    const tab = await firefox.newTab();
    await tab.start(at('http', 'evil.example.test', `/flood?n=${FLOOD}`));
    await expect.poll(() => tab.evaluate<number>('document.images.length').catch(() => 0), POLL).toBe(FLOOD);
    await expect.poll(() => tab.evaluate<boolean>('[...document.images].every((i) => i.complete)'), { timeout: 60_000, interval: 250 }).toBe(true);
    expect(new Set(server.log.filter((r) => r.host.endsWith('.flood.example.test') && r.secure).map((r) => r.host)).size).toBe(FLOOD);
    // Asked while the page is open: a busy machine may report the last answers after the tab closed.
    // Most of a page's share is learnt at once; a loaded machine may drop a late answer or two.
    await expect.poll(async () => (await snapshot()).thirdParty - before.thirdParty, POLL).toBeGreaterThanOrEqual(20);
    await tab.close();
    expect((await snapshot()).thirdParty - before.thirdParty).toBeLessThanOrEqual(24);
    await unchanged(before);
  });

  it('after every attack, the victims still end on HTTPS', async () => {
    await victimsProtected();
  });
});
