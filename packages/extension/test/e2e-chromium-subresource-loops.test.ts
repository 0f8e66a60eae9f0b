import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedExtension } from './support/browser.js';
import type { DualServer } from './support/servers.js';
import {
  BOUNCING,
  EMBEDDED,
  EMBEDDED_LOADED,
  EMBEDDED_STATES,
  schemesSeen,
  settledCounts,
} from './support/subresource-loop-site.js';
import { loopSiteInChromium } from './support/loop-site-chromium.js';

const POLL = { timeout: 15_000, interval: 100 };

/**
 * A site whose HTTPS answers send its subresources back to HTTP, in Chromium: the DNR rules
 * upgraded them again, ~140 times a second per subresource for as long as the tab stayed open
 * (the page never finished loading). The loop guard now ends each after a few rounds, for that
 * URL in that tab only.
 */
describe('subresource redirect loops in Chromium', () => {
  let server: DualServer;
  let ext: LoadedExtension;
  const at = (host: string, path: string) => site.at(host, path);
  const states = (tab: Page) => tab.evaluate(EMBEDDED_STATES);

  let site: Awaited<ReturnType<typeof loopSiteInChromium>>;
  beforeAll(async () => {
    site = await loopSiteInChromium();
    ({ server, browser: ext } = site);
  });

  afterAll(async () => site?.close());

  it('ends the loop of each subresource after a few rounds and loads it over HTTP, in that tab', async () => {
    const tab = await ext.context.newPage();
    await tab.goto(at('embed.uncovered.test', '/embed'), { waitUntil: 'commit' });
    await expect.poll(() => states(tab), POLL).toEqual(EMBEDDED_LOADED);
    const counts = await settledCounts(server, BOUNCING);
    for (const hostPath of BOUNCING) {
      // Three rounds make the verdict; the rule may land a round later.
      expect(counts[hostPath]!.https, hostPath).toBeGreaterThanOrEqual(3);
      expect(counts[hostPath]!.https, hostPath).toBeLessThanOrEqual(6);
      expect(counts[hostPath]!.http, hostPath).toBe(1);
    }
    // Another host's same path, and bounce's open redirect to another host: upgraded only.
    expect(schemesSeen(server, EMBEDDED.otherImg)).toEqual([true]);
    expect(schemesSeen(server, EMBEDDED.redirected)).toEqual([true]);
    // Each verdict is one session rule: that URL, that tab, every type but the top-level page.
    const tabId = await ext.worker.evaluate(
      async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id,
      at('embed.uncovered.test', '/embed'),
    );
    const rules = await ext.worker.evaluate(() => chrome.declarativeNetRequest.getSessionRules());
    expect(
      rules
        .map((r) => [r.condition.regexFilter, r.condition.tabIds, r.condition.resourceTypes])
        .sort(),
    ).toEqual(
      BOUNCING.map((hp) => {
        const [host, path] = hp.split(' ');
        const url = at(host!, path!).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
        return [`^${url}(?:#.*)?$`, [tabId], undefined];
      }).sort(),
    );

    // Another tab: the verdicts are the first tab's; its first request is upgraded again.
    const before = server.log.length;
    const other = await ext.context.newPage();
    await other.goto(at('embed.uncovered.test', '/embed'), { waitUntil: 'commit' });
    await expect.poll(() => states(other), POLL).toEqual(EMBEDDED_LOADED);
    const img = server.log.slice(before).filter((r) => `${r.host} ${r.path}` === EMBEDDED.img);
    expect(img[0]?.secure).toBe(true);
    await other.close();

    // The host's pages, and the very URL of a verdict as a page: still upgraded.
    const page = server.log.length;
    await tab.goto(at('bounce.example.test', '/page'));
    expect(tab.url()).toBe(at('bounce.example.test', '/page').replace('http:', 'https:'));
    await tab.goto(at('bounce.example.test', '/i.gif'), { waitUntil: 'commit' }).catch(() => null);
    await expect
      .poll(() => server.log.slice(page).find((r) => `${r.host} ${r.path}` === EMBEDDED.img))
      .toMatchObject({ secure: true });
    await tab.close();
  });
});
