import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync, gzipSync } from 'fflate';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe.js';
import { rawZip } from './support/raw-zip.js';
import { tar } from './support/tar.js';
import { POLL, shot, startUiHarness, type UiHarness } from './support/ui-harness.js';

const ruleset = (name: string, host: string) =>
  `<ruleset name="${name}"><target host="${host}"/><rule from="^http:" to="https:"/></ruleset>`;

describe('importing a ruleset library in Chromium', () => {
  let h: UiHarness;
  let o: Page;
  const files = mkdtempSync(join(tmpdir(), 'httpsify-library-'));

  beforeAll(async () => {
    h = await startUiHarness(null, { modeOff: true });
    o = await h.openOptions();
  });

  afterAll(async () => {
    await h?.close();
    rmSync(files, { recursive: true, force: true });
  });

  it('imports a .tar.gz of three rulesets with progress, lists the broken file, and rewrites a covered URL', async () => {
    const page = await h.ext.context.newPage();
    await page.goto(h.url('lib-a.example.test', '/x'));
    expect(page.url()).toMatch(/^http:\/\/lib-a\.example\.test/);

    expect(await o.locator('#library-none').isVisible()).toBe(true);
    const archive = join(files, 'library.tar.gz');
    writeFileSync(
      archive,
      gzipSync(
        tar([
          { name: 'rules/Lib A.xml', data: ruleset('Lib A', 'lib-a.example.test') },
          { name: 'rules/Lib B.xml', data: ruleset('Lib B', 'lib-b.example.test') },
          { name: 'rules/Lib C.xml', data: ruleset('Lib C', 'lib-c.example.test') },
          {
            name: 'rules/Broken.xml',
            data: '<ruleset name="Broken">\n<target host="x.example.test">\n',
          },
          { name: 'rules/README', data: 'not a ruleset' },
        ]),
      ),
    );
    // Every text the status line shows, to see the progress go by.
    await o.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      const el = document.querySelector('#library-status') as HTMLElement;
      new MutationObserver(() => seen.push(el.textContent ?? '')).observe(el, {
        childList: true,
        characterData: true,
        subtree: true,
      });
      const bar = document.querySelector('#library-progress') as HTMLProgressElement;
      const values: number[] = [];
      (window as unknown as { bar: number[] }).bar = values;
      new MutationObserver(() => values.push(bar.value / bar.max)).observe(bar, {
        attributes: true,
      });
    });
    await o.locator('#library-archive').setInputFiles(archive);
    // It shows what it would change before anything is stored.
    await o.locator('#library-preview').waitFor({ state: 'visible', timeout: POLL.timeout });
    expect(await o.locator('#library-preview-summary').textContent()).toBe(
      'It holds 3 rulesets. Nothing changes until you choose “Import”.',
    );
    expect(await o.locator('#library-none').isVisible()).toBe(true);
    await shot(o, 'chromium-library-preview', { part: '#library', texts: ['Import'] });
    // The bar never ran backwards.
    const values = await o.evaluate(() => (window as unknown as { bar: number[] }).bar);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    await o.locator('#library-apply').click();
    await expect
      .poll(() => o.locator('#library-status').textContent(), POLL)
      .toBe('Imported 3 rulesets from library.tar.gz.');
    const seen = await o.evaluate(() => (window as unknown as { seen: string[] }).seen);
    expect(seen).toContain('Checking rules: 4 of 4 files');
    expect(seen).toContain('Saving');
    expect(await o.locator('#library-name').textContent()).toBe('library.tar.gz');
    expect(await o.locator('#library-summary').textContent()).toMatch(
      /^3 rulesets from 4 files · imported /,
    );
    expect(await o.locator('#library-enabled').isChecked()).toBe(true);
    expect(await o.locator('#library-problems-title').textContent()).toBe(
      'Some files or rules could not be used (1); the rest works',
    );
    expect(await o.locator('#library-problem-list li').first().textContent()).toMatch(
      /^rules\/Broken\.xml, line \d+: /,
    );
    expect(await o.locator('#library-browser-problem').isVisible()).toBe(false);
    expect(await axeViolations(o)).toEqual([]);

    // The library's DNR rules are in place: the covered host goes to HTTPS, others stay.
    await expect
      .poll(async () => {
        await page.goto(h.url('lib-b.example.test', '/y'));
        return page.url();
      }, POLL)
      .toBe(`https://lib-b.example.test:${h.server.port}/y`);
    await page.goto(h.url('anything.uncovered.test', '/'));
    expect(page.url()).toMatch(/^http:/);

    // Switched off, the library no longer applies; removed, it is gone after confirming.
    await o.locator('#library-enabled').click();
    await expect
      .poll(async () => {
        await page.goto(h.url('lib-c.example.test', '/z'));
        return page.url();
      }, POLL)
      .toMatch(/^http:\/\/lib-c/);
    o.once('dialog', (d) => void d.accept());
    await o.locator('#library-remove').click();
    await expect.poll(() => o.locator('#library-none').isVisible(), POLL).toBe(true);
    expect(await h.stored('localLibrary')).toBeUndefined();
    await page.close();
  });

  it('names the rulesets that work for page loads only, in light and dark, with nothing for axe to find', async () => {
    const archive = join(files, 'partial.tar');
    writeFileSync(
      archive,
      tar([{ name: 'rules/Lib A.xml', data: ruleset('Lib A', 'lib-a.example.test') }]),
    );
    await o.locator('#library-archive').setInputFiles(archive);
    await o.locator('#library-apply').click({ timeout: POLL.timeout });
    await expect
      .poll(() => o.locator('#library-status').textContent(), POLL)
      .toBe('Imported 1 ruleset from partial.tar.');
    // The state the runtime keeps when Chromium cannot carry rulesets whole (library-dnr.ts),
    // as the 2018 library leaves it: written where the runtime writes it, once it has settled.
    const applied = () =>
      h.ext.worker.evaluate(async () => {
        const s = (await chrome.storage.local.get('channelDnrState')).channelDnrState as
          { applied: Record<string, unknown> } | undefined;
        return Object.keys(s?.applied ?? {}).length;
      });
    await expect.poll(applied, POLL).toBe(1);
    await h.ext.worker.evaluate(async () => {
      const s = (await chrome.storage.local.get('channelDnrState')).channelDnrState as {
        applied: Record<string, Record<string, unknown>>;
        problems: Record<string, string>;
      };
      const name = Object.keys(s.applied)[0] as string;
      s.applied[name]!.coverage = { rulesets: 3, pageLoadsOnly: ['Lib B', 'Lib C'], inPart: [] };
      s.problems[name] =
        'on Chromium, 1 of its 3 rulesets apply fully; 2 apply to page loads only (through the handoff page) and 0 in part';
      await chrome.storage.local.set({ channelDnrState: s });
    });
    await o.reload();
    await expect.poll(() => o.locator('#library-page-loads').isVisible(), POLL).toBe(true);
    expect(await o.locator('#library-page-loads-title').textContent()).toBe(
      'Number of rulesets that work only when you open a page of their sites: 2',
    );
    await o.locator('#library-page-loads summary').click();
    expect(await o.locator('#library-page-loads-list li').allTextContents()).toEqual([
      'Lib B',
      'Lib C',
    ]);
    expect(await o.locator('#library-browser-problem > span').textContent()).toMatch(
      /^In this browser, some of the library's rulesets work only when you open a page/,
    );
    for (const scheme of ['light', 'dark'] as const) {
      await o.emulateMedia({ colorScheme: scheme });
      await shot(o, `chromium-library-page-loads-${scheme}`, {
        part: '#library',
        texts: ['Lib B', 'Lib C'],
      });
      expect(await axeViolations(o)).toEqual([]);
    }
    await o.emulateMedia({ colorScheme: 'light' });
    o.once('dialog', (d) => void d.accept());
    await o.locator('#library-remove').click();
    await expect.poll(() => o.locator('#library-none').isVisible(), POLL).toBe(true);
  });

  it('refuses an archive whose names climb out of the library and a file that is not an archive, with a reason', async () => {
    const bad = join(files, 'bad.zip');
    writeFileSync(bad, 'not a zip at all');
    await o.locator('#library-archive').setInputFiles(bad);
    // The sentence says what to do; the reader's own words wait under "Details".
    const sentence = () => o.locator('#library-error > span').textContent();
    await expect
      .poll(sentence, POLL)
      .toMatch(/^Nothing was imported: this file is not a ruleset library\. Choose /);
    expect(await o.locator('#library-error details code').textContent()).toBe(
      'not a .zip, .tar or .tar.gz archive',
    );
    const escape = join(files, 'escape.tar');
    writeFileSync(
      escape,
      tar([{ name: '../Evil.xml', data: ruleset('Evil', 'evil.example.test') }]),
    );
    await o.locator('#library-archive').setInputFiles(escape);
    await expect
      .poll(sentence, POLL)
      .toMatch(/^Nothing was imported: there are no rulesets \(\.xml files\) in it\./);
    expect(await o.locator('#library-error li').allTextContents()).toEqual([
      expect.stringMatching(/^\.\.\/Evil\.xml: the name leads outside the library/),
    ]);
    expect(await o.locator('#library-none').isVisible()).toBe(true);
    // A zip bomb (2000 entries sharing one compressed stream) is refused by the worker, with the reason.
    const shared = deflateSync(new TextEncoder().encode(ruleset('Bomb', 'bomb.example.test')));
    const bomb = join(files, 'bomb.zip');
    writeFileSync(
      bomb,
      rawZip(
        Array.from({ length: 2000 }, (_, i) => ({
          name: `r${i}.xml`,
          data: shared,
          declared: 100,
        })),
      ),
    );
    await o.locator('#library-archive').setInputFiles(bomb);
    await expect
      .poll(sentence, POLL)
      .toMatch(
        /^Nothing was imported: this file is built to unpack into far more than it seems to hold/,
      );
    expect(await o.locator('#library-error details code').textContent()).toMatch(
      /^the \.zip file is not a plain archive: .* share their data/,
    );
    expect(await o.locator('#library-cancel').isHidden()).toBe(true);
    expect(await o.locator('#library-none').isVisible()).toBe(true);
  });
});
