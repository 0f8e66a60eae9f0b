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
 * Attack (b), in Firefox ESR: the loop guard's bounds are the same on both browsers (8
 * subresource verdicts in all, oldest pushed out, whatever the tab). A hostile page in two tabs
 * makes four fresh images loop in each: an unrelated tab's verdicts were pushed out, and its
 * image looped again on its next load. Fixed as in Chromium (loop-guard.ts, boundAcrossTabs).
 */
describe("attack: a page in two tabs takes another tab's loop verdicts (Firefox)", () => {
  let server: DualServer;
  let firefox: FirefoxWithExtension;
  const at = (host: string, path: string) => site.at(host, path);

  let site: Awaited<ReturnType<typeof loopSiteInFirefox>>;
  beforeAll(async () => {
    site = await loopSiteInFirefox();
    ({ server, browser: firefox } = site);
  });

  afterAll(async () => site?.close());

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
