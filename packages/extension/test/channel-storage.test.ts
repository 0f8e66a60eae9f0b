import { loadBundle } from '@httpsify/engine';
import { type ChannelRecord, checkChannel } from '@httpsify/engine/channels';
import { beforeAll, describe, expect, it } from 'vitest';
import { base64ToBytes, bytesToBase64 } from '../src/channels/base64.js';
import { ChannelService } from '../src/channels/channel-service.js';
import { channelKey, storageChannelStorage } from '../src/channels/channel-storage.js';
import { decodeChannelRecord, encodeChannelRecord } from '../src/channels/record-codec.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import {
  FakeAlarms,
  rulesetsOf,
  type TestChannel,
  testChannel,
  testClock,
} from './support/channels.js';

const T1 = 1_700_000_000;
const T2 = 1_700_086_400;
const NOW = 1_700_100_000;
const V1 = rulesetsOf(
  '<ruleset name="Example"><target host="example.com"/><rule from="^http:" to="https:"/></ruleset>',
);
const V2 = rulesetsOf(
  '<ruleset name="Example"><target host="example.com"/><rule from="^http:" to="https:"/></ruleset>',
  '<ruleset name="Example Org"><target host="example.org"/><rule from="^http:" to="https:"/></ruleset>',
);

/** storage.local whose writes can be made to fail, counting every call. */
class FlakyArea extends MemoryStorageArea {
  failWrites = false;
  readonly sets: Record<string, unknown>[] = [];
  override async set(items: Record<string, unknown>): Promise<void> {
    this.sets.push(items);
    if (this.failWrites) throw new Error('QUOTA_BYTES quota exceeded (test)');
    await super.set(items);
  }
}

let channel: TestChannel;
beforeAll(async () => {
  channel = await testChannel();
  await channel.publish(V1, T1);
});

const options = () => ({ fetchBytes: channel.fetchBytes, now: () => NOW });

describe('channel state in storage.local', () => {
  it('base64 round-trips every byte value and refuses damaged text', () => {
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 7) % 256);
    expect(base64ToBytes(bytesToBase64(bytes))).toEqual(bytes);
    expect(bytesToBase64(new Uint8Array([0xff, 0, 1]))).toBe('/wAB');
    expect(() => base64ToBytes('/wA*')).toThrow('not valid base64');
    expect(() => base64ToBytes('/wA')).toThrow('not valid base64');
  });

  it('stores a verified install under channel:<name> and reads back the same record, bundle included', async () => {
    const area = new FlakyArea();
    const report = await checkChannel(
      channel.definition(),
      storageChannelStorage(area, 'Test channel'),
      options(),
    );
    expect(report.result).toBe('updated');
    const stored = area.data.get(channelKey('Test channel')) as {
      installed: { bundle: string; bytes: number };
    };
    expect(typeof stored.installed.bundle).toBe('string');
    const record = (await storageChannelStorage(area, 'Test channel').load()) as ChannelRecord;
    expect(record.installed?.timestamp).toBe(T1);
    expect(record.installed?.bundle.byteLength).toBe(stored.installed.bytes);
    expect(loadBundle(record.installed!.bundle).rewrite('http://example.com/a')).toBe(
      'https://example.com/a',
    );
    expect(record).toEqual(decodeChannelRecord(encodeChannelRecord(record), 'x'));
    // The root key's revocation and rollback floor is stored with the record.
    expect(record.floor).toMatchObject({ keyVersion: 1, timestamp: T1 });
    expect(record.lastCheck).toEqual({ at: NOW, result: 'updated' });
  });

  it('replaces the record with one set of one key, and a failed write leaves the previous record whole', async () => {
    const area = new FlakyArea();
    const storage = storageChannelStorage(area, 'Test channel');
    await checkChannel(channel.definition(), storage, options());
    const before = structuredClone(area.data.get(channelKey('Test channel')));
    area.sets.length = 0;

    await channel.publish(V2, T2);
    area.failWrites = true;
    const failed = await checkChannel(channel.definition(), storage, options());
    expect(failed.result).toBe('failed');
    expect(failed.error?.code).toBe('storage-failed');
    // Each write was a single set of exactly this channel's key: there is no half-written state.
    expect(area.sets.length).toBeGreaterThan(0);
    for (const items of area.sets) expect(Object.keys(items)).toEqual([channelKey('Test channel')]);
    expect(area.data.get(channelKey('Test channel'))).toEqual(before);
    expect((await storage.load())?.installed?.timestamp).toBe(T1);

    area.failWrites = false;
    expect((await checkChannel(channel.definition(), storage, options())).result).toBe('updated');
    expect((await storage.load())?.installed?.rulesetCount).toBe(2);
  });

  it('reports damaged stored state with what is wrong, never as a silent empty record', async () => {
    const area = new MemoryStorageArea();
    const storage = storageChannelStorage(area, 'Test channel');
    await checkChannel(channel.definition(), storage, options());
    const good = area.data.get(channelKey('Test channel')) as Record<
      string,
      Record<string, unknown>
    >;
    const cases: [unknown, string][] = [
      ['garbage', 'not an object'],
      [{ ...good, format: 9 }, 'unknown format 9'],
      [
        { ...good, installed: { ...good.installed, verifiedFor: 1 } },
        'does not say what it was verified for',
      ],
      [
        { ...good, signingKey: { ...good.signingKey, key: { kty: 'RSA', n: 'AQAB', e: 'AQ' } } },
        '"signingKey"',
      ],
      [{ ...good, installed: { ...good.installed, bundle: '!!!' } }, 'not valid base64'],
      [{ ...good, installed: { ...good.installed, bytes: 3 } }, 'but the record says 3'],
      [
        { ...good, channel: { ...good.channel, urlPrefix: 'http://plain/' } },
        'must be an https: URL',
      ],
      [{ ...good, lastCheck: { at: -1, result: 'updated' } }, '"lastCheck" is malformed'],
      [{ ...good, floor: { ...good.floor, keyVersion: 'x' } }, '"floor" is malformed'],
    ];
    for (const [value, message] of cases) {
      area.data.set(channelKey('Test channel'), value);
      await expect(storage.load()).rejects.toThrow(message);
    }
  });

  it('a damaged record is reported and the next check installs the channel again', async () => {
    const area = new MemoryStorageArea();
    area.data.set(channelKey('Test channel'), {
      format: 1,
      channel: channel.definition(),
      installed: { bundle: 'AAAA', bytes: 1 },
    });
    const clock = testClock(NOW);
    const installed: ChannelRecord[][] = [];
    const service = new ChannelService({
      area,
      alarms: new FakeAlarms(),
      fetchBytes: channel.fetchBytes,
      now: clock.now,
      installedChanged: async (r) => void installed.push(r),
    });
    await service.setDefinitions([channel.definition()]);
    const [status] = service.status();
    expect(status?.installed?.timestamp).toBeGreaterThanOrEqual(T1);
    expect(status?.lastCheck?.result).toBe('updated');
    expect((await storageChannelStorage(area, 'Test channel').load())?.installed).toBeDefined();
    expect(installed.at(-1)?.map((r) => r.channel.name)).toEqual(['Test channel']);
  });

  it('removing a channel from the settings deletes its record (and stale ones), keeping the others', async () => {
    const area = new MemoryStorageArea();
    const other = await testChannel('Other', channel.key);
    await other.publish(V1, T1);
    const fetchBytes = (url: string, o: { maxBytes: number }) =>
      url.includes('other') ? other.fetchBytes(url, o) : channel.fetchBytes(url, o);
    area.data.set(channelKey('Gone long ago'), { format: 1 });
    area.data.set('globalEnabled', false);
    const installed: string[][] = [];
    const service = new ChannelService({
      area,
      alarms: new FakeAlarms(),
      fetchBytes,
      now: () => NOW,
      installedChanged: async (r) => void installed.push(r.map((x) => x.channel.name)),
    });
    await service.setDefinitions([channel.definition(), other.definition()]);
    expect([...area.data.keys()].sort()).toEqual([
      'channel:Other',
      'channel:Test channel',
      'globalEnabled',
    ]);
    expect(installed.at(-1)).toEqual(['Test channel', 'Other']);
    await service.setDefinitions([other.definition()]);
    expect([...area.data.keys()].sort()).toEqual(['channel:Other', 'globalEnabled']);
    expect(installed.at(-1)).toEqual(['Other']);
    expect(service.status().map((s) => s.name)).toEqual(['Other']);
  });

  it('drops an installed bundle when the channel comes back with another key', async () => {
    const area = new MemoryStorageArea();
    const service = new ChannelService({
      area,
      alarms: new FakeAlarms(),
      fetchBytes: channel.fetchBytes,
      now: () => NOW,
      installedChanged: async () => undefined,
    });
    await service.setDefinitions([channel.definition()]);
    expect(area.data.has(channelKey('Test channel'))).toBe(true);
    const otherKey = {
      ...channel.definition().rootKey,
      n: `${channel.definition().rootKey.n!.slice(0, -4)}AAAB`,
    };
    channel.down = true;
    try {
      await service.setDefinitions([channel.definition({ rootKey: otherKey })]);
    } finally {
      channel.down = false;
    }
    // Nothing verified under the new key is installed; the check with it failed.
    const [status] = service.status();
    expect(status?.installed).toBeNull();
    expect(status?.lastCheck?.error?.code).toBe('fetch-failed');
  });
});
