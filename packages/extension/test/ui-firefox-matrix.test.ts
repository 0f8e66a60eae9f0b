import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FirefoxTab } from './support/firefox.js';
import { AXE_EXPRESSION } from './support/axe.js';
import { testDefinition, testPublisher } from './support/channels.js';
import { FF_POLL, startFirefoxUiHarness, type FirefoxUiHarness } from './support/firefox-ui.js';
import { OPTIONS_PROBLEM_TEXTS, SIDEWAYS_EXPRESSION } from './support/layout.js';
import { checkScreenshot, expectVisibleTexts } from './support/screenshots.js';

const RULESETS = {
  'site.xml':
    '<ruleset name="Site Rules"><target host="site.example.test"/><rule from="^http:" to="https:"/></ruleset>',
};

/**
 * The screenshot matrix (issue 29) in Firefox: the popup's states at its 360 px, the options
 * and fallback pages at 360 and 1280 px, light and dark, each without axe violations and with
 * nothing sticking out sideways.
 */
describe('every page and state in Firefox, light and dark, 360 and 1280 px', () => {
  let h: FirefoxUiHarness;
  const ready = (tab: FirefoxTab) =>
    expect
      .poll(
        () =>
          tab.evaluate<string | undefined>('document.body?.dataset.ready').catch(() => undefined),
        FF_POLL,
      )
      .toBe('true');

  async function check(
    tab: FirefoxTab,
    name: string,
    widths: number[],
    texts: string[],
  ): Promise<void> {
    for (const width of widths) {
      await tab.setViewport(width, width === 360 ? 640 : 800);
      for (const scheme of ['light', 'dark'] as const) {
        await h.firefox.setColorScheme(scheme);
        await expect
          .poll(
            () => tab.evaluate<boolean>(`matchMedia('(prefers-color-scheme: dark)').matches`),
            FF_POLL,
          )
          .toBe(scheme === 'dark');
        expect(
          await tab.evaluate<string[]>(AXE_EXPRESSION),
          `${name} ${width} ${scheme}: axe`,
        ).toEqual([]);
        expect(
          await tab.evaluate<string[]>(SIDEWAYS_EXPRESSION),
          `${name} ${width} ${scheme}: sideways`,
        ).toEqual([]);
        // The document's width: the viewport less Firefox's classic scrollbar when the page scrolls.
        checkScreenshot(
          await tab.screenshot(),
          `matrix-firefox-${name}-${width}-${scheme}`,
          await tab.evaluate<number>('document.documentElement.clientWidth'),
        );
        expectVisibleTexts(await tab.evaluate<string>('document.body.innerText'), name, texts);
      }
    }
    await h.firefox.setColorScheme('light');
  }

  beforeAll(async () => {
    h = await startFirefoxUiHarness(RULESETS, [
      'site.example.test',
      'rules.example.test',
      'probe.uncovered.test',
      'nossl.uncovered.test',
    ]);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('popup: upgraded and rules only', async () => {
    const popupFor = async (url: string, status: string, name: string, texts: string[]) => {
      const shown = await h.tab.goto(url).catch(() => '');
      const tabId = await h.options.evaluate<number>(
        `browser.tabs.query({}).then((tabs) => tabs.find((t) => t.url === ${JSON.stringify(shown)})?.id ?? -1)`,
      );
      const popup = await h.firefox.newTab();
      await popup.goto(`${h.firefox.extensionOrigin}/ui/popup.html?tabId=${tabId}`);
      await ready(popup);
      await expect
        .poll(
          () => popup.evaluate<string>(`document.querySelector('#status-title').textContent`),
          FF_POLL,
        )
        .toBe(status);
      await check(popup, `popup-${name}`, [360], [status, ...texts]);
      await popup.close();
    };
    await popupFor(h.url('site.example.test'), 'Secure: upgraded to HTTPS', 'upgraded', [
      'Everything',
      'Site not working?',
    ]);
    await h.request({
      type: 'siteAdd',
      list: 'httpAllowedSites',
      entry: `rules.example.test:${h.server.port}`,
    });
    await popupFor(
      h.url('rules.example.test'),
      'Not secure: you chose “Rules only” for this site',
      'rules-only',
      ['Rules only'],
    );
  });

  it('options and the fallback page', async () => {
    await h.options.goto(`${h.firefox.extensionOrigin}/ui/options.html`);
    await ready(h.options);
    await check(h.options, 'options', [360, 1280], ['Advanced', 'General', 'All rulesets']);
    await h.tab.start(`http://nossl.uncovered.test:${h.plainPort}/a/path`);
    await expect
      .poll(() => h.tab.evaluate<string>('location.href').catch(() => ''), FF_POLL)
      .toMatch(/\/ui\/fallback\.html\?/);
    await ready(h.tab);
    await check(
      h.tab,
      'fallback',
      [360, 1280],
      ['Secure site not available', 'Continue to HTTP site', 'More options'],
    );
  });

  it('options: a channel with a problem, a refused definition, the rule form and the XML editor, in words', async () => {
    const o = h.options;
    const value = (selector: string, text: string) =>
      o.evaluate(
        `void (document.querySelector(${JSON.stringify(selector)}).value = ${JSON.stringify(text)})`,
      );
    const count = (selector: string) => () =>
      o.evaluate<number>(`document.querySelectorAll(${JSON.stringify(selector)}).length`);
    // A good definition whose server cannot be reached: added, and its first check fails.
    const definition = testDefinition(await testPublisher(), 'https://127.0.0.1:9/channel/', {
      name: 'Unreachable channel',
    });
    await value('#channel-definition', JSON.stringify({ format: 2, ...definition }));
    await h.click('#channel-add');
    await expect
      .poll(() => o.evaluate<boolean>(`document.querySelector('#channel-confirm').hidden`), FF_POLL)
      .toBe(false);
    await h.click('#channel-confirm-trust');
    await h.click('#channel-confirm-add');
    await expect
      .poll(
        () => o.evaluate<string>(`document.querySelector('.channel-pill')?.textContent ?? ''`),
        FF_POLL,
      )
      .toBe('Problem');
    await value('#channel-definition', '{"format": 2, "name": ');
    await h.click('#channel-add');
    await expect
      .poll(
        () => o.evaluate<boolean>(`!document.querySelector('#channel-add-error').hidden`),
        FF_POLL,
      )
      .toBe(true);
    await h.click('#user-rule-new');
    await value('#rule-form-site', 'my bank');
    await h.click('#rule-form-save');
    await expect.poll(count('#rule-form-errors li'), FF_POLL).toBe(1);
    await check(o, 'options-problems', [360, 1280], OPTIONS_PROBLEM_TEXTS);
    await o.evaluate(`void (document.querySelector('#rule-form-advanced').open = true)`);
    await h.click('#rule-form-xml');
    await value(
      '#rule-editor',
      '<ruleset name="Mine"><target host="my%20bank"/><rule from="http:" to="https:"/></ruleset>',
    );
    await o.evaluate(
      `void document.querySelector('#rule-editor').dispatchEvent(new Event('input'))`,
    );
    await expect.poll(count('#rule-diagnostics li'), FF_POLL).toBeGreaterThan(1);
    await check(
      o,
      'options-xml-editor',
      [360],
      [
        'Line 1: A site name is not written as one.',
        'Line 1: An address to rewrite is not written correctly.',
      ],
    );
  });
});
