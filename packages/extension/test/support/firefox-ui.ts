import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { buildExtension } from '../../src/packaging/build.js';
import { UI_PORT_NAME, type UiRequest } from '../../src/protocol/ui-protocol.js';
import {
  launchFirefoxWithExtension,
  type FirefoxTab,
  type FirefoxWithExtension,
} from './firefox.js';
import { UI_RULESETS_TIMESTAMP } from './ui-extension.js';
import { startDualServer, startHttpOnly, startTlsHang, type DualServer } from './servers.js';

/** The background answers through storage and ports; under load that takes more than a second. */
export const FF_POLL = { timeout: 10_000, interval: 100 };

export interface FirefoxUiHarness {
  firefox: FirefoxWithExtension;
  /** HTTP and TLS on one port: pages read `<scheme> <host> <path>`. */
  server: DualServer;
  /** Plain HTTP only (HTTPS attempts fail at once); pages read `plain http <host:port><path>`. */
  plainPort: number;
  /** HTTP answers, a TLS handshake hangs. */
  hangPort: number;
  /** The web tab the navigations under test run in. */
  tab: FirefoxTab;
  /** The options page, open throughout: the real UI, and a page where `browser.*` is. */
  options: FirefoxTab;
  /** `http://<host>:<dual port><path>` */
  url(host: string, path?: string): string;
  /** One request over the UI port, as the extension's pages send it. */
  request<T>(request: UiRequest): Promise<T>;
  stored(key: string): Promise<unknown>;
  /** Clicks an element of the options page (its handlers run as for a user's click). */
  click(selector: string): Promise<void>;
  /** Polls the tab until its address matches, tolerating the moments between documents. */
  waitForUrl(match: RegExp | string): Promise<string>;
  bodyText(): Promise<string>;
  close(): Promise<void>;
}

/**
 * The Firefox build of the given rulesets in a real Firefox, the loopback servers, and the
 * options page open. `hosts` are the names Firefox resolves to loopback (no wildcards there).
 */
export async function startFirefoxUiHarness(
  rulesets: Record<string, string>,
  hosts: string[],
  settings: { modeOff?: boolean; prefs?: Record<string, string | number | boolean> } = {},
): Promise<FirefoxUiHarness> {
  const rulesDir = mkdtempSync(join(tmpdir(), 'httpsify-ff-ui-rules-'));
  const outDir = mkdtempSync(join(tmpdir(), 'httpsify-ff-ui-ext-'));
  for (const [file, xml] of Object.entries(rulesets)) writeFileSync(join(rulesDir, file), xml);
  const built = await buildExtension({
    rulesets: [rulesDir],
    outDir,
    browsers: ['firefox'],
    zip: false,
    timestamp: UI_RULESETS_TIMESTAMP,
  });
  const modeOff = settings.modeOff;
  const server = await startDualServer((req, res, secure) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (req.url === '/success.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end('success\n');
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<!doctype html><title>${host}</title><body>${secure ? 'https' : 'http'} ${host} ${req.url}</body>`,
    );
  });
  const plain = await startHttpOnly();
  const hang = await startTlsHang(plain.server);
  const url = (host: string, path = '/') => `http://${host}:${server.port}${path}`;
  let firefox: FirefoxWithExtension | undefined;
  const close = async () => {
    await firefox?.close();
    await server.close();
    plain.server.close();
    hang.server.close();
    rmSync(rulesDir, { recursive: true, force: true });
    rmSync(outDir, { recursive: true, force: true });
  };
  try {
    firefox = await launchFirefoxWithExtension(built.dirs.firefox!, hosts, {
      prefs: settings.prefs ?? {},
    });
    const tab = await firefox.newTab();
    const options = await firefox.newTab();
    await options.goto(`${firefox.extensionOrigin}/ui/options.html`);
    await waitFor(
      'the options page to render',
      () => options.evaluate<string | undefined>('document.body.dataset.ready'),
      'true',
    );
    const stored = (key: string) =>
      options.evaluate<unknown>(
        `browser.storage.local.get(${JSON.stringify(key)}).then((o) => o[${JSON.stringify(key)}] ?? null)`,
      );
    // The UI half is ready once settings are stamped with their schema version.
    await waitFor('settings to be stored', () => stored('schemaVersion'), 1);
    // A fallback first asks whether a captive portal is in the way: let a local probe say "no".
    await options.evaluate(
      `browser.storage.local.set({ portalProbeUrl: ${JSON.stringify(url('probe.uncovered.test', '/success.txt'))} })`,
    );
    if (modeOff === true) {
      // Tests about rulesets and channels: the protection mode (on by default) would upgrade
      // their uncovered control hosts too.
      await options.evaluate('browser.storage.local.set({ httpsFirst: false })');
      const modeOn = `new Promise((resolve) => { const p = browser.runtime.connect({ name: ${JSON.stringify(UI_PORT_NAME)} }); p.onMessage.addListener((m) => { p.disconnect(); resolve(m.response.httpsFirst); }); p.postMessage({ id: 1, request: { type: 'settings' } }); })`;
      await waitFor(
        'the protection mode to go off',
        () => options.evaluate<boolean>(modeOn),
        false,
      );
    }
    return {
      firefox,
      server,
      plainPort: plain.port,
      hangPort: hang.port,
      tab,
      options,
      url,
      stored,
      request: <T>(request: UiRequest) =>
        // A port of its own, so the page's own client never sees the answer.
        options.evaluate<T>(`new Promise((resolve) => {
          const port = browser.runtime.connect({ name: ${JSON.stringify(UI_PORT_NAME)} });
          port.onMessage.addListener((m) => { port.disconnect(); resolve(m.response); });
          port.postMessage({ id: 1, request: ${JSON.stringify(request)} });
        })`),
      click: (selector) =>
        options.evaluate<void>(`void document.querySelector(${JSON.stringify(selector)}).click()`),
      async waitForUrl(match) {
        const href = () => tab.evaluate<string>('location.href').catch(() => '');
        if (typeof match === 'string') await expect.poll(href, FF_POLL).toBe(match);
        else await expect.poll(href, FF_POLL).toMatch(match);
        return href();
      },
      bodyText: () => tab.evaluate<string>('document.body.textContent'),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Polls outside a test (expect.poll only works inside one). */
async function waitFor(
  what: string,
  read: () => Promise<unknown>,
  want: unknown,
  timeoutMs = FF_POLL.timeout,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    last = await read().catch((e: unknown) => e);
    if (last === want) return;
    await new Promise((r) => setTimeout(r, FF_POLL.interval));
  }
  throw new Error(`timed out waiting for ${what}; last seen: ${String(last)}`);
}
