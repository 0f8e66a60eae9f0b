import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FirefoxTab } from './support/firefox.js';
import { AXE_EXPRESSION } from './support/axe.js';
import { FF_POLL, startFirefoxUiHarness, type FirefoxUiHarness } from './support/firefox-ui.js';
import { checkScreenshot, expectVisibleTexts } from './support/screenshots.js';

const RULESETS = {
  'site.xml':
    '<ruleset name="Site Rules"><target host="site.example.test"/><rule from="^http:" to="https:"/></ruleset>',
  'exp.xml':
    '<ruleset name="Experimental Rules" default_off="breaks video"><target host="exp.example.test"/><rule from="^http:" to="https:"/></ruleset>',
};
const DARK_BG = 'rgb(27, 29, 33)';
const LIGHT_BG = 'rgb(255, 255, 255)';

/** Every page of the extension in Firefox, light and dark: screenshots checked, and an axe-core audit. */
describe('the extension pages in Firefox: popup, options, fallback page', () => {
  let h: FirefoxUiHarness;
  const ready = (tab: FirefoxTab) =>
    expect
      .poll(
        () =>
          tab.evaluate<string | undefined>('document.body?.dataset.ready').catch(() => undefined),
        FF_POLL,
      )
      .toBe('true');
  const textOf = (tab: FirefoxTab, selector: string) =>
    tab.evaluate<string>(`document.querySelector(${JSON.stringify(selector)}).textContent`);

  /** Light then dark: the background follows the scheme, axe finds nothing, the screenshot is a real page. */
  async function bothSchemes(
    tab: FirefoxTab,
    name: string,
    texts: string[],
    width?: number,
  ): Promise<void> {
    for (const scheme of ['light', 'dark'] as const) {
      await h.firefox.setColorScheme(scheme);
      await expect
        .poll(
          () => tab.evaluate<string>('getComputedStyle(document.body).backgroundColor'),
          FF_POLL,
        )
        .toBe(scheme === 'dark' ? DARK_BG : LIGHT_BG);
      expect(await tab.evaluate<string[]>(AXE_EXPRESSION), `${name} ${scheme}: axe`).toEqual([]);
      checkScreenshot(await tab.screenshot(), `firefox-${name}-${scheme}`, width);
      expectVisibleTexts(await tab.evaluate<string>('document.body.innerText'), name, texts);
    }
    await h.firefox.setColorScheme('light');
  }

  beforeAll(async () => {
    h = await startFirefoxUiHarness(RULESETS, [
      'site.example.test',
      'exp.example.test',
      'nossl.uncovered.test',
      'probe.uncovered.test',
    ]);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('popup: the page state, its rulesets, switches', async () => {
    const page = `https://site.example.test:${h.server.port}/`;
    expect(await h.tab.goto(h.url('site.example.test'))).toBe(page);
    const tabId = await h.options.evaluate<number>(
      `browser.tabs.query({}).then((tabs) => tabs.find((t) => t.url === ${JSON.stringify(page)})?.id ?? -1)`,
    );
    expect(tabId).toBeGreaterThan(0);
    const popup = await h.firefox.newTab();
    await popup.setViewport(360, 560);
    await popup.goto(`${h.firefox.extensionOrigin}/ui/popup.html?tabId=${tabId}`);
    await ready(popup);
    await expect
      .poll(() => textOf(popup, '#status-title'), FF_POLL)
      .toBe('Secure: upgraded to HTTPS');
    expect(await textOf(popup, '#status-detail')).toBe(
      'The ruleset “Site Rules” moved this page to HTTPS.',
    );
    const sizes = await popup.evaluate<string[]>(
      `Array.from(document.querySelectorAll('input.switch'), (e) => e.getBoundingClientRect()).filter((r) => r.width > 0).map((r) => r.width + 'x' + r.height)`,
    );
    expect(new Set(sizes)).toEqual(new Set(['36x20']));
    await bothSchemes(
      popup,
      'popup',
      [
        'Secure: upgraded to HTTPS',
        'Rulesets for this page',
        'Site Rules',
        'Everywhere',
        'HTTPS-first',
      ],
      360,
    );
    await popup.close();
  });

  it('options page: settings, rulesets with their hosts, statistics', async () => {
    await h.options.setViewport(1280, 900);
    await h.options.goto(`${h.firefox.extensionOrigin}/ui/options.html`);
    await ready(h.options);
    await expect
      .poll(
        () =>
          h.options.evaluate<string[]>(
            `Array.from(document.querySelectorAll('#ruleset-list .vrow:not([hidden]) .ruleset-hosts'), (e) => e.textContent)`,
          ),
        FF_POLL,
      )
      .toEqual(['exp.example.test', 'site.example.test']);
    expect(await textOf(h.options, '#about-rulesets')).toMatch(
      /^2 rulesets from November 1[45], 2023$/,
    );
    expect(await textOf(h.options, '#about-version')).toMatch(/^httpsify \d+\.\d+\.\d+$/);
    await bothSchemes(h.options, 'options', [
      'General',
      'All rulesets',
      'site.example.test',
      'Import and export',
      'Statistics',
    ]);
  });

  it('fallback page: the failure in words, the raw error on the details line', async () => {
    await h.request({ type: 'setFlag', flag: 'httpsFirst', value: true });
    const target = `http://nossl.uncovered.test:${h.plainPort}/`;
    await h.tab.start(target);
    await h.waitForUrl(/^moz-extension:\/\/[^/]+\/ui\/fallback\.html\?/);
    await ready(h.tab);
    expect(await textOf(h.tab, '#reason-text')).toBe(
      "The site's server does not speak HTTPS at this address.",
    );
    expect(await textOf(h.tab, '#reason')).toBe(
      'SSL received a record that exceeded the maximum permissible length.',
    );
    await bothSchemes(h.tab, 'fallback', [
      'Secure site not available',
      'More options',
      'Continue to HTTP site',
    ]);
    await h.request({ type: 'setFlag', flag: 'httpsFirst', value: false });
  });
});
