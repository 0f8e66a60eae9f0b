import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe.js';
import { OPTIONS_PROBLEM_TEXTS, SIDEWAYS_EXPRESSION } from './support/layout.js';
import { testDefinition, testPublisher } from './support/channels.js';
import { POLL, shot, startUiHarness, type UiHarness } from './support/ui-harness.js';

/**
 * The screenshot matrix (issue 29): every page and state, light and dark, at 360 and 1280 px
 * (the popup at its own 360 px), each with no axe violation and nothing sticking out sideways.
 */
describe('every page and state in Chromium, light and dark, 360 and 1280 px', () => {
  let h: UiHarness;
  let page: Page;
  const set = (values: Record<string, unknown>) =>
    h.ext.worker.evaluate(async (v) => chrome.storage.local.set(v), values);

  async function check(
    p: Page,
    name: string,
    widths: number[],
    texts: string[],
    part?: string,
  ): Promise<void> {
    for (const width of widths) {
      await p.setViewportSize({ width, height: width === 360 ? 640 : 800 });
      for (const scheme of ['light', 'dark'] as const) {
        await p.emulateMedia({ colorScheme: scheme });
        expect(await axeViolations(p), `${name} ${width} ${scheme}: axe`).toEqual([]);
        expect(
          await p.evaluate(SIDEWAYS_EXPRESSION),
          `${name} ${width} ${scheme}: sideways`,
        ).toEqual([]);
        // A page with one line of text is shot by its content alone (the rest is empty window).
        await shot(
          p,
          `matrix-chromium-${name}-${width}-${scheme}`,
          part === undefined ? { width, texts } : { part, texts },
        );
      }
    }
    await p.emulateMedia({ colorScheme: 'light' });
  }

  async function popupFor(
    url: string,
    name: string,
    status: string,
    texts: string[],
    stays = false,
  ): Promise<void> {
    // A page that should stay on HTTP: the settings just written take a moment to apply.
    if (stays)
      await expect
        .poll(async () => {
          await page.goto(url);
          return page.url();
        }, POLL)
        .toBe(url);
    else await page.goto(url).catch(() => undefined);
    // The tab's id by its address; the fallback page's own address is not readable.
    const popup = await h.openPopup(tabId);
    await expect.poll(() => popup.locator('#status-title').textContent(), POLL).toBe(status);
    await check(popup, `popup-${name}`, [360], [status, ...texts]);
    await popup.close();
  }

  let tabId: number;

  beforeAll(async () => {
    h = await startUiHarness();
    page = await h.ext.context.newPage();
    await page.goto(h.url('start.uncovered.test'));
    tabId = await h.tabIdOf(page);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('popup: every state the status card and the site control can be in', async () => {
    const long = 'a-rather-long-subdomain-name.with.many.labels.uncovered.test';
    await popupFor(h.url(long, '/'), 'upgraded', 'Secure: upgraded to HTTPS', [
      'Everything',
      'Site not working?',
    ]);
    await set({
      httpAllowedSites: [`rules.uncovered.test:${h.server.port}`],
      disabledSites: [`off.uncovered.test:${h.server.port}`],
    });
    await popupFor(
      h.url('rules.uncovered.test'),
      'rules-only',
      'Not secure: you chose “Rules only” for this site',
      ['Rules only', 'Try HTTPS again'],
      true,
    );
    await popupFor(
      h.url('off.uncovered.test'),
      'site-off',
      'Not secure: httpsify is off on this site',
      ['Switch on for this site'],
      true,
    );
    await popupFor(
      `http://nossl.uncovered.test:${h.plainPort}/`,
      'fallback',
      'HTTPS did not work for nossl.uncovered.test',
      ['Try HTTPS again'],
    );
    await set({ globalEnabled: false });
    await popupFor(
      h.url('site.example.test'),
      'extension-off',
      'httpsify is off',
      ['Turn on'],
      true,
    );
    await set({ globalEnabled: true });
    const none = await h.ext.context.newPage();
    await none.goto(`chrome-extension://${h.id}/ui/popup.html?tabId=999999`);
    await none.waitForSelector('body[data-ready="true"]');
    await check(none, 'popup-no-page', [360], ['httpsify works on web pages']);
    await none.close();
  });

  it('options, the fallback page (with the www. twin, and "More options" open) and the handoff error', async () => {
    const options = await h.openOptions();
    await check(options, 'options', [360, 1280], ['Advanced', 'General', 'All rulesets']);
    await options.close();
    const fallback = await h.ext.context.newPage();
    const twin = 'https://www.a-rather-long-subdomain-name.with.many.labels.example.test/';
    await fallback.goto(
      `chrome-extension://${h.id}/ui/fallback.html?url=${encodeURIComponent('http://a-rather-long-subdomain-name.with.many.labels.example.test/a/path?q=1')}&reason=net%3A%3AERR_CONNECTION_REFUSED&twin=${encodeURIComponent(twin)}&tried=${encodeURIComponent(
        JSON.stringify([
          { url: 'https://x.example.test/', result: 'net::ERR_CONNECTION_REFUSED' },
          { url: twin, result: 'ok' },
        ]),
      )}&http=ok`,
    );
    await fallback.waitForSelector('body[data-ready="true"]');
    await check(
      fallback,
      'fallback',
      [360, 1280],
      ['Secure site not available', 'Continue to HTTP site', 'Try the secure site'],
    );
    await fallback.locator('#more summary').click();
    await check(
      fallback,
      'fallback-more',
      [360],
      ['Use “Rules only” for this site', 'What httpsify tried', 'Error code:'],
    );
    await fallback.close();
    const handoff = await h.ext.context.newPage();
    await handoff.goto(`chrome-extension://${h.id}/ui/handoff.html#not-an-address`);
    await expect.poll(() => handoff.locator('#problem').isVisible(), POLL).toBe(true);
    // The heading says what went wrong, no longer "Opening…".
    expect(await handoff.locator('h1').textContent()).toBe('This address cannot be opened');
    await check(
      handoff,
      'handoff-error',
      [360, 1280],
      ['cannot be opened', 'could not open', 'Try again', 'Go back'],
      'main',
    );
    await handoff.close();
  });

  it('options: a channel with a problem, a refused definition, the rule form and the XML editor, in words', async () => {
    const options = await h.openOptions();
    // A good definition whose server cannot be reached: added, and its first check fails.
    const definition = testDefinition(await testPublisher(), 'https://127.0.0.1:9/channel/', {
      name: 'Unreachable channel',
    });
    await options.locator('#channel-definition').fill(JSON.stringify({ format: 2, ...definition }));
    await options.locator('#channel-add').click();
    await options.locator('#channel-confirm-trust').check();
    await options.locator('#channel-confirm-add').click();
    await expect
      .poll(() => options.locator('.channel-pill').allTextContents(), POLL)
      .toEqual(['Problem']);
    await options.locator('#channel-definition').fill('{"format": 2, "name": ');
    await options.locator('#channel-add').click();
    await expect.poll(() => options.locator('#channel-add-error').isVisible(), POLL).toBe(true);
    await options.locator('#user-rule-new').click();
    await options.locator('#rule-form-site').fill('my bank');
    await options.locator('#rule-form-save').click();
    await expect.poll(() => options.locator('#rule-form-errors li').count(), POLL).toBe(1);
    await check(options, 'options-problems', [360, 1280], OPTIONS_PROBLEM_TEXTS);
    await options.locator('#rule-form-advanced summary').click();
    await options.locator('#rule-form-xml').click();
    await options
      .locator('#rule-editor')
      .fill(
        '<ruleset name="Mine"><target host="my%20bank"/><rule from="http:" to="https:"/></ruleset>',
      );
    await expect
      .poll(() => options.locator('#rule-diagnostics li').count(), POLL)
      .toBeGreaterThan(1);
    await check(
      options,
      'options-xml-editor',
      [360],
      [
        'Line 1: A site name is not written as one.',
        'Line 1: An address to rewrite is not written correctly.',
      ],
    );
    await options.close();
  });
});
