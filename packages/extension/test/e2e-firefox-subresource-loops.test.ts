import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FirefoxWithExtension } from './support/firefox.js';
import type { DualServer } from './support/servers.js';
import {
  BOUNCING,
  EMBEDDED,
  EMBEDDED_LOADED,
  EMBEDDED_STATES,
  schemesSeen,
  settledCounts,
} from './support/subresource-loop-site.js';
import { loopSiteInFirefox } from './support/loop-site-firefox.js';

const POLL = { timeout: 15_000, interval: 100 };

/**
 * The same site in Firefox ESR: there the blocking listener's upgrades met the site's
 * redirects ten times per subresource, until Firefox's redirect limit failed the request (the
 * image, script and fetch broke, where without the extension they load over HTTP). The loop
 * guard now lets each load over HTTP after a few rounds, for that URL in that tab only.
 */
describe('subresource redirect loops in Firefox', () => {
  let server: DualServer;
  let firefox: FirefoxWithExtension;
  const at = (host: string, path: string) => site.at(host, path);

  let site: Awaited<ReturnType<typeof loopSiteInFirefox>>;
  beforeAll(async () => {
    site = await loopSiteInFirefox();
    ({ server, browser: firefox } = site);
  });

  afterAll(async () => site?.close());

  it('ends the loop of each subresource after a few rounds and loads it over HTTP, in that tab', async () => {
    const tab = await firefox.newTab();
    await tab.start(at('embed.uncovered.test', '/embed'));
    await expect.poll(() => tab.evaluate(EMBEDDED_STATES), POLL).toEqual(EMBEDDED_LOADED);
    const counts = await settledCounts(server, BOUNCING);
    for (const hostPath of BOUNCING) {
      // Three rounds make the verdict, which the next step of the request meets (the redirect
      // event is not a blocking one: it may be heard a round late).
      expect(counts[hostPath]!.https, hostPath).toBeGreaterThanOrEqual(3);
      expect(counts[hostPath]!.https, hostPath).toBeLessThanOrEqual(5);
      expect(counts[hostPath]!.http, hostPath).toBe(1);
    }
    // Another host's same path, and bounce's open redirect to another host: upgraded only.
    expect(schemesSeen(server, EMBEDDED.otherImg)).toEqual([true]);
    expect(schemesSeen(server, EMBEDDED.redirected)).toEqual([true]);

    // Another tab: the verdicts are the first tab's; its first request is upgraded again.
    const before = server.log.length;
    const other = await firefox.newTab();
    await other.start(at('embed.uncovered.test', '/embed'));
    await expect.poll(() => other.evaluate(EMBEDDED_STATES), POLL).toEqual(EMBEDDED_LOADED);
    const img = server.log.slice(before).filter((r) => `${r.host} ${r.path}` === EMBEDDED.img);
    expect(img[0]?.secure).toBe(true);
    await other.close();

    // The host's pages, and the very URL of a verdict as a page: still upgraded.
    expect(await tab.goto(at('bounce.example.test', '/page'))).toBe(
      at('bounce.example.test', '/page').replace('http:', 'https:'),
    );
    const page = server.log.length;
    await tab.start(at('bounce.example.test', '/i.gif'));
    await expect
      .poll(() => server.log.slice(page).find((r) => `${r.host} ${r.path}` === EMBEDDED.img))
      .toMatchObject({ secure: true });
    await tab.close();
  });
});
