import { compileBundle } from '@httpsify/engine';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChannelService } from '../src/channels/channel-service.js';
import { FakeAlarms, rulesetsOf, testChannel, testPublisher } from './support/channels.js';
import { fakeBrowser, type FakeBrowser } from './support/fake-browser.js';
import { MemoryStorageArea } from './support/memory-storage.js';

/**
 * Firefox's background is an event page: the request that wakes it (the first navigation after
 * it idled out, a session restore) arrives while the settings are still being read. Its answer
 * must be what decide() says with the user's stored settings, as the same request gets a
 * moment later: answered over the bundled rulesets alone, it ignored HTTPS-first, the global
 * switch and the sites switched off (found by an attack: in real Firefox ESR the first page
 * after 30 s idle stayed on HTTP under HTTPS-first). The installed channels count as settings:
 * they load after the settings proper, and were missing from the first answers too.
 */
const DEFAULTS = rulesetsOf(
  '<ruleset name="Example"><target host="example.org"/><rule from="^http:" to="https:"/></ruleset>',
);
const bundle = compileBundle(DEFAULTS, { timestamp: 1_700_000_000 });

/** Starts the Firefox background on `stored`; reading a stored channel takes `channelReadMs`. */
async function wake(stored: Record<string, unknown>, channelReadMs = 0): Promise<FakeBrowser> {
  const fake = fakeBrowser('moz-extension://wake/');
  const local = (fake.ns as unknown as { storage: { local: MemoryStorageArea } }).storage.local;
  await local.set(stored);
  // A big stored channel bundle takes a while to read (storage.local, megabytes).
  const get = local.get.bind(local);
  local.get = async (keys) => {
    if (Array.isArray(keys) && keys.some((k) => k.startsWith('channel')))
      await new Promise((r) => setTimeout(r, channelReadMs));
    return get(keys);
  };
  vi.stubGlobal('browser', fake.ns);
  vi.stubGlobal('HTTPSIFY_TEST_HOOKS', true);
  vi.stubGlobal('fetch', async (url: string) =>
    url.endsWith('rules/default.bundle')
      ? new Response(new Uint8Array(bundle))
      : new Response(JSON.stringify({ domains: [], patterns: [] })),
  );
  vi.resetModules();
  await import('../src/background/firefox.js');
  return fake;
}

async function answer(fake: FakeBrowser, d: Record<string, unknown>): Promise<unknown> {
  const answers = await Promise.all(fake.event('webRequest.onBeforeRequest').fire(d));
  return answers.find((a) => a !== undefined);
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.resetModules();
});

const ui = () =>
  (
    globalThis as unknown as {
      httpsifyUi: { controller: Promise<{ channelsSettled(): Promise<void> }> };
    }
  ).httpsifyUi;

const nav = (id: string, url: string) => ({
  requestId: id,
  tabId: 3,
  frameId: 0,
  type: 'main_frame',
  url,
});

describe('Firefox: the request that wakes the background is decided with the settings', () => {
  it('HTTPS-first (on by default) upgrades the navigation that woke the background', async () => {
    const fake = await wake({ httpsFirst: true });
    const first = await answer(fake, nav('1', 'http://plain.test/'));
    await ui().controller;
    const later = await answer(fake, nav('2', 'http://plain.test/'));
    expect(later).toEqual({ redirectUrl: 'https://plain.test/' });
    expect(first).toEqual(later);
  });

  it('a site the user switched off is left alone on wake too', async () => {
    const fake = await wake({ disabledSites: ['example.org'] });
    const first = await answer(fake, nav('1', 'http://example.org/'));
    await ui().controller;
    const later = await answer(fake, nav('2', 'http://example.org/'));
    expect(later).toEqual({});
    expect(first).toEqual(later);
  });

  it('the global switch off holds on wake too', async () => {
    const fake = await wake({ globalEnabled: false });
    const first = await answer(fake, nav('1', 'http://example.org/'));
    await ui().controller;
    const later = await answer(fake, nav('2', 'http://example.org/'));
    expect(later).toEqual({});
    expect(first).toEqual(later);
  });
});

describe('Firefox wake with an installed update channel', () => {
  it.each([0, 300])(
    'the waking request is decided with the channel rulesets (read %i ms)',
    async (slow) => {
      const ts = Math.floor(Date.now() / 1000) - 3600;
      const channel = await testChannel('Team', await testPublisher(), {
        scope: '^https?://([^/]*\\.)?chan\\.test[:/]',
      });
      await channel.publish(
        rulesetsOf(
          '<ruleset name="Chan"><target host="chan.test"/><rule from="^http:" to="https:"/></ruleset>',
        ),
        ts,
      );
      const area = new MemoryStorageArea();
      const service = new ChannelService({
        area,
        alarms: new FakeAlarms(),
        fetchBytes: channel.fetchBytes,
        installedChanged: async () => undefined,
      });
      const def = channel.definition();
      await service.setDefinitions([def]);
      expect(service.status()[0]).toMatchObject({ installed: { timestamp: ts } });

      const fake = await wake(
        { ...Object.fromEntries(area.data), channels: [def], httpsFirst: false },
        slow,
      );
      const first = await answer(fake, nav('1', 'http://chan.test/'));
      const c = await ui().controller;
      const atReady = await answer(fake, nav('2', 'http://chan.test/'));
      await c.channelsSettled();
      await new Promise((r) => setTimeout(r, 50));
      const later = await answer(fake, nav('3', 'http://chan.test/'));
      expect(later).toEqual({ redirectUrl: 'https://chan.test/' });
      expect(first).toEqual(later);
      expect(atReady).toEqual(later);
    },
  );
});
