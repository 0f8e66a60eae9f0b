import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './support/axe.js';
import { POLL, shot, startUiHarness, type UiHarness } from './support/ui-harness.js';

describe('popup in Chromium: status line, rulesets, site switch, rules, global switch, icon', () => {
  let h: UiHarness;
  let page: Page;
  let server: UiHarness['server'];
  let url: UiHarness['url'];
  let stored: UiHarness['stored'];
  let tabIdOf: UiHarness['tabIdOf'];
  let openPopup: UiHarness['openPopup'];
  // Playwright types the page function's argument as its serialised form, which a generic A cannot be
  // proven equal to; the callers pass numbers and null, which serialise to themselves.
  const worker = <T, A>(fn: (arg: A) => Promise<T> | T, arg: A): Promise<T> =>
    h.ext.worker.evaluate(fn as (arg: unknown) => Promise<T> | T, arg as unknown);
  const status = (p: Page) => p.locator('#status-title').textContent();
  // A switched-off ruleset's hosts pass through the handoff page, which loads first: the load
  // that counts is the web page's.
  const webPageLoad = () =>
    page.waitForEvent('load', { predicate: (p) => !p.url().startsWith('chrome-extension:') });
  const go = async (to: string) => {
    await page.goto(to);
    await page.waitForURL((u) => u.protocol !== 'chrome-extension:');
  };
  const names = (p: Page, sel: string) =>
    p
      .locator(`${sel} input`)
      .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).dataset.name));

  beforeAll(async () => {
    h = await startUiHarness(null, { modeOff: true });
    ({ server, url, stored, tabIdOf, openPopup } = h);
    page = await h.ext.context.newPage();
  });

  afterAll(async () => {
    await h?.close();
  });

  it('says what state the page is in, lists its rulesets (default-off apart) with counts, icon and badge', async () => {
    await go(url('exp.example.test'));
    expect(page.url()).toBe(url('exp.example.test'));
    const popup = await openPopup(page);
    // Main frame first, then alphabetical; grouped by default state.
    await expect
      .poll(() => names(popup, '#stable-rules'), POLL)
      .toEqual(['CDN Rules', 'Site Rules']);
    expect(await names(popup, '#experimental-rules')).toEqual(['Experimental Rules']);
    expect(await popup.locator('#experimental-rules label').getAttribute('title')).toBe(
      'breaks video',
    );
    expect(await popup.locator('#experimental-rules input').isChecked()).toBe(false);
    expect(await status(popup)).toBe('Not secure: no rule for this site');
    expect(await popup.locator('#site-host').textContent()).toBe(`exp.example.test:${server.port}`);
    await expect
      .poll(() => popup.locator('#upgraded-count').textContent(), POLL)
      .toBe('2 requests upgraded on this page');
    // Every switch has one size and its label.
    const sizes = await popup
      .locator('input.switch:visible')
      .evaluateAll((els) =>
        els.map((e) => `${e.getBoundingClientRect().width}x${e.getBoundingClientRect().height}`),
      );
    expect(sizes.length).toBe(5);
    expect(new Set(sizes)).toEqual(new Set(['36x20']));
    expect(await popup.getByRole('switch', { name: 'Experimental Rules' }).isVisible()).toBe(true);
    expect(
      await popup
        .getByRole('switch', { name: 'HTTPS-first Try every site over HTTPS, even without a rule' })
        .isVisible(),
    ).toBe(true);
    // Keyboard: Tab reaches every control in order, Space flips a switch.
    await popup.locator('body').focus();
    const order: string[] = [];
    for (let i = 0; i < 10; i++) {
      await popup.keyboard.press('Tab');
      order.push(
        await popup.evaluate(
          () =>
            (document.activeElement as HTMLElement).id ||
            (document.activeElement as HTMLInputElement).dataset.name ||
            document.activeElement!.tagName,
        ),
      );
    }
    expect(order).toEqual([
      'global-enabled',
      'status-action',
      'site-mode-everything',
      'SUMMARY',
      'CDN Rules',
      'Site Rules',
      'Experimental Rules',
      'https-first',
      'SUMMARY',
      'open-options',
    ]);
    // The site's three states, the current one chosen; the status card has its action.
    expect(await popup.getByRole('radio', { name: 'Everything' }).isChecked()).toBe(true);
    expect(await popup.locator('#status-action').textContent()).toBe('Turn on HTTPS-first');
    // Nothing to reset yet: the destructive action is not offered.
    expect(await popup.locator('#reset-defaults').isHidden()).toBe(true);
    expect(await axeViolations(popup)).toEqual([]);
    const tabId = await tabIdOf(page);
    await expect
      .poll(() => worker(async (t) => chrome.action.getBadgeText({ tabId: t }), tabId), POLL)
      .toBe('2');
    // The badge can be switched off (a change from any window applies).
    await worker(async () => chrome.storage.local.set({ showBadge: false }), null);
    await expect
      .poll(() => worker(async (t) => chrome.action.getBadgeText({ tabId: t }), tabId), POLL)
      .toBe('');
    await worker(async () => chrome.storage.local.set({ showBadge: true }), null);
    await expect
      .poll(() => worker(async (t) => chrome.action.getBadgeText({ tabId: t }), tabId), POLL)
      .toBe('2');
    expect(await worker(async (t) => chrome.action.getTitle({ tabId: t }), tabId)).toBe('httpsify');
    const texts = [
      'Not secure: no rule for this site',
      'Turn on HTTPS-first',
      'Everything',
      'Rules only',
      'Site not working?',
      'Rulesets for this page',
      'CDN Rules',
      'Off by default',
      'Experimental Rules',
      'Everywhere',
      'HTTPS-first',
      'Settings',
    ];
    await shot(popup, 'chromium-popup-light', { width: 360, texts });
    await popup.emulateMedia({ colorScheme: 'dark' });
    expect(await popup.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(
      'rgb(27, 29, 33)',
    );
    expect(await axeViolations(popup)).toEqual([]);
    await shot(popup, 'chromium-popup-dark', { width: 360, texts });
    // Space flips a focused switch (HTTPS-first on reloads the page, off leaves it). The reload
    // must be over before the next test navigates, or its late requests land on the next page.
    await popup.locator('#https-first').focus();
    const reloaded = webPageLoad();
    await popup.keyboard.press('Space');
    await expect.poll(() => stored('httpsFirst'), POLL).toBe(true);
    await reloaded;
    await popup.keyboard.press('Space');
    await expect.poll(() => stored('httpsFirst'), POLL).toBe(false);
    await popup.close();
  });

  it('an upgraded page says which ruleset did it; a page without "Off by default" rulesets shows no such section', async () => {
    await go(url('site.example.test', '/secure'));
    expect(page.url()).toBe(`https://site.example.test:${server.port}/secure`);
    const popup = await openPopup(page);
    await expect.poll(() => status(popup), POLL).toBe('Secure: upgraded to HTTPS');
    expect(await popup.locator('#status-detail').textContent()).toBe(
      'The ruleset “Site Rules” moved this page to HTTPS.',
    );
    expect(await popup.locator('#experimental-group').isHidden()).toBe(true);
    expect(await popup.locator('#status-action').isHidden()).toBe(true);
    await shot(popup, 'chromium-popup-upgraded', {
      width: 360,
      texts: ['Secure: upgraded to HTTPS', 'Site Rules'],
    });
    // Switched off, the page says so and offers to switch it back on.
    let reloaded = webPageLoad();
    await popup.locator('input[data-name="Site Rules"]').uncheck();
    await expect.poll(() => stored('rulesetOverrides'), POLL).toEqual({ 'Site Rules': false });
    await reloaded;
    await go(url('site.example.test', '/off'));
    expect(page.url()).toBe(url('site.example.test', '/off'));
    await expect
      .poll(() => status(popup), POLL)
      .toBe('Not secure: you switched off the ruleset for this site');
    expect(await popup.locator('#status-detail').textContent()).toBe(
      '“Site Rules” would move this page to HTTPS.',
    );
    reloaded = webPageLoad();
    await popup.getByRole('button', { name: 'Switch it back on' }).click();
    await expect.poll(() => stored('rulesetOverrides'), POLL).toEqual({});
    await reloaded;
    await expect.poll(() => page.url(), POLL).toBe(`https://site.example.test:${server.port}/off`);
    await expect.poll(() => status(popup), POLL).toBe('Secure: upgraded to HTTPS');
    await popup.close();
  });

  it('popup toggles store only overrides and change what is upgraded; reset sits apart and asks first', async () => {
    await go(url('exp.example.test'));
    const popup = await openPopup(page);
    let reloaded = webPageLoad();
    await popup.locator('input[data-name="CDN Rules"]').uncheck();
    await expect.poll(() => stored('rulesetOverrides'), POLL).toEqual({ 'CDN Rules': false });
    await reloaded;
    const before = server.log.length;
    await go(url('exp.example.test', '/again'));
    await expect
      .poll(() => server.log.slice(before).find((r) => r.host === 'cdn.example.test')?.secure, POLL)
      .toBe(false);
    await popup.reload();
    await popup.waitForSelector('body[data-ready="true"]');
    reloaded = webPageLoad();
    await popup.locator('input[data-name="Experimental Rules"]').check();
    await expect
      .poll(() => stored('rulesetOverrides'), POLL)
      .toEqual({ 'CDN Rules': false, 'Experimental Rules': true });
    await reloaded;
    expect(page.url()).toBe(`https://exp.example.test:${server.port}/again`);
    // Keyboard: the reset button (in the footer, away from the rule form) opens a confirmation; Escape cancels it.
    await expect.poll(() => popup.locator('#reset-defaults').isVisible(), POLL).toBe(true);
    expect(await popup.locator('footer #reset-defaults').count()).toBe(1);
    await popup.locator('#reset-defaults').focus();
    await popup.keyboard.press('Enter');
    await expect
      .poll(
        () => popup.locator('#confirm-reset').evaluate((d) => (d as HTMLDialogElement).open),
        POLL,
      )
      .toBe(true);
    expect(await axeViolations(popup)).toEqual([]);
    await popup.keyboard.press('Escape');
    expect(await stored('rulesetOverrides')).toEqual({
      'CDN Rules': false,
      'Experimental Rules': true,
    });
    await popup.locator('#reset-defaults').click();
    // The reset reloads the tab: wait for it, or the next test's navigation races that reload.
    reloaded = webPageLoad();
    await popup.locator('#confirm-reset-ok').click();
    await expect.poll(() => stored('rulesetOverrides'), POLL).toEqual({});
    await reloaded;
    await popup.close();
  });

  it('popup switches the site off and on again (host with port) and shows it on the icon', async () => {
    await go(url('site.example.test'));
    let popup = await openPopup(page);
    const reloaded = webPageLoad();
    expect(page.url()).toBe(`https://site.example.test:${server.port}/`);
    await popup.getByRole('radio', { name: 'Off' }).check();
    await expect
      .poll(() => stored('disabledSites'), POLL)
      .toEqual([`site.example.test:${server.port}`]);
    await reloaded;
    // The page is reloaded into the state asked for: off is plain HTTP, as without httpsify.
    await expect.poll(() => page.url(), POLL).toBe(url('site.example.test'));
    await expect.poll(() => status(popup), POLL).toBe('Not secure: httpsify is off on this site');
    expect(await popup.getByRole('radio', { name: 'Off' }).isChecked()).toBe(true);
    await go(url('site.example.test', '/off'));
    expect(page.url()).toBe(url('site.example.test', '/off'));
    const tabId = await tabIdOf(page);
    await expect
      .poll(() => worker(async (t) => chrome.action.getTitle({ tabId: t }), tabId), POLL)
      .toBe('httpsify (disabled on this site)');
    await expect.poll(() => status(popup), POLL).toBe('Not secure: httpsify is off on this site');
    expect(await popup.locator('#rules').isHidden()).toBe(true);
    expect(await popup.locator('#add-rule').isHidden()).toBe(true);
    await shot(popup, 'chromium-popup-site-off', {
      width: 360,
      texts: ['httpsify is off on this site', 'Switch on for this site'],
    });
    const reloadedAgain = webPageLoad();
    await popup.getByRole('button', { name: 'Switch on for this site' }).click();
    await expect.poll(() => stored('disabledSites'), POLL).toEqual([]);
    await reloadedAgain;
    await go(url('site.example.test', '/on'));
    expect(page.url()).toBe(`https://site.example.test:${server.port}/on`);
    await popup.close();
    // A wildcard entry covers every subdomain.
    popup = await h.openOptions();
    await popup.locator('[data-list="disabledSites"] .site-input').fill('*.Example.test');
    await popup.locator('[data-list="disabledSites"] button[type="submit"]').click();
    await expect.poll(() => stored('disabledSites'), POLL).toEqual(['*.example.test']);
    // The list shows the entry once the background has applied it.
    await expect
      .poll(
        () => popup.locator('[data-list="disabledSites"] .site-list li span').allTextContents(),
        POLL,
      )
      .toEqual(['*.example.test']);
    await go(url('site.example.test', '/wild'));
    expect(page.url()).toBe(url('site.example.test', '/wild'));
    await popup.locator('[data-list="disabledSites"] .site-input').fill('not a host');
    await popup.locator('[data-list="disabledSites"] button[type="submit"]').click();
    await expect
      .poll(() => popup.locator('[data-list="disabledSites"] .site-error').isVisible(), POLL)
      .toBe(true);
    await popup.getByRole('button', { name: 'Remove *.example.test' }).click();
    await expect.poll(() => stored('disabledSites'), POLL).toEqual([]);
    await popup.close();
  });

  it('shows a site HTTPS-first leaves on HTTP and tries HTTPS there again', async () => {
    const entry = `allowed.uncovered.test:${server.port}`;
    await worker(
      async (e) => chrome.storage.local.set({ httpsFirst: true, httpAllowedSites: [e] }),
      entry,
    );
    await expect
      .poll(async () => {
        await go(url('allowed.uncovered.test'));
        return page.url();
      }, POLL)
      .toBe(url('allowed.uncovered.test'));
    const popup = await openPopup(page);
    await expect
      .poll(() => status(popup), POLL)
      .toBe('Not secure: you chose “Rules only” for this site');
    expect(await popup.locator('#status-detail').textContent()).toBe(
      `You chose “Rules only” for ${entry}: its rulesets still apply, HTTPS-first leaves it on HTTP.`,
    );
    const reloaded = webPageLoad();
    await popup.getByRole('button', { name: 'Try HTTPS again' }).click();
    await expect.poll(() => stored('httpAllowedSites'), POLL).toEqual([]);
    await reloaded;
    await expect
      .poll(() => page.url(), POLL)
      .toBe(`https://allowed.uncovered.test:${server.port}/`);
    await expect.poll(() => status(popup), POLL).toBe('Secure: upgraded to HTTPS');
    expect(await popup.locator('#status-detail').textContent()).toBe(
      'HTTPS-first tried HTTPS and the site answered.',
    );
    await popup.close();
    // Without HTTPS-first the entry changes nothing, so the popup does not mention it.
    await worker(
      async (e) => chrome.storage.local.set({ httpsFirst: false, httpAllowedSites: [e] }),
      entry,
    );
    await expect
      .poll(async () => {
        await go(url('allowed.uncovered.test', '/plain'));
        return page.url();
      }, POLL)
      .toBe(url('allowed.uncovered.test', '/plain'));
    const again = await openPopup(page);
    await expect.poll(() => again.locator('#site-host').textContent(), POLL).toBe(entry);
    expect(await status(again)).toBe('Not secure: no rule for this site');
    await again.close();
    await worker(async () => chrome.storage.local.set({ httpAllowedSites: [] }), null);
  });

  it('"Rules only" and "Site not working?" reload an HTTPS-first page into HTTP; "Everything" upgrades it again', async () => {
    await worker(async () => chrome.storage.local.set({ httpsFirst: true }), null);
    await expect
      .poll(async () => {
        await go(url('broken.uncovered.test', '/p'));
        return page.url();
      }, POLL)
      .toBe(`https://broken.uncovered.test:${server.port}/p`);
    const popup = await openPopup(page);
    await expect.poll(() => status(popup), POLL).toBe('Secure: upgraded to HTTPS');
    await popup.locator('#site-help summary').click();
    await shot(popup, 'chromium-popup-site-help', {
      width: 360,
      texts: ['Site not working?', 'Try “Rules only”', 'Turn off for this site'],
    });
    let reloaded = webPageLoad();
    await popup.getByRole('button', { name: 'Try “Rules only”' }).click();
    await expect
      .poll(() => stored('httpAllowedSites'), POLL)
      .toEqual([`broken.uncovered.test:${server.port}`]);
    await reloaded;
    await expect.poll(() => page.url(), POLL).toBe(url('broken.uncovered.test', '/p'));
    // Status and control agree.
    await expect
      .poll(() => status(popup), POLL)
      .toBe('Not secure: you chose “Rules only” for this site');
    expect(await popup.getByRole('radio', { name: 'Rules only' }).isChecked()).toBe(true);
    reloaded = webPageLoad();
    await popup.getByRole('radio', { name: 'Everything' }).check();
    await expect.poll(() => stored('httpAllowedSites'), POLL).toEqual([]);
    await reloaded;
    await expect
      .poll(() => page.url(), POLL)
      .toBe(`https://broken.uncovered.test:${server.port}/p`);
    await expect.poll(() => status(popup), POLL).toBe('Secure: upgraded to HTTPS');
    expect(await axeViolations(popup)).toEqual([]);
    await popup.close();
    await worker(async () => chrome.storage.local.set({ httpsFirst: false }), null);
  });

  it('shows the redirect-loop guard keeping a host on HTTP, and tries HTTPS again on request', async () => {
    const loopUrl = url('loop.example.test');
    await go(loopUrl).catch(() => undefined);
    await expect.poll(() => page.url(), POLL).toBe(loopUrl);
    await page.waitForFunction(
      () => document.body?.textContent?.includes('http loop.example.test'),
      undefined,
      { timeout: 20_000 },
    );
    const popup = await openPopup(page);
    await expect
      .poll(() => status(popup), POLL)
      .toBe('Not secure: kept on HTTP to stop a redirect loop');
    expect(await popup.locator('#status-detail').textContent()).toContain(
      'loop.example.test kept sending its HTTPS pages back to HTTP',
    );
    expect(await axeViolations(popup)).toEqual([]);
    await shot(popup, 'chromium-popup-loop-guard', {
      width: 360,
      texts: ['kept on HTTP to stop a redirect loop', 'Try HTTPS again'],
    });
    const secureHits = () =>
      server.log.filter((r) => r.host === 'loop.example.test' && r.secure).length;
    const before = secureHits();
    await popup.getByRole('button', { name: 'Try HTTPS again' }).click();
    // HTTPS is tried again (the site loops again, and the guard steps in again).
    await expect.poll(secureHits, POLL).toBeGreaterThan(before);
    await expect.poll(() => page.url(), POLL).toBe(loopUrl);
    await expect
      .poll(() => status(popup), POLL)
      .toBe('Not secure: kept on HTTP to stop a redirect loop');
    await popup.close();
    // The guard may still reload the verdict's URL once: leave the site (a late reload
    // interrupted the next test's navigation on a loaded machine), and again if it did.
    for (let i = 0; i < 2; i++) {
      await page.goto('about:blank').catch(() => undefined);
      await new Promise((r) => setTimeout(r, 1000));
    }
    await expect.poll(() => page.url(), POLL).toBe('about:blank');
  });

  it('adds a rule from just the site name; the pattern editor stays for experts', async () => {
    await go(url('new.uncovered.test'));
    expect(page.url()).toBe(url('new.uncovered.test'));
    const popup = await openPopup(page);
    await popup.locator('#add-rule summary').first().click();
    expect(await popup.getByRole('textbox', { name: 'Site' }).inputValue()).toBe(
      'new.uncovered.test',
    );
    // Expert mode: the pattern is checked by the engine and `httpsify check` before saving.
    await popup.locator('#advanced-rule summary').click();
    expect(await popup.locator('#rule-from').inputValue()).toBe(
      `^http://new\\.uncovered\\.test:${server.port}/`,
    );
    await popup.locator('#rule-from').fill('^http://(new');
    await popup.locator('#add-rule-form button[type="submit"]').click();
    await expect.poll(() => popup.locator('#add-rule-errors li').count(), POLL).toBeGreaterThan(0);
    await popup.locator('#rule-from').fill('^http://new\\.uncovered\\.test');
    await popup.locator('#add-rule-form button[type="submit"]').click();
    await expect
      .poll(() => popup.locator('#add-rule-errors').textContent(), POLL)
      .toContain('must end its host part with "/"');
    expect((await stored('userRules')) ?? []).toEqual([]);
    expect(await axeViolations(popup)).toEqual([]);
    await shot(popup, 'chromium-popup-add-rule', {
      width: 360,
      texts: ['Always use HTTPS for this site', 'From (regular expression)'],
    });
    // Not a site name: a sentence and its fix, the checks' own words under "Details".
    await popup.getByRole('textbox', { name: 'Site' }).fill('my bank');
    await popup.getByRole('button', { name: 'Always use HTTPS for this site' }).click();
    await expect
      .poll(() => popup.locator('#add-rule-errors li > span').first().textContent(), POLL)
      .toBe(
        '“my bank” is not a site name. Type a name such as example.com, or paste the site’s address.',
      );
    expect(await popup.locator('#add-rule-errors li code').first().isVisible()).toBe(false);
    // A pasted address counts by its site.
    await popup
      .getByRole('textbox', { name: 'Site' })
      .fill(`http://new.uncovered.test:${server.port}/some/page?x=1`);
    // The plain way: the site's name and one button.
    const reloaded = webPageLoad();
    await popup.getByRole('button', { name: 'Always use HTTPS for this site' }).click();
    await expect
      .poll(
        async () => (((await stored('userRules')) ?? []) as { name: string }[]).map((r) => r.name),
        POLL,
      )
      .toEqual(['User rule: new.uncovered.test']);
    await reloaded;
    await go(url('new.uncovered.test', '/x'));
    expect(page.url()).toBe(`https://new.uncovered.test:${server.port}/x`);
    await popup.close();
  });

  it('global switch off leaves every page alone, says so and greys the icon', async () => {
    const popup = await openPopup(page);
    const reloaded = webPageLoad();
    await popup.getByRole('switch', { name: 'httpsify on or off everywhere' }).uncheck();
    await expect.poll(() => stored('globalEnabled'), POLL).toBe(false);
    await reloaded;
    await go(url('site.example.test', '/global-off'));
    expect(page.url()).toBe(url('site.example.test', '/global-off'));
    // The icon follows within a moment (refreshes close together go out together).
    const tabId = await tabIdOf(page);
    await expect
      .poll(() => worker(async (t) => chrome.action.getTitle({ tabId: t }), tabId), POLL)
      .toBe('httpsify (off)');
    await popup.reload();
    await popup.waitForSelector('body[data-ready="true"]');
    expect(await status(popup)).toBe('httpsify is off');
    expect(await popup.locator('#content').isHidden()).toBe(true);
    await shot(popup, 'chromium-popup-off', { width: 360, texts: ['httpsify is off', 'Turn on'] });
    const back = webPageLoad();
    await popup.getByRole('button', { name: 'Turn on' }).click();
    await expect.poll(() => stored('globalEnabled'), POLL).toBe(true);
    await back;
    await expect
      .poll(() => page.url(), POLL)
      .toBe(`https://site.example.test:${server.port}/global-off`);
    expect(await popup.locator('#global-enabled').isChecked()).toBe(true);
    await popup.close();
  });

  it('opened without a web page shows a plain message and nothing else', async () => {
    const popup = await h.ext.context.newPage();
    await popup.setViewportSize({ width: 360, height: 560 });
    await popup.goto(`chrome-extension://${h.id}/ui/popup.html?tabId=999999`);
    await popup.waitForSelector('body[data-ready="true"]');
    expect(await status(popup)).toBe('httpsify works on web pages');
    for (const part of ['#site', '#rules', '#everywhere', '#add-rule'])
      expect(await popup.locator(part).isVisible(), part).toBe(false);
    expect(await axeViolations(popup)).toEqual([]);
    await shot(popup, 'chromium-popup-no-page', {
      width: 360,
      texts: ['httpsify works on web pages'],
    });
    await popup.close();
  });
});
