import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedExtension } from './support/browser.js';
import type { DualServer } from './support/servers.js';
import { loopSiteInChromium } from './support/loop-site-chromium.js';
import { schemesSeen } from './support/subresource-loop-site.js';

/**
 * Attack (outsider): a subresource URL written with a fragment. decide() and the loop guard
 * strip the fragment (requestUrl), so the verdict is for `http://bounce/f.gif` and decide()
 * says allowHttp for `http://bounce/f.gif#x` too. Chromium's DNR matches the request URL as the
 * page wrote it, fragment included; the verdict's `^...$` regex then does not match and the
 * loop goes on until the browser gives up: the browser is stricter than decide().
 */
describe('attack: a loop verdict and a URL with a fragment, in Chromium', () => {
  let server: DualServer;
  let ext: LoadedExtension;
  const at = (host: string, path: string) => site.at(host, path);

  let site: Awaited<ReturnType<typeof loopSiteInChromium>>;
  beforeAll(async () => {
    site = await loopSiteInChromium();
    ({ server, browser: ext } = site);
  });

  afterAll(async () => site?.close());

  /** Embeds `path` (+ `suffix`) of bounce in a fresh tab; what became of it after 8 s. */
  async function embed(path: string, suffix: string) {
    const tab = await ext.context.newPage();
    await tab.goto(at('embed.uncovered.test', '/blank'), { waitUntil: 'load' });
    await tab.evaluate(
      (s) => {
        const img = document.createElement('img');
        img.id = 'f';
        img.onload = () => (img.dataset.state = 'loaded');
        img.onerror = () => (img.dataset.state = 'failed');
        img.src = s;
        document.body.append(img);
      },
      at('bounce.example.test', path + suffix),
    );
    // A loop still going adds ~140 requests a second; a broken one settles within seconds.
    await new Promise((r) => setTimeout(r, 8000));
    const state = await tab.evaluate(() => document.getElementById('f')?.dataset.state);
    const seen = schemesSeen(server, `bounce.example.test ${path}`);
    const rules = await ext.worker.evaluate(() => chrome.declarativeNetRequest.getSessionRules());
    await tab.close();
    const escaped = at('bounce.example.test', path).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    return {
      verdictRule: rules.some((r) => r.condition.regexFilter === `^${escaped}(?:#.*)?$`),
      state,
      http: seen.filter((x) => !x).length,
      https: seen.filter((x) => x).length,
    };
  }

  it('control: the same loop without a fragment ends, the image loads over HTTP once', async () => {
    const r = await embed('/plain.gif', '');
    expect(r).toMatchObject({ verdictRule: true, state: 'loaded', http: 1 });
    expect(r.https).toBeLessThanOrEqual(6);
  });

  it('a looping subresource written with a fragment loads over HTTP, as decide() says', async () => {
    const r = await embed('/frag.gif', '#x');
    // The guard reached its verdict: decide() allows http://bounce/frag.gif#x over HTTP ...
    expect(r.verdictRule).toBe(true);
    // ... and its rule matches the URL with its fragment, which Chromium keeps: the loop ends.
    expect(r).toMatchObject({ state: 'loaded', http: 1 });
    expect(r.https).toBeLessThanOrEqual(6);
  });
});
