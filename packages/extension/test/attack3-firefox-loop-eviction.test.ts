import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExtension } from '../src/packaging/build.js';
import { launchFirefoxWithExtension, type FirefoxWithExtension } from './support/firefox.js';
import { writeRulesetsDir } from './support/e2e-site.js';
import type { DualServer } from './support/servers.js';
import {
  BOUNCING,
  EMBEDDED,
  EMBEDDED_LOADED,
  EMBEDDED_STATES,
  LOOP_SITE_HOSTS,
  LOOP_SITE_RULESETS,
  schemesSeen,
  settledCounts,
  startLoopSite,
} from './support/subresource-loop-site.js';

const POLL = { timeout: 15_000, interval: 100 };

/**
 * Attack (b), in Firefox ESR: the loop guard's bounds are the same on both browsers (8
 * subresource verdicts in all, oldest pushed out, whatever the tab). A hostile page in two tabs
 * makes four fresh images loop in each: an unrelated tab's verdicts are pushed out, and its
 * image loops again on its next load.
 */
describe("attack: a page in two tabs takes another tab's loop verdicts (Firefox)", () => {
  const scratch: string[] = [];
  let server: DualServer;
  let firefox: FirefoxWithExtension;
  const at = (host: string, path: string) => `http://${host}:${server.port}${path}`;

  beforeAll(async () => {
    const rulesDir = writeRulesetsDir(LOOP_SITE_RULESETS, 'httpsify-a3loop-ff-rules-');
    const outDir = mkdtempSync(join(tmpdir(), 'httpsify-a3loop-ff-ext-'));
    scratch.push(rulesDir, outDir);
    const built = await buildExtension({
      rulesets: [rulesDir],
      outDir,
      browsers: ['firefox'],
      zip: false,
    });
    server = await startLoopSite();
    firefox = await launchFirefoxWithExtension(built.dirs.firefox!, LOOP_SITE_HOSTS);
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

  it("the victim tab's loops stay broken while another site floods", async () => {
    const victim = await firefox.newTab();
    await victim.start(at('embed.uncovered.test', '/embed'));
    await expect.poll(() => victim.evaluate(EMBEDDED_STATES), POLL).toEqual(EMBEDDED_LOADED);
    await settledCounts(server, BOUNCING);

    for (const name of ['a', 'b']) {
      const tab = await firefox.newTab();
      await tab.goto(at('embed.uncovered.test', `/evil-${name}`));
      for (const round of [0, 1]) {
        const src = at('bounce.example.test', `/evil/${name}/${round}/`);
        await tab.evaluate(
          `(document.body.innerHTML = [0, 1, 2, 3].map((i) => '<img src="${src}' + i + '.gif" onload="this.dataset.state=1" onerror="this.dataset.state=0">').join(''), 1)`,
        );
        await expect
          .poll(
            () => tab.evaluate<number>("document.querySelectorAll('img[data-state]').length"),
            POLL,
          )
          .toBe(4);
      }
    }

    // The victim's page loads again: its image over HTTP at once, as its verdict says.
    const before = schemesSeen(server, EMBEDDED.img).length;
    await victim.start(at('embed.uncovered.test', '/embed'));
    await expect.poll(() => victim.evaluate(EMBEDDED_STATES), POLL).toEqual(EMBEDDED_LOADED);
    await settledCounts(server, BOUNCING);
    const again = schemesSeen(server, EMBEDDED.img).slice(before);
    expect(again.filter((secure) => secure)).toEqual([]);
  }, 120_000);
});
