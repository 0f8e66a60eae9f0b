import { type ChannelRecord, ChannelError, type FetchBytes } from '@httpsify/engine/channels';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildChannelLayers } from '../src/channels/channel-layers.js';
import { ChannelService } from '../src/channels/channel-service.js';
import { channelKey } from '../src/channels/channel-storage.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { createEngine } from '@httpsify/engine';
import {
  FakeAlarms,
  rulesetsOf,
  testChannel,
  testClock,
  testKey,
  type TestPublisher,
  testPublisher,
} from './support/channels.js';

/**
 * The attacks of issue 13 against the extension's channel service (the engine's checks do the
 * verifying; these show the service keeps, drops, and reports what the options page shows).
 */
const DAY = 86_400;
const T1 = 1_700_000_000;
const V1 = rulesetsOf(
  '<ruleset name="Example"><target host="example.org"/><target host="www.example.org"/><rule from="^http:" to="https:"/></ruleset>',
);
const V2 = rulesetsOf(
  '<ruleset name="Example"><target host="example.org"/><target host="www.example.org"/><rule from="^http:" to="https:"/></ruleset>',
  '<ruleset name="Shop"><target host="shop.example.org"/><rule from="^http:" to="https:"/></ruleset>',
);
const EVIL = rulesetsOf(
  '<ruleset name="Login"><target host="www.example.org"/><rule from="^http://www\\.example\\.org/" to="https://attacker.example/www/"/></ruleset>',
);
const SCOPE = '^https?://([^/]*\\.)?example\\.org[:/]';
const defaults = createEngine(
  rulesetsOf(
    '<ruleset name="D"><target host="d.test"/><rule from="^http:" to="https:"/></ruleset>',
  ),
);

let publisher: TestPublisher;
beforeAll(async () => {
  publisher = await testPublisher();
});

async function setup(name: string, extra = {}) {
  const channel = await testChannel(name, publisher, { scope: SCOPE, ...extra });
  const clock = testClock(T1 + 60);
  const area = new MemoryStorageArea();
  const emitted: ChannelRecord[][] = [];
  const service = new ChannelService({
    area,
    alarms: new FakeAlarms(),
    fetchBytes: channel.fetchBytes,
    now: clock.now,
    installedChanged: async (r) => void emitted.push(r),
  });
  const def = channel.definition();
  return { channel, clock, area, emitted, service, def };
}

const rewrite = (records: ChannelRecord[] | undefined, url: string) =>
  buildChannelLayers(records ?? [], defaults).scoped.rewrite(url);

describe('channel service under attack', () => {
  it('shows a frozen channel as stale after its maximum age, and its rules keep applying', async () => {
    const { channel, clock, service, def, emitted } = await setup('Frozen', { maxAgeDays: 3 });
    await channel.publish(V1, T1);
    await service.setDefinitions([def]);
    expect(service.status()[0]).toMatchObject({
      stale: false,
      maxAgeDays: 3,
      notInUse: null,
      installed: { timestamp: T1 },
    });
    clock.advance(4 * DAY);
    await service.checkNow();
    expect(service.status()[0]).toMatchObject({
      stale: true,
      lastCheck: { result: 'current' },
      installed: { timestamp: T1 },
    });
    expect(rewrite(emitted.at(-1), 'http://example.org/')).toBe('https://example.org/');
  });

  it('refuses a first install below the minimum timestamp', async () => {
    const { channel, service, def } = await setup('Old', { minTimestamp: T1 + 1 });
    await channel.publish(V1, T1);
    await service.setDefinitions([def]);
    expect(service.status()[0]).toMatchObject({
      installed: null,
      lastCheck: { result: 'failed', error: { code: 'below-minimum' } },
    });
  });

  it('refuses a release whose rules send URLs outside the scope, keeping the rules before it', async () => {
    const { channel, clock, service, def, emitted } = await setup('Evil');
    await channel.publish(V1, T1);
    await service.setDefinitions([def]);
    await channel.publish(EVIL, T1 + 10);
    clock.advance(DAY);
    await service.checkNow();
    expect(service.status()[0]).toMatchObject({
      installed: { timestamp: T1 },
      lastCheck: { error: { code: 'destination-outside-scope' } },
    });
    expect(rewrite(emitted.at(-1), 'http://www.example.org/login')).toBe(
      'https://www.example.org/login',
    );
  });

  it('refuses files signed for another channel of the same publisher (mix-and-match)', async () => {
    const { service, def } = await setup('B');
    const a = await testChannel('A', publisher);
    // B's server serves what A published.
    await a.publish(V1, T1);
    const mixed: FetchBytes = (url, o) =>
      a.fetchBytes(url.replace(def.urlPrefix, a.definition().urlPrefix), o);
    const service2 = new ChannelService({
      area: new MemoryStorageArea(),
      alarms: new FakeAlarms(),
      fetchBytes: mixed,
      now: () => T1 + 60,
      installedChanged: async () => undefined,
    });
    await service2.setDefinitions([def]);
    expect(service2.status()[0]).toMatchObject({
      installed: null,
      lastCheck: { error: { code: 'wrong-channel' } },
    });
    expect(service.status()).toEqual([]);
  });

  it('after a key rotation, a release under the old key is refused; raising minKeyVersion stops its bundle', async () => {
    const { channel, clock, service, def, emitted } = await setup('Rotating');
    await channel.publish(V1, T1);
    await service.setDefinitions([def]);
    channel.key.keys.set(2, await testKey());
    try {
      await channel.publish(V2, T1 + 10, { keyVersion: 2 });
      clock.advance(DAY);
      await service.checkNow();
      expect(service.status()[0]).toMatchObject({
        installed: { timestamp: T1 + 10 },
        notInUse: null,
      });
      await channel.publish(V1, T1 + 20, { keyVersion: 1 });
      clock.advance(DAY);
      await service.checkNow();
      expect(service.status()[0]).toMatchObject({
        installed: { timestamp: T1 + 10 },
        lastCheck: { error: { code: 'key-revoked' } },
      });
      // The user raises minKeyVersion past every key: the installed rules stop applying at once.
      await service.setDefinitions([{ ...def, minKeyVersion: 3 }]);
      // Not in use, so not shown as installed; the reason in the engine's words.
      expect(service.status()[0]).toMatchObject({
        installed: null,
        notInUse: {
          reason: 'untrusted',
          detail: expect.stringMatching(/key version 2, which is revoked/),
        },
      });
      expect(emitted.at(-1)).toEqual([expect.anything()]);
      expect(rewrite(emitted.at(-1), 'http://shop.example.org/')).toBeNull();
    } finally {
      channel.key.keys.delete(2);
    }
  });

  it('a changed scope drops the installed state: it was verified for the old scope', async () => {
    const { channel, area, service, def } = await setup('Scoped');
    await channel.publish(V1, T1);
    await service.setDefinitions([def]);
    expect(area.data.has(channelKey('Scoped'))).toBe(true);
    channel.down = true;
    await service.setDefinitions([{ ...def, scope: '^https?://example\\.org/' }]);
    expect(service.status()[0]).toMatchObject({ installed: null });
  });

  it('reports a redirect it cannot check instead of following it', async () => {
    const { service, def } = await setup('Redirected');
    const redirecting: FetchBytes = async (url) => {
      throw new ChannelError(
        'insecure-redirect',
        `${url}: the server redirected and this browser does not show where to (test)`,
      );
    };
    const s = new ChannelService({
      area: new MemoryStorageArea(),
      alarms: new FakeAlarms(),
      fetchBytes: redirecting,
      now: () => T1,
      installedChanged: async () => undefined,
    });
    await s.setDefinitions([def]);
    expect(s.status()[0]?.lastCheck?.error?.code).toBe('insecure-redirect');
    expect(service.status()).toEqual([]);
  });
});
