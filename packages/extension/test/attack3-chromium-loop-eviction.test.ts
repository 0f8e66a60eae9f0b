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
 * Attack (b), in Chromium: the loop verdicts' total bound (8 subresource verdicts, oldest pushed
 * out) is shared by every tab. A hostile page open in two tabs makes four images loop in each;
 * the verdicts of an unrelated page in a third tab are pushed out, and that page's images loop
 * again on its next load (each loop a few HTTPS rounds before a new verdict, which in turn
 * pushes out one of the hostile site's, which it makes again). Fixed: the bound in all now
 * takes from the tab holding the most, so the flooding tabs lose their own.
 */
describe("attack: a page in two tabs takes another tab's loop verdicts (Chromium)", () => {
  let server: DualServer;
  let ext: LoadedExtension;
  const at = (host: string, path: string) => site.at(host, path);

  let site: Awaited<ReturnType<typeof loopSiteInChromium>>;
  beforeAll(async () => {
    site = await loopSiteInChromium();
    ({ server, browser: ext } = site);
  });

  afterAll(async () => site?.close());

  it("the victim tab's loops stay broken while another site floods", async () => {
    const victim = await ext.context.newPage();
    await victim.goto(at('embed.uncovered.test', '/embed'), { waitUntil: 'commit' });
    await expect.poll(() => victim.evaluate(EMBEDDED_STATES), POLL).toEqual(EMBEDDED_LOADED);
    await settledCounts(server, BOUNCING);

    // The hostile site, in two tabs: four fresh bouncing images each, twice.
    for (const name of ['a', 'b']) {
      const tab = await ext.context.newPage();
      await tab.goto(at('embed.uncovered.test', `/evil-${name}`));
      for (const round of [0, 1]) {
        await tab.evaluate(
          ({ src, n }) => {
            document.body.innerHTML = Array.from(
              { length: n },
              (_, i) => `<img src="${src}${i}.gif" onload="this.dataset.state='loaded'">`,
            ).join('');
          },
          { src: at('bounce.example.test', `/evil/${name}/${round}/`), n: 4 },
        );
        await expect
          .poll(() => tab.evaluate(() => document.querySelectorAll('img[data-state]').length), POLL)
          .toBe(4);
      }
    }

    // The victim's page loads again (a reload, a link back): its image over HTTP at once, as
    // its verdict (ten minutes, this tab) says; not another HTTPS->HTTP loop.
    const before = schemesSeen(server, EMBEDDED.img).length;
    await victim.reload({ waitUntil: 'commit' });
    await expect.poll(() => victim.evaluate(EMBEDDED_STATES), POLL).toEqual(EMBEDDED_LOADED);
    await settledCounts(server, BOUNCING);
    const again = schemesSeen(server, EMBEDDED.img).slice(before);
    expect(again.filter((secure) => secure)).toEqual([]);
  }, 120_000);
});
