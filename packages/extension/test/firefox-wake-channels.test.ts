import { compileBundle } from '@httpsify/engine';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChannelService } from '../src/channels/channel-service.js';
import { FakeAlarms, rulesetsOf, testChannel, testPublisher } from './support/channels.js';
import { fakeBrowser, type FakeBrowser } from './support/fake-browser.js';
import { MemoryStorageArea } from './support/memory-storage.js';

/**
 * Firefox wake with an installed update channel: the waking request, and those answered right
 * after the settings are read, are decided with the channel's rulesets too (found by an attack:
 * they waited for the settings only, and the stored channels load after them).
 */
const DEFAULTS = rulesetsOf(
  '<ruleset name="Example"><target host="example.org"/><rule from="^http:" to="https:"/></ruleset>',
);
let SLOW_MS = 0;
const bundle = compileBundle(DEFAULTS, { timestamp: 1_700_000_000 });

async function wake(stored: Record<string, unknown>): Promise<FakeBrowser> {
  const fake = fakeBrowser('moz-extension://wake/');
  const local = (fake.ns as unknown as { storage: { local: MemoryStorageArea } }).storage.local;
  await local.set(stored);
  // Reading a big stored channel bundle takes a while (a real storage.local read of megabytes).
  const get = local.get.bind(local);
  local.get = async (keys) => {
    if (Array.isArray(keys) && keys.some((k) => k.startsWith('channel')))
      await new Promise((r) => setTimeout(r, SLOW_MS));
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

describe('Firefox wake with an installed update channel', () => {
  it.each([0, 300])(
    'the waking request is decided with the channel rulesets (read %i ms)',
    async (slow) => {
      SLOW_MS = slow;
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

      const fake = await wake({
        ...Object.fromEntries(area.data),
        channels: [def],
        httpsFirst: false,
      });
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
