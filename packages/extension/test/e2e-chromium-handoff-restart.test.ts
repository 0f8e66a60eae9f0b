import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExtension } from '../src/packaging/build.js';
import {
  launchWithExtension,
  switchProtectionModeOff,
  type LoadedExtension,
} from './support/browser.js';
import {
  LOOKBEHIND_RULESET,
  page,
  SHARED_TEST_RULESETS,
  writeRulesetsDir,
} from './support/e2e-site.js';
import { startDualServer, type DualServer } from './support/servers.js';

/**
 * The handoff's "once" allowance (a session rule for one http:// URL in one tab) must not
 * outlive the worker that wrote it: found by an attack, a worker stopped while the allowed page
 * was still loading left the rule, and a later user rule upgrading the host never reached that
 * URL in that tab.
 */
const TEST_RULESETS = `${SHARED_TEST_RULESETS}\n${LOOKBEHIND_RULESET}`;

describe('Chromium handoff: a once-allowance across a worker restart', () => {
  let server: DualServer;
  let ext: LoadedExtension;
  let origin: (scheme: string, host: string) => string;
  const dirs: string[] = [];
  let held: ServerResponse | null = null;

  beforeAll(async () => {
    const rulesDir = writeRulesetsDir(TEST_RULESETS, 'httpsify-once-rules-');
    const outDir = mkdtempSync(join(tmpdir(), 'httpsify-once-ext-'));
    dirs.push(rulesDir, outDir);
    const built = await buildExtension({
      rulesets: [rulesDir],
      outDir,
      browsers: ['chromium'],
      zip: false,
    });
    server = await startDualServer((req, res, secure) => {
      if (!secure && req.url?.startsWith('/keep/slow')) {
        held = res;
        return;
      }
      page(res, `${secure ? 'https' : 'http'} ${req.headers.host} ${req.url}`);
    });
    origin = (scheme, host) => `${scheme}://${host}:${server.port}`;
    ext = await launchWithExtension(built.dirs.chromium!, ['*.example.test', '*.example.test.']);
    await switchProtectionModeOff(ext);
  }, 180_000);

  afterAll(async () => {
    await ext?.close();
    await server?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it(
    'is gone after the worker restarts, and the same URL follows a new user rule',
    { timeout: 120_000 },
    async () => {
      const id = new URL(ext.worker.url()).host;
      await expect
        .poll(() =>
          ext.worker.evaluate(
            async () => (await chrome.declarativeNetRequest.getDynamicRules()).length,
          ),
        )
        .toBeGreaterThan(0);
      const url = `${origin('http', 'lb.example.test')}/keep/slow`;
      const tab = await ext.context.newPage();
      const loading = tab.goto(url, { timeout: 60_000 }).catch((e: unknown) => String(e));
      await expect.poll(() => held !== null, { timeout: 20_000 }).toBe(true);
      const cdp = await ext.context.newCDPSession(await ext.context.newPage());
      await cdp.send('ServiceWorker.enable');
      await cdp.send('ServiceWorker.stopAllWorkers');
      await new Promise((r) => setTimeout(r, 1000));
      page(held!, `http lb.example.test /keep/slow`);
      await loading;
      const options = await ext.context.newPage();
      await options.goto(`chrome-extension://${id}/ui/options.html`);
      // The restarted worker (woken by the options page) removes what it no longer knows of.
      const allows = () =>
        options.evaluate(async () =>
          (await chrome.declarativeNetRequest.getSessionRules()).filter(
            (r) => r.action.type === 'allow',
          ),
        );
      await expect.poll(allows, { timeout: 30_000 }).toEqual([]);
      // The user now writes a rule upgrading the host: decide() upgrades /keep/slow in this tab.
      const xml =
        '<ruleset name="U"><target host="lb.example.test"/><rule from="^http:" to="https:"/></ruleset>';
      await options.evaluate(
        async (x) => chrome.storage.local.set({ userRules: [{ name: 'U', xml: x }] }),
        xml,
      );
      // Applied once another tab's page of the host is upgraded.
      const other = await ext.context.newPage();
      await expect
        .poll(
          async () => {
            await other.goto(url.replace('/keep/slow', '/keep/other'));
            return other.url();
          },
          { timeout: 30_000 },
        )
        .toMatch(/^https:/);
      held = null;
      await tab.goto(url, { timeout: 30_000 }).catch((e: unknown) => String(e));
      if (held !== null) page(held, 'http again');
      expect(tab.url()).toMatch(/^https:/);
    },
  );
});
