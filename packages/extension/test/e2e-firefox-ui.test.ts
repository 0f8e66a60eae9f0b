import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChannelDefinition } from '@httpsify/engine/channels';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Settings } from '../src/settings/schema.js';
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
import { FF_POLL, startFirefoxUiHarness, type FirefoxUiHarness } from './support/firefox-ui.js';

const FALLBACK_PAGE_URL = /^moz-extension:\/\/[^/]+\/ui\/fallback\.html\?/;

describe('HTTPS-first in a real Firefox (blocking webRequest)', () => {
  let h: FirefoxUiHarness;
  const plain = (host: string, path = '/') => `http://${host}:${h.plainPort}${path}`;
  /** Waits until the fallback page has rendered in the tab. */
  const fallbackReady = () =>
    expect
      .poll(
        () =>
          h.tab.evaluate<string | undefined>('document.body?.dataset.ready').catch(() => undefined),
        FF_POLL,
      )
      .toBe('true');
  const textOf = (id: string) =>
    h.tab.evaluate<string>(`document.getElementById(${JSON.stringify(id)}).textContent`);
  const clickInTab = (id: string) =>
    h.tab.evaluate<void>(`void document.getElementById(${JSON.stringify(id)}).click()`);
  const setHttpsFirst = async (on: boolean) => {
    // Through the options page's own checkbox, as a user switches it.
    if (
      (await h.options.evaluate<boolean>('document.getElementById("opt-httpsFirst").checked')) !==
      on
    )
      await h.click('#opt-httpsFirst');
    await expect
      .poll(async () => (await h.request<Settings>({ type: 'settings' })).httpsFirst, FF_POLL)
      .toBe(on);
  };

  beforeAll(async () => {
    h = await startFirefoxUiHarness(
      {
        'site.xml':
          '<ruleset name="Site Rules"><target host="site.example.test"/><rule from="^http://site\\.example\\.test:(\\d+)/" to="https://site.example.test:$1/by-ruleset/"/></ruleset>',
      },
      [
        'works.uncovered.test',
        'nossl.uncovered.test',
        'always.uncovered.test',
        'slow.uncovered.test',
        'start.uncovered.test',
        'probe.uncovered.test',
        'portal.uncovered.test',
        'hotel.uncovered.test',
        'other.uncovered.test',
        'site.example.test',
        'app.localhost',
        'intranet',
      ],
    );
  });

  afterAll(async () => {
    await h?.close();
  });

  it('is on by default; switched off, an uncovered host stays on http:// (control)', async () => {
    expect((await h.request<Settings>({ type: 'settings' })).httpsFirst).toBe(true);
    await setHttpsFirst(false);
    expect(await h.tab.goto(h.url('works.uncovered.test', '/a?b=1'))).toBe(
      h.url('works.uncovered.test', '/a?b=1'),
    );
  });

  it('once switched on, upgrades an uncovered host whose server speaks TLS; a ruleset still decides its own hosts', async () => {
    await setHttpsFirst(true);
    expect(await h.tab.goto(h.url('works.uncovered.test', '/a?b=1'))).toBe(
      `https://works.uncovered.test:${h.server.port}/a?b=1`,
    );
    expect(await h.bodyText()).toBe('https works.uncovered.test /a?b=1');
    expect(await h.tab.goto(h.url('site.example.test', '/x'))).toBe(
      `https://site.example.test:${h.server.port}/by-ruleset/x`,
    );
  });

  it('sends a failed upgrade (no TLS there) to the fallback page; "Continue to HTTP site" opens it and holds for the session', async () => {
    const target = plain('nossl.uncovered.test', '/p?q=1&r=2#frag');
    await h.tab.start(target);
    await h.waitForUrl(FALLBACK_PAGE_URL);
    await fallbackReady();
    expect(await textOf('target-url')).toBe(target);
    // Firefox reports TLS failures to webRequest as NSS's message, not as an error name.
    expect(await textOf('reason')).toBe(
      'SSL received a record that exceeded the maximum permissible length.',
    );
    await clickInTab('http-once');
    await h.waitForUrl(target);
    // The address changes before the document loads: wait for its text, as the test below does.
    await expect
      .poll(() => h.bodyText().catch(() => ''), FF_POLL)
      .toBe(`plain http nossl.uncovered.test:${h.plainPort}/p?q=1&r=2`);
    // Later visits go straight to HTTP, without the host being stored for good.
    expect(await h.tab.goto(plain('nossl.uncovered.test', '/again'))).toBe(
      plain('nossl.uncovered.test', '/again'),
    );
    expect((await h.request<Settings>({ type: 'settings' })).httpAllowedSites).toEqual([]);
    await expect
      .poll(
        async () => ((await h.stored('stats')) as { fallbacks: number } | null)?.fallbacks ?? 0,
        FF_POLL,
      )
      .toBeGreaterThan(0);
  });

  it('"Use “Rules only” for this site" stores the host with its port and later visits stay on HTTP', async () => {
    await h.tab.start(plain('always.uncovered.test', '/'));
    await h.waitForUrl(FALLBACK_PAGE_URL);
    await fallbackReady();
    await clickInTab('http-always');
    await h.waitForUrl(plain('always.uncovered.test', '/'));
    await expect
      .poll(() => h.bodyText().catch(() => ''), FF_POLL)
      .toBe(`plain http always.uncovered.test:${h.plainPort}/`);
    await expect
      .poll(async () => (await h.request<Settings>({ type: 'settings' })).httpAllowedSites, FF_POLL)
      .toEqual([`always.uncovered.test:${h.plainPort}`]);
    expect(await h.tab.goto(plain('always.uncovered.test', '/two'))).toBe(
      plain('always.uncovered.test', '/two'),
    );
    expect(await h.bodyText()).toBe(`plain http always.uncovered.test:${h.plainPort}/two`);
  });

  it('falls back after 3 seconds when the TLS handshake gets no answer; "Go back" returns', async () => {
    await h.tab.goto(h.url('start.uncovered.test', '/'));
    const started = Date.now();
    await h.tab.start(`http://slow.uncovered.test:${h.hangPort}/`);
    await h.waitForUrl(FALLBACK_PAGE_URL);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    await fallbackReady();
    expect(await textOf('reason')).toBe('no answer within 3 seconds');
    await clickInTab('go-back');
    await h.waitForUrl(`https://start.uncovered.test:${h.server.port}/`);
  });

  it('never upgrades loopback addresses, .localhost names or single-label names', async () => {
    for (const host of ['127.0.0.1', 'app.localhost', 'intranet']) {
      expect(await h.tab.goto(plain(host, '/'))).toBe(plain(host, '/'));
      expect(await h.bodyText()).toBe(`plain http ${host}:${h.plainPort}/`);
    }
  });

  it('behind a captive portal, says the network asks to sign in; one click opens HTTP, nothing else relaxes', async () => {
    await setHttpsFirst(true);
    // The probe now answers like a portal's login page (not "success").
    await h.options.evaluate(
      `browser.storage.local.set({ portalProbeUrl: ${JSON.stringify(h.url('portal.uncovered.test', '/login'))} })`,
    );
    const target = plain('hotel.uncovered.test', '/');
    await h.tab.start(target);
    await h.waitForUrl(FALLBACK_PAGE_URL);
    await fallbackReady();
    expect(await textOf('reason-text')).toContain('sign in first');
    await clickInTab('http-once');
    await h.waitForUrl(target);
    await expect
      .poll(() => h.bodyText().catch(() => ''), FF_POLL)
      .toBe(`plain http hotel.uncovered.test:${h.plainPort}/`);
    // A host whose server speaks TLS is still upgraded: the portal's answer relaxed nothing.
    expect(await h.tab.goto(h.url('works.uncovered.test', '/captive'))).toBe(
      `https://works.uncovered.test:${h.server.port}/captive`,
    );
  });

  it('switched off again, leaves uncovered hosts on http://', async () => {
    await setHttpsFirst(false);
    expect(await h.tab.goto(h.url('works.uncovered.test', '/off'))).toBe(
      h.url('works.uncovered.test', '/off'),
    );
    expect(await h.bodyText()).toBe('http works.uncovered.test /off');
  });
});

/** The channel's ruleset marks what it rewrote; it covers three hosts, its scope admits two. */
const CHANNEL_RULESETS = rulesetsOf(
  '<ruleset name="Channel Rules"><target host="chan.example.test"/><target host="both.example.test"/><target host="out.example.test"/><rule from="^http://([a-z.]+):(\\d+)/" to="https://$1:$2/via-channel/"/></ruleset>',
);
const SCOPE = '^https?://(chan|both)\\.example\\.test[:/]';

describe('update channels in a real Firefox (ScopedEngine layering)', () => {
  let h: FirefoxUiHarness;
  let server: ChannelServer;
  let root: string;
  let key: TestPublisher;
  let definition: ChannelDefinition;
  const T1 = Math.floor(Date.now() / 1000) - 3600;
  /** Where a navigation to http://<host>:<port>/page ends, as `scheme host path`. */
  const landsOn = async (host: string, path = '/page') => {
    await h.tab.goto(h.url(host, path));
    return h.bodyText();
  };
  const channelRows = () =>
    h.options.evaluate<{ name: string; result: string }[]>(
      `Array.from(document.querySelectorAll('#channel-list .channel')).map((li) => ({ name: li.dataset.name, result: li.querySelector('.channel-result')?.className ?? '' }))`,
    );

  beforeAll(async () => {
    [h, key] = await Promise.all([
      startFirefoxUiHarness(
        {
          'site.xml':
            '<ruleset name="Site Rules"><target host="site.example.test"/><rule from="^http:" to="https:"/></ruleset>',
          'both.xml':
            '<ruleset name="Both Default"><target host="both.example.test"/><rule from="^http:" to="https:"/></ruleset>',
        },
        [
          'chan.example.test',
          'both.example.test',
          'out.example.test',
          'site.example.test',
          'probe.uncovered.test',
        ],
        { modeOff: true },
      ),
      testPublisher(),
    ]);
    root = mkdtempSync(join(tmpdir(), 'httpsify-ff-channel-'));
    server = await startChannelServer(makeCertificate(), root);
    definition = testDefinition(key, server.urlPrefix, { scope: SCOPE });
  });

  afterAll(async () => {
    await h?.close();
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('before any channel: only the defaults apply (control)', async () => {
    expect(await landsOn('chan.example.test')).toBe('http chan.example.test /page');
    expect(await landsOn('both.example.test')).toBe('https both.example.test /page');
  });

  it('adds a channel in the options page; its first check finds nothing published and nothing changes', async () => {
    await h.options.evaluate<void>(
      `void (document.getElementById('channel-definition').value = ${JSON.stringify(JSON.stringify({ format: 2, ...definition }))})`,
    );
    await h.click('#channel-add');
    // Confirmed by name first, like a channel from a settings file.
    await expect
      .poll(
        () => h.options.evaluate<boolean>(`document.getElementById('channel-confirm').hidden`),
        FF_POLL,
      )
      .toBe(false);
    await h.click('#channel-confirm-trust');
    await h.click('#channel-confirm-add');
    await expect
      .poll(channelRows, FF_POLL)
      .toEqual([{ name: 'Test channel', result: 'channel-result failed' }]);
    // The background really went to the server (over HTTPS, from Firefox's background page).
    expect(server.requests).toContain('/channel/latest-timestamp');
    expect(await landsOn('chan.example.test')).toBe('http chan.example.test /page');
  });

  it('"Check now" installs the signed bundle: in scope the channel rewrites (before the defaults), out of scope it does not, the defaults still apply', async () => {
    await publishChannelFiles(root, definition, key, CHANNEL_RULESETS, T1);
    // A redirect Firefox will not show the target of is refused, not followed.
    server.faults.set('latest-timestamp', {
      kind: 'redirect',
      status: 302,
      location: `${server.urlPrefix.replace('https:', 'http:')}latest-timestamp`,
    });
    await h.click('#channel-list .channel-check');
    await expect
      .poll(
        () =>
          h.options.evaluate<string>(
            `document.querySelector('#channel-list .channel-error')?.textContent ?? ''`,
          ),
        FF_POLL,
      )
      .toContain('[insecure-redirect]');
    server.faults.clear();
    await h.click('#channel-list .channel-check');
    await expect
      .poll(channelRows, FF_POLL)
      .toEqual([{ name: 'Test channel', result: 'channel-result updated' }]);
    expect(
      await h.options.evaluate<string>(
        `document.querySelector('#channel-list .channel-installed time').getAttribute('datetime')`,
      ),
    ).toBe(new Date(T1 * 1000).toISOString());
    // Firefox runs the engine itself, so it reports no platform problem with any scope.
    expect(
      await h.options.evaluate<number>(
        `document.querySelectorAll('#channel-list .channel-problem').length`,
      ),
    ).toBe(0);

    expect(await landsOn('chan.example.test')).toBe('https chan.example.test /via-channel/page');
    // A default ruleset covers both.example.test too: within its scope the channel goes first.
    expect(await landsOn('both.example.test')).toBe('https both.example.test /via-channel/page');
    // Same ruleset, but outside the channel's scope (and no default covers it).
    expect(await landsOn('out.example.test')).toBe('http out.example.test /page');
    expect(await landsOn('site.example.test')).toBe('https site.example.test /page');
  });

  it('a newer bundle signed with another key fails "Check now" with the reason shown, and the installed rules stay', async () => {
    const impostor = await testKeyPair();
    const T2 = T1 + 60;
    await publishChannelFiles(
      root,
      definition,
      key,
      rulesetsOf(
        '<ruleset name="Changed"><target host="chan.example.test"/><rule from="^http:" to="https:"/></ruleset>',
      ),
      T2,
      { signWith: impostor },
    );
    await h.click('#channel-list .channel-check');
    await expect
      .poll(
        () =>
          h.options.evaluate<string>(
            `document.querySelector('#channel-list .channel-error')?.textContent ?? ''`,
          ),
        FF_POLL,
      )
      .toContain('[bad-signature]');
    expect(server.requests).toContain(`/channel/rulesets.${T2}.release.sig`);
    expect(
      ((await h.stored('channel:Test channel')) as { installed: { timestamp: number } }).installed
        .timestamp,
    ).toBe(T1);
    // The impostor's ruleset would send this host to /page, not /via-channel/page.
    expect(await landsOn('chan.example.test')).toBe('https chan.example.test /via-channel/page');
  });

  it('enforces a path-confined scope, which Chromium cannot, and its destinations; removing channels restores the defaults', async () => {
    await h.request({ type: 'channelRemove', name: 'Test channel' });
    // Its rule moves /only/x to /via-channel/only/x: outside a scope of /only/, so never followed...
    const path = {
      ...definition,
      name: 'Path channel',
      scope: '^http://chan\\.example\\.test:\\d+/only/',
    };
    await publishChannelFiles(root, path, key, CHANNEL_RULESETS, T1 + 120);
    expect(
      await h.request({ type: 'channelAdd', json: JSON.stringify({ format: 2, ...path }) }),
    ).toMatchObject({
      ok: true,
      channels: [
        { name: 'Path channel', installed: { timestamp: T1 + 120 }, platformProblem: null },
      ],
    });
    expect(await landsOn('chan.example.test', '/only/x')).toBe('http chan.example.test /only/x');
    await h.request({ type: 'channelRemove', name: 'Path channel' });
    // ... unless its signed destination list names the host.
    const listed = { ...path, destinations: ['chan.example.test'] };
    await publishChannelFiles(root, listed, key, CHANNEL_RULESETS, T1 + 180);
    expect(
      await h.request({ type: 'channelAdd', json: JSON.stringify({ format: 2, ...listed }) }),
    ).toMatchObject({
      ok: true,
      channels: [{ name: 'Path channel', installed: { timestamp: T1 + 180 } }],
    });
    expect(await landsOn('chan.example.test', '/only/x')).toBe(
      'https chan.example.test /via-channel/only/x',
    );
    expect(await landsOn('chan.example.test', '/elsewhere')).toBe(
      'http chan.example.test /elsewhere',
    );
    expect(await landsOn('both.example.test')).toBe('https both.example.test /page');

    await h.request({ type: 'channelRemove', name: 'Path channel' });
    expect(await h.stored('channel:Path channel')).toBeNull();
    expect(await landsOn('chan.example.test', '/only/x')).toBe('http chan.example.test /only/x');
  });
});
