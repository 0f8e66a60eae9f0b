import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchFirefoxWithExtension, type FirefoxWithExtension } from './support/firefox.js';
import { startDualServer, type DualServer } from './support/servers.js';

/**
 * Real Firefox ESR: the background is an event page. Once it has idled out, the navigation that
 * wakes it must be decided with the user's settings like any other (it was answered over the
 * bundled rulesets alone, HTTPS-first off, before they were read). The idle timeout is 1 s
 * instead of Firefox's 30 s to keep the test quick; HTTPSIFY_DEFAULT_IDLE=1 waits the real one.
 */
const BUILT = new URL('../build/firefox', import.meta.url).pathname;
const DEFAULT_IDLE = process.env.HTTPSIFY_DEFAULT_IDLE === '1';
const HOSTS = ['plain.example.test', 'plain2.example.test'];

describe('Firefox: the navigation that wakes the event page', () => {
  let server: DualServer;
  let firefox: FirefoxWithExtension;
  const at = (scheme: string, host: string, path = '/') =>
    `${scheme}://${host}:${server.port}${path}`;

  beforeAll(async () => {
    server = await startDualServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><p>page /</p>');
    });
    firefox = await launchFirefoxWithExtension(BUILT, HOSTS, {
      prefs: DEFAULT_IDLE ? {} : { 'extensions.background.idle.timeout': 1000 },
    });
    // Control: awake, HTTPS-first (the default) upgrades a plain host.
    const tab = await firefox.newTab();
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      if ((await tab.goto(at('http', 'plain2.example.test', `/warm${i}`))).startsWith('https:'))
        break;
    }
    await tab.close();
  });

  afterAll(async () => {
    await firefox?.close();
    await server?.close();
  });

  it('is upgraded by HTTPS-first like any other navigation', { timeout: 90_000 }, async () => {
    // Let the event page idle out (nothing of the extension is open).
    await new Promise((r) => setTimeout(r, DEFAULT_IDLE ? 40_000 : 5000));
    const tab = await firefox.newTab();
    const landed = await tab.goto(at('http', 'plain.example.test', '/first'));
    const again = await tab.goto(at('http', 'plain.example.test', '/second'));
    await tab.close();
    expect(again).toBe(at('https', 'plain.example.test', '/second'));
    expect(landed).toBe(at('https', 'plain.example.test', '/first'));
  });
});
