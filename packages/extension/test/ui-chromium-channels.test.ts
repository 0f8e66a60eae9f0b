import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChannelDefinition } from '@httpsify/engine/channels';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChannelServer,
  makeCertificate,
  startChannelServer,
  testKeyPair,
} from '../../engine/test/channels-support.js';
import {
  publishChannelFiles,
  rulesetsOf,
  testDefinition,
  type TestPublisher,
  testPublisher,
} from './support/channels.js';
import { POLL, shot, startUiHarness, type UiHarness } from './support/ui-harness.js';

/** The channel's ruleset covers two hosts; its scope admits only one of them. */
const CHANNEL_RULESETS = rulesetsOf(
  '<ruleset name="Channel Rules"><target host="chan.example.test"/><target host="out.example.test"/><rule from="^http:" to="https:"/></ruleset>',
);
const SCOPE = '^https?://([^/]*\\.)?chan\\.example\\.test[:/]';

describe('update channels in Chromium', () => {
  let h: UiHarness;
  let server: ChannelServer;
  let root: string;
  let publisher: TestPublisher;
  let definition: ChannelDefinition;
  let o: Page;
  const now = Math.floor(Date.now() / 1000);
  // Two days old, for a channel whose maximum age is one day: installed, and shown as stale.
  const T1 = now - 2 * 86_400;
  const T2 = now - 60;
  // T2 + 30 is the last version published: still not in the future.

  /** Where a navigation to the http:// URL ends up (https when an upgrade rule fired). */
  async function landsOn(host: string): Promise<string> {
    const page = await h.ext.context.newPage();
    try {
      await page.goto(h.url(host, '/page'));
      return new URL(page.url()).protocol;
    } finally {
      await page.close();
    }
  }

  beforeAll(async () => {
    [h, publisher] = await Promise.all([startUiHarness(null, { modeOff: true }), testPublisher()]);
    root = mkdtempSync(join(tmpdir(), 'httpsify-e2e-channel-'));
    server = await startChannelServer(makeCertificate(), root);
    definition = testDefinition(publisher, server.urlPrefix, { scope: SCOPE, maxAgeDays: 1 });
    await publishChannelFiles(root, definition, publisher, CHANNEL_RULESETS, T1);
    // A static server that labels .gz files "gzip-encoded": the browser inflates them on the way.
    server.faults.set(`rulesets.${T1}.bundle.gz`, { kind: 'encoding', encoding: 'gzip' });
    o = await h.openOptions();
  });

  afterAll(async () => {
    await h?.close();
    await server?.close();
  });

  it('adds a channel from its pasted definition, showing definition errors inline', async () => {
    await o.locator('#channel-definition').fill('{"format": 2, "name": "Broken"}');
    await o.locator('#channel-add').click();
    await expect
      .poll(() => o.locator('#channel-add-error').textContent(), POLL)
      .toContain('"urlPrefix" must be a string');
    // In words first; the parser's message only under "Details".
    expect(await o.locator('#channel-add-error > span').textContent()).toMatch(
      /^The definition is incomplete or damaged\./,
    );
    expect(await o.locator('#channel-add-error details').getAttribute('open')).toBeNull();
    expect(await h.stored('channels')).toBeUndefined();

    await o.locator('#channel-definition').fill(
      JSON.stringify({
        name: 'Old',
        urlPrefix: server.urlPrefix,
        publicKey: publisher.root.publicKey,
        scope: SCOPE,
      }),
    );
    await o.locator('#channel-add').click();
    await expect
      .poll(() => o.locator('#channel-add-error').textContent(), POLL)
      .toContain('format 1 channel definition');

    await o
      .locator('#channel-definition')
      .fill(JSON.stringify({ format: 2, ...definition }, null, 2));
    await o.locator('#channel-add').click();
    // Confirmed like a channel from a settings file: by name and source, before anything is added.
    await o.locator('#channel-confirm').waitFor({ state: 'visible', timeout: POLL.timeout });
    expect(await o.locator('#channel-confirm-trust-text').textContent()).toBe(
      `I trust “Test channel” from ${server.urlPrefix}`,
    );
    expect(await o.locator('#channel-confirm-fields').textContent()).toContain(SCOPE);
    expect(await o.locator('#channel-confirm-add').isDisabled()).toBe(true);
    expect(await h.stored('channels')).toBeUndefined();
    await shot(o, 'options-channel-confirm', { part: '#channels', texts: ['I trust'] });
    await o.locator('#channel-confirm-trust').check();
    await o.locator('#channel-confirm-add').click();
    await expect
      .poll(() => o.locator('#channel-list .channel h3').allTextContents(), POLL)
      .toEqual(['Test channel']);
    expect(await o.locator('#channel-add-error').isHidden()).toBe(true);
    expect(((await h.stored('channels')) as { name: string }[]).map((c) => c.name)).toEqual([
      'Test channel',
    ]);
  });

  it('"Check now" installs the signed bundle and shows its timestamp; the rules apply within the scope only', async () => {
    // Adding checked the channel at once ("updated"); "Check now" finds it up to date.
    expect(await o.locator('#channel-list .channel-result').getAttribute('class')).toContain(
      'updated',
    );
    await o.locator('#channel-list .channel-check').click();
    await expect
      .poll(() => o.locator('#channel-list .channel-result').getAttribute('class'), POLL)
      .toContain('current');
    const installed = o.locator('#channel-list .channel-installed time');
    expect(await installed.getAttribute('datetime')).toBe(new Date(T1 * 1000).toISOString());
    expect(await o.locator('#channel-list .channel-installed').textContent()).toContain(
      ' · 1 ruleset · installed ',
    );
    expect(await o.locator('#channel-list .channel-problem').count()).toBe(0);
    // Older than its maximum age: said in plain words, and the rules still apply (below).
    expect(await o.locator('#channel-list .channel-stale').textContent()).toContain(
      'older than 1 day, the most it allows',
    );
    // One status, and it does not say "up to date" beside "too old".
    expect(await o.locator('#channel-list .channel-pill').allTextContents()).toEqual(['Problem']);
    // The record is one storage key with the bundle inside.
    const record = (await h.stored('channel:Test channel')) as {
      installed: { timestamp: number; bundle: string };
    };
    expect(record.installed.timestamp).toBe(T1);
    await shot(o, 'options-channels');

    await expect.poll(() => landsOn('chan.example.test'), POLL).toBe('https:');
    // Same ruleset, but out.example.test lies outside the channel's scope.
    expect(await landsOn('out.example.test')).toBe('http:');
    // The defaults still work next to the channel.
    expect(await landsOn('site.example.test')).toBe('https:');
  });

  it('a saved bundle that no longer verifies shows as not in use, and "Check now" downloads it again', async () => {
    // One byte of the saved copy changes, as a damaged disk or profile may do.
    await o.evaluate(async () => {
      const key = 'channel:Test channel';
      const record = (await chrome.storage.local.get(key))[key] as {
        installed: { bundle: string };
      };
      const bytes = atob(record.installed.bundle);
      const i = bytes.length >> 1;
      const damaged = bytes.slice(0, i) + String.fromCharCode(bytes.charCodeAt(i) ^ 0xff);
      await chrome.storage.local.set({
        [key]: {
          ...record,
          installed: { ...record.installed, bundle: btoa(damaged + bytes.slice(i + 1)) },
        },
      });
    });
    // The background starts again (as after a browser restart) and reads the saved copy.
    const cdp = await h.ext.context.newCDPSession(await h.ext.context.newPage());
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    await o.reload();
    await o.waitForSelector('body[data-ready="true"]');
    // The harness reads storage through the worker: the one running now.
    await expect
      .poll(async () => {
        for (const w of h.ext.context.serviceWorkers()) {
          if ((await w.evaluate(() => 1).catch(() => 0)) === 1) {
            h.ext.worker = w;
            return true;
          }
        }
        return false;
      }, POLL)
      .toBe(true);
    await expect
      .poll(() => o.locator('#channel-list .channel-pill').allTextContents(), POLL)
      .toEqual(['Not in use']);
    expect(await o.locator('#channel-list .channel-not-in-use > span').textContent()).toBe(
      'The saved copy of this channel’s rules is damaged, so they are not in use. Choose “Check now” to download them again.',
    );
    // Not shown as installed, not blamed on this browser, not "too old".
    expect(await o.locator('#channel-list .channel-installed').count()).toBe(0);
    expect(await o.locator('#channel-list dl').textContent()).toContain('none in use');
    expect(
      await o.locator('#channel-list .channel-problem, #channel-list .channel-stale').count(),
    ).toBe(0);
    await shot(o, 'options-channel-damaged', { part: '#channels', texts: ['Not in use'] });
    await expect.poll(() => landsOn('chan.example.test'), POLL).toBe('http:');

    await o.locator('#channel-list .channel-check').click();
    await expect
      .poll(() => o.locator('#channel-list .channel-installed time').getAttribute('datetime'), POLL)
      .toBe(new Date(T1 * 1000).toISOString());
    expect(await o.locator('#channel-list .channel-not-in-use').count()).toBe(0);
    await expect.poll(() => landsOn('chan.example.test'), POLL).toBe('https:');
  });

  it('a badly signed newer bundle shows the error on "Check now" and the previous rules stay', async () => {
    const impostor = await testKeyPair();
    await publishChannelFiles(
      root,
      definition,
      publisher,
      CHANNEL_RULESETS.map((r) => ({ ...r, name: 'Changed' })),
      T2,
      { signWith: impostor },
    );
    await o.locator('#channel-list .channel-check').click();
    await expect
      .poll(() => o.locator('#channel-list .channel-error').textContent(), POLL)
      .toContain('[bad-signature]');
    expect(await o.locator('#channel-list .channel-error > span').textContent()).toMatch(
      /^The update is not signed with the channel’s key.* The rules you had stay in use\.$/,
    );
    expect(await o.locator('#channel-list .channel-installed time').getAttribute('datetime')).toBe(
      new Date(T1 * 1000).toISOString(),
    );
    expect(
      ((await h.stored('channel:Test channel')) as { installed: { timestamp: number } }).installed
        .timestamp,
    ).toBe(T1);
    expect(await landsOn('chan.example.test')).toBe('https:');
    expect(await landsOn('out.example.test')).toBe('http:');
    // The server saw the check (it fetched the new timestamp's files).
    expect(server.requests).toContain(`/channel/rulesets.${T2}.release.sig`);
  });

  it('refuses a redirect it cannot check (the browser hides where it goes) and says so', async () => {
    server.faults.set('latest-timestamp', {
      kind: 'redirect',
      status: 302,
      location: `${server.urlPrefix.replace('https:', 'http:')}latest-timestamp`,
    });
    try {
      await o.locator('#channel-list .channel-check').click();
      await expect
        .poll(() => o.locator('#channel-list .channel-error').textContent(), POLL)
        .toContain('[insecure-redirect]');
      expect(await landsOn('chan.example.test')).toBe('https:');
    } finally {
      server.faults.delete('latest-timestamp');
    }
  });

  it('removing the channel (after confirming) removes its record and its rules', async () => {
    o.once('dialog', (d) => void d.accept());
    await o.locator('#channel-list .channel-remove').click();
    await expect.poll(() => o.locator('#channel-list .channel').count(), POLL).toBe(0);
    await expect.poll(() => h.stored('channel:Test channel'), POLL).toBeUndefined();
    await expect.poll(() => landsOn('chan.example.test'), POLL).toBe('http:');
  });

  it('refuses on Chromium a channel whose scope cannot be enforced, saying why, rather than widening it', async () => {
    // The publisher fixed the signature: a good, newer bundle.
    const path = {
      ...definition,
      name: 'Path channel',
      scope: '^http://chan\\.example\\.test/only/',
    };
    await publishChannelFiles(root, path, publisher, CHANNEL_RULESETS, T2 + 30);
    await o.locator('#channel-definition').fill(JSON.stringify({ format: 2, ...path }));
    await o.locator('#channel-add').click();
    await o.locator('#channel-confirm-trust').check();
    await o.locator('#channel-confirm-add').click();
    await expect
      .poll(() => o.locator('#channel-list .channel-problem').textContent(), POLL)
      .toContain('only the host, scheme and port can be enforced on Chromium');
    // Installed (verified) all the same, and usable where the engine runs (Firefox); here it does nothing.
    expect(await o.locator('#channel-list .channel-installed time').count()).toBe(1);
    expect(await landsOn('chan.example.test')).toBe('http:');
  });
});
