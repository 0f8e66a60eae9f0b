import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKeyPair, type SigningKeyPair } from '@httpsify/engine/channels';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChannelServer, makeCertificate, startChannelServer } from '../../engine/test/channels-support.js';
import { publishChannelFiles, rulesetsOf } from './support/channels.js';
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
  let key: SigningKeyPair;
  let o: Page;
  const now = Math.floor(Date.now() / 1000);
  const T1 = now - 3600;
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
    [h, key] = await Promise.all([startUiHarness(), generateSigningKeyPair(2048)]);
    root = mkdtempSync(join(tmpdir(), 'httpsify-e2e-channel-'));
    server = await startChannelServer(makeCertificate(), root);
    await publishChannelFiles(root, CHANNEL_RULESETS, T1, key.privateKey);
    o = await h.openOptions();
  });

  afterAll(async () => {
    await h?.close();
    await server?.close();
  });

  it('adds a channel from its pasted definition, showing definition errors inline', async () => {
    await o.locator('#channel-definition').fill('{"name": "Broken"}');
    await o.locator('#channel-add').click();
    await expect.poll(() => o.locator('#channel-add-error').textContent(), POLL).toContain('"urlPrefix" must be a string');
    expect(await h.stored('channels')).toBeUndefined();

    const definition = { name: 'Test channel', urlPrefix: server.urlPrefix, publicKey: key.publicKey, scope: SCOPE, replacesDefaults: false };
    await o.locator('#channel-definition').fill(JSON.stringify(definition, null, 2));
    await o.locator('#channel-add').click();
    await expect.poll(() => o.locator('#channel-list .channel h3').allTextContents(), POLL).toEqual(['Test channel']);
    expect(await o.locator('#channel-add-error').isHidden()).toBe(true);
    expect(((await h.stored('channels')) as { name: string }[]).map((c) => c.name)).toEqual(['Test channel']);
  });

  it('"Check now" installs the signed bundle and shows its timestamp; the rules apply within the scope only', async () => {
    // Adding checked the channel at once ("updated"); "Check now" finds it up to date.
    expect(await o.locator('#channel-list .channel-result').getAttribute('class')).toContain('updated');
    await o.locator('#channel-list .channel-check').click();
    await expect.poll(() => o.locator('#channel-list .channel-result').getAttribute('class'), POLL).toContain('current');
    const installed = o.locator('#channel-list .channel-installed time');
    expect(await installed.getAttribute('datetime')).toBe(new Date(T1 * 1000).toISOString());
    expect(await o.locator('#channel-list .channel-installed').textContent()).toContain('1 rulesets');
    expect(await o.locator('#channel-list .channel-problem').count()).toBe(0);
    // The record is one storage key with the bundle inside.
    const record = (await h.stored('channel:Test channel')) as { installed: { timestamp: number; bundle: string } };
    expect(record.installed.timestamp).toBe(T1);
    await shot(o, 'options-channels');

    await expect.poll(() => landsOn('chan.example.test'), POLL).toBe('https:');
    // Same ruleset, but out.example.test lies outside the channel's scope.
    expect(await landsOn('out.example.test')).toBe('http:');
    // The defaults still work next to the channel.
    expect(await landsOn('site.example.test')).toBe('https:');
  });

  it('a badly signed newer bundle shows the error on "Check now" and the previous rules stay', async () => {
    const impostor = await generateSigningKeyPair(2048);
    await publishChannelFiles(root, CHANNEL_RULESETS.map((r) => ({ ...r, name: 'Changed' })), T2, impostor.privateKey);
    await o.locator('#channel-list .channel-check').click();
    await expect.poll(() => o.locator('#channel-list .channel-error').textContent(), POLL).toContain('[bad-signature]');
    expect(await o.locator('#channel-list .channel-installed time').getAttribute('datetime')).toBe(new Date(T1 * 1000).toISOString());
    expect(((await h.stored('channel:Test channel')) as { installed: { timestamp: number } }).installed.timestamp).toBe(T1);
    expect(await landsOn('chan.example.test')).toBe('https:');
    expect(await landsOn('out.example.test')).toBe('http:');
    // The server saw the check (it fetched the new timestamp's files).
    expect(server.requests).toContain(`/channel/rulesets.${T2}.sig`);
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
    await publishChannelFiles(root, CHANNEL_RULESETS, T2 + 30, key.privateKey);
    const definition = { name: 'Path channel', urlPrefix: server.urlPrefix, publicKey: key.publicKey, scope: '^http://chan\\.example\\.test/only/', replacesDefaults: false };
    await o.locator('#channel-definition').fill(JSON.stringify(definition));
    await o.locator('#channel-add').click();
    await expect.poll(() => o.locator('#channel-list .channel-problem').textContent(), POLL).toContain('only the host, scheme and port can be enforced on Chromium');
    // Installed (verified) all the same, and usable where the engine runs (Firefox); here it does nothing.
    expect(await o.locator('#channel-list .channel-installed time').count()).toBe(1);
    expect(await landsOn('chan.example.test')).toBe('http:');
  });
});
