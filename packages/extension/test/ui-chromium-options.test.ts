import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe.js';
import { placeholderChannel } from './support/channels.js';
import { POLL, shot, startUiHarness, type UiHarness } from './support/ui-harness.js';

const rowNames = (p: Page) =>
  p
    .locator('#ruleset-list .vrow:not([hidden]) input')
    .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).dataset.name));

describe('options page in Chromium', () => {
  let h: UiHarness;
  let o: Page;
  const files = mkdtempSync(join(tmpdir(), 'httpsify-ui-files-'));

  beforeAll(async () => {
    h = await startUiHarness(null, { modeOff: true });
    // Some traffic for the statistics.
    const page = await h.ext.context.newPage();
    await page.goto(h.url('exp.example.test'));
    await page.close();
    o = await h.openOptions();
  });

  afterAll(async () => {
    await h?.close();
  });

  it('shows version and ruleset date, fits its placeholders, hides the editor until needed, passes an accessibility audit', async () => {
    const version = await h.ext.worker.evaluate(() => chrome.runtime.getManifest().version);
    expect(await o.locator('#about-version').textContent()).toBe(`httpsify ${version}`);
    expect(await o.locator('#about-rulesets').textContent()).toMatch(
      /^4 rulesets from \w+ \d+, \d{4}$/,
    );
    // The per-site inputs show their whole placeholder.
    const fits = await o.locator('.site-input').evaluateAll((inputs) =>
      inputs.map((input) => {
        const el = input as HTMLInputElement;
        const probe = document.createElement('span');
        probe.style.font = getComputedStyle(el).font;
        probe.style.position = 'absolute';
        probe.style.whiteSpace = 'pre';
        probe.textContent = el.placeholder;
        document.body.append(probe);
        const style = getComputedStyle(el);
        const room =
          el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        const need = probe.getBoundingClientRect().width;
        probe.remove();
        return need <= room;
      }),
    );
    expect(fits).toEqual([true, true]);
    // No empty editor or Save button until the user writes or edits a rule.
    expect(await o.locator('#rule-editor').isVisible()).toBe(false);
    expect(await o.locator('#rule-save').isVisible()).toBe(false);
    // No gap before the names in the lists.
    expect(
      await o.locator('#user-rule-list').evaluate((ul) => getComputedStyle(ul).paddingLeft),
    ).toBe('0px');
    expect(await axeViolations(o)).toEqual([]);
  });

  it('shows each ruleset with its hosts and its rules on request', async () => {
    await expect
      .poll(
        () => o.locator('#ruleset-list .vrow:not([hidden]) .ruleset-hosts').allTextContents(),
        POLL,
      )
      .toEqual(['cdn.example.test', 'exp.example.test', 'loop.example.test', 'site.example.test']);
    await o.getByRole('button', { name: 'Show the rules of Site Rules' }).click();
    const viewer = o.locator('#ruleset-viewer');
    await expect.poll(() => viewer.isVisible(), POLL).toBe(true);
    expect(await viewer.locator('#viewer-title').textContent()).toBe('Site Rules');
    expect(await viewer.locator('#viewer-hosts li').allTextContents()).toEqual([
      'site.example.test',
    ]);
    expect(
      await viewer
        .locator('#viewer-rules tr')
        .evaluateAll((rows) => rows.map((r) => Array.from(r.children, (c) => c.textContent))),
    ).toEqual([['^http:', 'https:']]);
    expect(await viewer.locator('#viewer-note').textContent()).toBe(
      'Part of the rulesets that come with httpsify.',
    );
    expect(await axeViolations(o)).toEqual([]);
    await shot(o, 'chromium-options-ruleset-viewer', {
      viewport: true,
      texts: ['Site Rules', 'Sites it covers', 'How it rewrites addresses'],
    });
    await o.keyboard.press('Escape');
    await expect.poll(() => viewer.isVisible(), POLL).toBe(false);
  });

  it('lists every ruleset with search by name or host and the filters', async () => {
    expect(await o.locator('#ruleset-count').textContent()).toBe('4 of 4 rulesets');
    expect(await rowNames(o)).toEqual([
      'CDN Rules',
      'Experimental Rules',
      'Loop Rules',
      'Site Rules',
    ]);
    await o.locator('#ruleset-search').fill('cdn');
    await expect.poll(() => rowNames(o), POLL).toEqual(['CDN Rules']);
    // A host finds the rulesets that cover it even when the name does not mention it.
    await o.locator('#ruleset-search').fill('exp.example.test');
    await expect.poll(() => rowNames(o), POLL).toEqual(['Experimental Rules']);
    await o.locator('#ruleset-search').fill('');
    await o.locator('#ruleset-filter').selectOption('default-off');
    await expect.poll(() => rowNames(o), POLL).toEqual(['Experimental Rules']);
    await o.locator('#ruleset-filter').selectOption('on');
    await expect.poll(() => rowNames(o), POLL).toEqual(['CDN Rules', 'Loop Rules', 'Site Rules']);
    await o.locator('#ruleset-filter').selectOption('all');
  });

  it('toggles rulesets, filters "changed by me" and resets them in bulk after confirming', async () => {
    await o.locator('#ruleset-list input[data-name="Site Rules"]').uncheck();
    await o.locator('#ruleset-list input[data-name="Experimental Rules"]').check();
    await expect
      .poll(() => h.stored('rulesetOverrides'), POLL)
      .toEqual({ 'Site Rules': false, 'Experimental Rules': true });
    await o.locator('#ruleset-filter').selectOption('changed');
    await expect.poll(() => rowNames(o), POLL).toEqual(['Experimental Rules', 'Site Rules']);
    await shot(o, 'chromium-options-light', {
      texts: [
        'General',
        'HTTPS-first',
        'All rulesets',
        'Experimental Rules',
        'exp.example.test',
        'Statistics',
      ],
    });
    o.once('dialog', (d) => void d.dismiss());
    await o.locator('#ruleset-reset-shown').click();
    expect(await h.stored('rulesetOverrides')).toEqual({
      'Site Rules': false,
      'Experimental Rules': true,
    });
    o.once('dialog', (d) => void d.accept());
    await o.locator('#ruleset-reset-shown').click();
    await expect.poll(() => h.stored('rulesetOverrides'), POLL).toEqual({});
    await expect.poll(() => rowNames(o), POLL).toEqual([]);
    await o.locator('#ruleset-filter').selectOption('all');
  });

  it('is keyboard accessible: arrow keys move through the list, Space toggles', async () => {
    await o.locator('#ruleset-list input[data-name="CDN Rules"]').focus();
    await o.keyboard.press('ArrowDown');
    expect(await o.evaluate(() => (document.activeElement as HTMLInputElement).dataset.name)).toBe(
      'Experimental Rules',
    );
    await o.keyboard.press('Space');
    await expect
      .poll(() => h.stored('rulesetOverrides'), POLL)
      .toEqual({ 'Experimental Rules': true });
    await o.keyboard.press('Space');
    await expect.poll(() => h.stored('rulesetOverrides'), POLL).toEqual({});
  });

  it('manages per-site exceptions without visiting the sites', async () => {
    const box = o.locator('[data-list="httpAllowedSites"]');
    for (const entry of ['legacy.example.test:8080', '*.intranet.test']) {
      await box.locator('.site-input').fill(entry);
      await box.locator('.site-input').press('Enter');
    }
    await expect
      .poll(() => h.stored('httpAllowedSites'), POLL)
      .toEqual(['*.intranet.test', 'legacy.example.test:8080']);
    await expect
      .poll(() => box.locator('.site-list li span').allTextContents(), POLL)
      .toEqual(['*.intranet.test', 'legacy.example.test:8080']);
    await box.getByRole('button', { name: 'Remove legacy.example.test:8080' }).click();
    await expect.poll(() => h.stored('httpAllowedSites'), POLL).toEqual(['*.intranet.test']);
  });

  it('"Write a rule…" asks which site and where it goes, in plain fields; pasted addresses count', async () => {
    await o.locator('#user-rule-new').click();
    expect(await o.locator('#rule-form').isVisible()).toBe(true);
    // The XML editor is one step further, under "Advanced".
    expect(await o.locator('#rule-editor').isVisible()).toBe(false);
    expect(await o.locator('#rule-form-xml').isVisible()).toBe(false);
    await o.locator('#rule-form-site').fill('my bank');
    await o.locator('#rule-form-save').click();
    await expect
      .poll(() => o.locator('#rule-form-errors').textContent(), POLL)
      .toBe(
        '“my bank” is not a site name. Type a name such as example.com, or paste the site’s address.',
      );
    await o.locator('#rule-form-site').fill('http://Plain.Example.test/some/page?q=1');
    await o.locator('#rule-form-to').fill('https://www.plain.example.test/landing');
    await o.locator('#rule-form-save').click();
    await expect
      .poll(() => o.locator('#rule-form-status').textContent(), POLL)
      .toBe('Saved. httpsify now opens plain.example.test over HTTPS.');
    const rules = (await h.stored('userRules')) as { name: string; xml: string }[];
    expect(rules).toHaveLength(1);
    expect(rules[0]!.xml).toContain('<target host="plain.example.test" />');
    expect(rules[0]!.xml).toContain(
      'from="^http://plain\\.example\\.test/" to="https://www.plain.example.test/"',
    );
    o.once('dialog', (d) => void d.accept());
    await o.getByRole('button', { name: `Remove ${rules[0]!.name}` }).click();
    await expect
      .poll(async () => ((await h.stored('userRules')) ?? []) as unknown[], POLL)
      .toEqual([]);
  });

  it('edits user rules with live `httpsify check` messages, and imports/exports them as XML', async () => {
    await o.locator('#user-rule-new').click();
    await o.locator('#rule-form-advanced summary').click();
    await o.locator('#rule-form-xml').click();
    const editor = o.locator('#rule-editor');
    await editor.fill(
      '<ruleset name="Mine"><target host="mine.example.test"/><rule from="^http://mine\\.example\\.test" to="https://mine.example.test/"/></ruleset>',
    );
    await expect
      .poll(() => o.locator('#rule-diagnostics').textContent(), POLL)
      .toContain('from-prefix');
    // The finding in words first, the checker's own message under "Details".
    expect(await o.locator('#rule-diagnostics li > span').first().textContent()).toBe(
      'Line 1: An address to rewrite is not written correctly. Start “from” with ^http: and “to” with https:, as in the example.',
    );
    await o.locator('#rule-save').click();
    expect(await o.locator('#rule-save-status').textContent()).toBe(
      'Fix the errors before saving.',
    );
    await editor.fill(
      '<ruleset name="Mine"><target host="mine.example.test"/><rule from="^http://mine\\.example\\.test/" to="https://mine.example.test/"/></ruleset>',
    );
    await expect
      .poll(() => o.locator('#rule-diagnostics').textContent(), POLL)
      .toBe('No problems found.');
    await o.locator('#rule-save').click();
    await expect
      .poll(
        async () =>
          (((await h.stored('userRules')) ?? []) as { name: string }[]).map((r) => r.name),
        POLL,
      )
      .toEqual(['Mine']);
    await expect
      .poll(() => o.locator('#user-rule-list li span').allTextContents(), POLL)
      .toEqual(['Mine']);
    // Edit: renaming replaces the rule instead of adding a second one.
    await o.getByRole('button', { name: 'Edit Mine' }).click();
    await editor.fill((await editor.inputValue()).replace('name="Mine"', 'name="Mine Renamed"'));
    await o.locator('#rule-save').click();
    await expect
      .poll(
        async () =>
          (((await h.stored('userRules')) ?? []) as { name: string }[]).map((r) => r.name),
        POLL,
      )
      .toEqual(['Mine Renamed']);
    // It shows in the list of all rulesets too.
    await expect.poll(() => rowNames(o), POLL).toContain('Mine Renamed');

    const download = o.waitForEvent('download');
    await o.locator('#user-rules-export').click();
    const xml = readFileSync(await (await download).path(), 'utf8');
    expect(xml).toContain('<rulesetlibrary>');
    expect(xml).toContain('name="Mine Renamed"');

    const importFile = join(files, 'rules.xml');
    writeFileSync(
      importFile,
      xml
        .replace('Mine Renamed', 'Imported')
        .replace(/mine\\?\.example/g, (m) => m.replace('mine', 'imp')),
    );
    await o.locator('#user-rules-import').setInputFiles(importFile);
    await expect
      .poll(() => o.locator('#user-rules-import-result').textContent(), POLL)
      .toBe('Imported 1 rule.');
    await expect
      .poll(
        async () =>
          (((await h.stored('userRules')) ?? []) as { name: string }[]).map((r) => r.name),
        POLL,
      )
      .toEqual(['Imported', 'Mine Renamed']);
    o.once('dialog', (d) => void d.dismiss());
    await o.getByRole('button', { name: 'Remove Imported' }).click();
    expect(
      (((await h.stored('userRules')) ?? []) as { name: string }[]).map((r) => r.name),
    ).toEqual(['Imported', 'Mine Renamed']);
    o.once('dialog', (d) => void d.accept());
    await o.getByRole('button', { name: 'Remove Imported' }).click();
    await expect
      .poll(
        async () =>
          (((await h.stored('userRules')) ?? []) as { name: string }[]).map((r) => r.name),
        POLL,
      )
      .toEqual(['Mine Renamed']);
  });

  it('exports all settings as JSON and imports them back', async () => {
    await o.locator('#opt-mixedContent').check();
    await expect.poll(() => h.stored('mixedContent'), POLL).toBe(true);
    const download = o.waitForEvent('download');
    await o.locator('#settings-export').click();
    const data = JSON.parse(readFileSync(await (await download).path(), 'utf8'));
    expect(data.format).toBe('httpsify-settings');
    expect(data.settings.mixedContent).toBe(true);
    expect(data.settings.httpAllowedSites).toEqual(['*.intranet.test']);

    // A damaged file is refused whole: nothing changes, and the page says what is wrong.
    const file = join(files, 'settings.json');
    const userRulesBefore = await h.stored('userRules');
    writeFileSync(
      file,
      JSON.stringify({
        ...data,
        settings: {
          ...data.settings,
          userRules: 'garbage',
          disabledSites: ['imported.example.test', 'not a site'],
        },
      }),
    );
    await o.locator('#settings-import').setInputFiles(file);
    // Each problem is a sentence with a fix; the raw message (with the setting's key) under "Details".
    await expect
      .poll(() => o.locator('#settings-import-problems li code').allTextContents(), POLL)
      .toEqual([
        'disabledSites: "not a site" is not a host, host:port or *.domain',
        'userRules: must be a list of rules, got "garbage"',
      ]);
    expect(await o.locator('#settings-import-problems li > span').allTextContents()).toEqual([
      'One setting in the file has a value httpsify cannot use. Export the settings again, or correct that entry in the file.',
      'One setting in the file has a value httpsify cannot use. Export the settings again, or correct that entry in the file.',
    ]);
    expect(await o.locator('#settings-import-problems li code').first().isVisible()).toBe(false);
    expect(await o.locator('#import-review').isHidden()).toBe(true);
    expect(await h.stored('userRules')).toEqual(userRulesBefore);
    expect(await h.stored('mixedContent')).toBe(true);
    // A good file: first what it would change, then one click applies it.
    data.settings.mixedContent = false;
    data.settings.disabledSites = ['imported.example.test'];
    data.settings.channels = [
      placeholderChannel({ name: 'Imported channel', urlPrefix: 'https://rules.example.org/v1/' }),
    ];
    // A user rule that sends a site elsewhere: shown in plain words, and it needs its own tick too.
    data.settings.userRules = [
      ...data.settings.userRules,
      {
        name: 'Imported rule',
        xml: '<ruleset name="Imported rule">\n  <target host="bank.example.test" />\n  <rule from="^http://bank\\.example\\.test/" to="https://attacker.example.net/" />\n</ruleset>\n',
      },
    ];
    writeFileSync(file, JSON.stringify(data));
    await o.locator('#settings-import').setInputFiles(file);
    await expect.poll(() => o.locator('#import-review').isVisible(), POLL).toBe(true);
    expect(await o.locator('#import-changes li').allTextContents()).toEqual([
      'Mixed-content rulesets: on → off',
      'Off: httpsify does nothing: adds imported.example.test',
      'Your rules: adds Imported rule',
      'Update channels: adds Imported channel',
    ]);
    expect(await o.locator('#import-rule-list .import-rule p').allTextContents()).toEqual([
      'Applies to: bank.example.test',
    ]);
    expect(await o.locator('#import-rule-list .import-rule li').allTextContents()).toEqual([
      'Warning: sends you to attacker.example.net, a site this rule is not for',
    ]);
    // The channel and the rule each need their own tick before anything can be applied.
    expect(await o.locator('#import-apply').isDisabled()).toBe(true);
    await o.getByLabel('I trust the rule “Imported rule”').check();
    expect(await o.locator('#import-apply').isDisabled()).toBe(true);
    expect(await axeViolations(o)).toEqual([]);
    await shot(o, 'chromium-options-import-preview', {
      part: '#backup',
      texts: ['This file would change', 'Imported channel', 'I trust'],
    });
    await o.getByLabel('I trust “Imported channel” from https://rules.example.org/v1/').check();
    expect(await h.stored('mixedContent')).toBe(true);
    await o.locator('#import-apply').click();
    await expect
      .poll(() => o.locator('#settings-import-result').textContent(), POLL)
      .toBe('Settings imported.');
    expect(await h.stored('disabledSites')).toEqual(['imported.example.test']);
    expect(await h.stored('mixedContent')).toBe(false);
    expect(((await h.stored('channels')) as { name: string }[]).map((c) => c.name)).toEqual([
      'Imported channel',
    ]);
    expect(((await h.stored('userRules')) as { name: string }[]).map((r) => r.name)).toContain(
      'Imported rule',
    );
    await expect.poll(() => o.locator('#opt-mixedContent').isChecked(), POLL).toBe(false);
    writeFileSync(file, '{ not json');
    await o.locator('#settings-import').setInputFiles(file);
    await expect
      .poll(() => o.locator('#settings-import-problems').textContent(), POLL)
      .toContain('the file is not JSON');
  });

  it('shows statistics and repaired storage, and renders in dark mode', async () => {
    await o.reload();
    await o.waitForSelector('body[data-ready="true"]');
    expect(Number(await o.locator('#stat-upgrades').textContent())).toBeGreaterThanOrEqual(2);
    expect(await o.locator('#stat-http-hosts li').allTextContents()).toContain(
      `exp.example.test:${h.server.port}`,
    );
    // Traffic while the page is open shows up on it, with no reload.
    const shown = Number(await o.locator('#stat-upgrades').textContent());
    const page = await h.ext.context.newPage();
    await page.goto(h.url('exp.example.test', '/more'));
    await page.close();
    await expect
      .poll(async () => Number(await o.locator('#stat-upgrades').textContent()), POLL)
      .toBeGreaterThan(shown);
    // Damage storage behind the extension's back: the next read repairs it and says so.
    await h.ext.worker.evaluate(() =>
      chrome.storage.local.set({ disabledSites: ['fine.example.test', 42], showBadge: 'maybe' }),
    );
    await o.reload();
    await o.waitForSelector('body[data-ready="true"]');
    await expect.poll(() => o.locator('#repairs').isVisible(), POLL).toBe(true);
    const items = await o.locator('#repair-list li').allTextContents();
    expect(items.some((t) => t.includes('disabledSites') && t.includes('42'))).toBe(true);
    // Named as the page names the setting; the internal key only under "Details".
    const sentences = await o.locator('#repair-list li > span').allTextContents();
    expect(sentences).toContain(
      '“Count on the toolbar icon” held a value httpsify could not use; it was set back to what it safely can be. Check it below.',
    );
    expect(sentences.join(' ')).not.toMatch(/showBadge|disabledSites/);
    expect(await h.stored('disabledSites')).toEqual(['fine.example.test']);
    expect(await h.stored('showBadge')).toBe(true);
    // Every ruleset shows its real state after the round trips above.
    expect(await h.stored('rulesetOverrides')).toEqual({});
    expect(await o.locator('#ruleset-list .tag.changed').count()).toBe(0);
    await o.emulateMedia({ colorScheme: 'dark' });
    const bg = await o.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(27, 29, 33)');
    expect(await axeViolations(o)).toEqual([]);
    await shot(o, 'chromium-options-dark', {
      texts: ['Some saved settings were damaged', 'General', 'All rulesets', 'Statistics'],
    });
    await o.locator('#repairs-dismiss').click();
    await expect.poll(() => o.locator('#repairs').isVisible(), POLL).toBe(false);
    // Statistics reset (confirmed): empty states instead of bare headings.
    o.once('dialog', (d) => void d.accept());
    await o.locator('#stats-reset').click();
    await expect.poll(() => o.locator('#stat-http-empty').isVisible(), POLL).toBe(true);
    expect(await o.locator('#stat-http-empty').textContent()).toBe(
      'None since the counters were last reset.',
    );
    expect(await o.locator('#stat-upgrades').textContent()).toBe('0');
  });
});
