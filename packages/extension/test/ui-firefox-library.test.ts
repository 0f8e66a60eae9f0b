import { gzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AXE_EXPRESSION } from './support/axe.js';
import { FF_POLL, startFirefoxUiHarness, type FirefoxUiHarness } from './support/firefox-ui.js';
import { tar } from './support/tar.js';

const RULESETS = {
  'site.xml':
    '<ruleset name="Site Rules"><target host="site.example.test"/><rule from="^http:" to="https:"/></ruleset>',
};
const ruleset = (name: string, host: string) =>
  `<ruleset name="${name}"><target host="${host}"/><rule from="^http:" to="https:"/></ruleset>`;

/** The library in Firefox: imported on the options page, applied by the engine in the blocking listener. */
/** Chooses a .tar.gz of `entries` in the options page's file input, as a person does. */
async function chooseArchive(h: FirefoxUiHarness, entries: { name: string; data: string }[]) {
  const base64 = Buffer.from(gzipSync(tar(entries))).toString('base64');
  await h.options.evaluate(`(() => {
    const bytes = Uint8Array.from(atob(${JSON.stringify(base64)}), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], 'library.tar.gz'));
    const input = document.querySelector('#library-archive');
    input.files = dt.files;
    input.dispatchEvent(new Event('change'));
    return true;
  })()`);
}

describe('importing a ruleset library in Firefox', () => {
  let h: FirefoxUiHarness;
  const textOf = (selector: string) =>
    h.options.evaluate<string>(`document.querySelector(${JSON.stringify(selector)}).textContent`);

  beforeAll(async () => {
    h = await startFirefoxUiHarness(
      RULESETS,
      ['site.example.test', 'lib-a.example.test', 'lib-b.example.test', 'other.uncovered.test'],
      { modeOff: true },
    );
  });

  afterAll(async () => {
    await h?.close();
  });

  it('imports a .tar.gz on the options page and rewrites a covered URL', async () => {
    expect(await h.tab.goto(h.url('lib-a.example.test', '/x'))).toMatch(/^http:/);
    await h.options.goto(`${h.firefox.extensionOrigin}/ui/options.html`);
    await expect
      .poll(
        () =>
          h.options
            .evaluate<string | undefined>('document.body?.dataset.ready')
            .catch(() => undefined),
        FF_POLL,
      )
      .toBe('true');
    await chooseArchive(h, [
      { name: 'rules/Lib A.xml', data: ruleset('Lib A', 'lib-a.example.test') },
      { name: 'rules/Lib B.xml', data: ruleset('Lib B', 'lib-b.example.test') },
      {
        name: 'rules/Broken.xml',
        data: '<ruleset name="Broken">\n<target host="x.example.test">\n',
      },
    ]);
    // The preview first: nothing is stored until "Import".
    await expect
      .poll(
        () => h.options.evaluate<boolean>(`document.querySelector('#library-preview').hidden`),
        FF_POLL,
      )
      .toBe(false);
    await h.click('#library-apply');
    await expect
      .poll(() => textOf('#library-status'), FF_POLL)
      .toBe('Imported 2 rulesets from library.tar.gz.');
    expect(await textOf('#library-summary')).toMatch(/^2 rulesets from 3 files · imported /);
    expect(await textOf('#library-problem-list li')).toMatch(/^rules\/Broken\.xml, line \d+: /);
    expect(await h.options.evaluate<string[]>(AXE_EXPRESSION)).toEqual([]);
    expect(await h.tab.goto(h.url('lib-b.example.test', '/y'))).toBe(
      `https://lib-b.example.test:${h.server.port}/y`,
    );
    expect(await h.tab.goto(h.url('other.uncovered.test', '/'))).toMatch(/^http:/);
    // Stored for the next start (library-import.test.ts loads it again in a new background).
    expect(await h.stored('localLibrary')).toMatchObject({
      name: 'library.tar.gz',
      rulesetCount: 2,
      enabled: true,
    });
  });
});

/**
 * The preview lives in the background's memory, and Firefox ends an idle event page (30 s; 3 s
 * here): a person reading the preview longer than that must still be able to import it.
 */
describe('a library preview left open in Firefox', () => {
  let h: FirefoxUiHarness;

  beforeAll(async () => {
    h = await startFirefoxUiHarness(RULESETS, ['lib-c.example.test'], {
      modeOff: true,
      prefs: { 'extensions.background.idle.timeout': 3000 },
    });
  });

  afterAll(async () => {
    await h?.close();
  });

  it(
    'is still imported after the background would have idled out',
    { timeout: 90_000 },
    async () => {
      await chooseArchive(h, [{ name: 'Lib C.xml', data: ruleset('Lib C', 'lib-c.example.test') }]);
      await expect
        .poll(
          () => h.options.evaluate<boolean>(`document.querySelector('#library-preview').hidden`),
          FF_POLL,
        )
        .toBe(false);
      // Reading it for three idle timeouts and more.
      await new Promise((r) => setTimeout(r, 10_000));
      await h.click('#library-apply');
      await expect
        .poll(
          () =>
            h.options.evaluate<string>(
              `document.querySelector('#library-status').textContent + document.querySelector('#library-error').textContent`,
            ),
          FF_POLL,
        )
        .toBe('Imported 1 ruleset from library.tar.gz.');
      expect(await h.tab.goto(h.url('lib-c.example.test', '/z'))).toBe(
        `https://lib-c.example.test:${h.server.port}/z`,
      );
    },
  );
});
