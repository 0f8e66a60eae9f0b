import { createEngine } from '@httpsify/engine';
import { beforeAll, describe, expect, it } from 'vitest';
import { ChannelService } from '../src/channels/channel-service.js';
import { channelKey } from '../src/channels/channel-storage.js';
import type { StoredChannelRecord } from '../src/channels/record-codec.js';
import type { ChannelRow } from '../src/protocol/ui-protocol.js';
import { SettingsController } from '../src/routing/settings-controller.js';
import { SettingsStore } from '../src/settings/store.js';
import { TabActivity } from '../src/status/tab-activity.js';
import { channelPill } from '../src/ui/shared/channel-problem.js';
import {
  FakeAlarms,
  rulesetsOf,
  testChannel,
  testClock,
  testPublisher,
  type TestChannel,
  type TestPublisher,
} from './support/channels.js';
import { MemoryStorageArea } from './support/memory-storage.js';

const T1 = 1_700_000_000;
const RULES = rulesetsOf(
  '<ruleset name="Shop"><target host="shop.example.org"/><rule from="^http:" to="https:"/></ruleset>',
);
const SCOPE = '^https?://([^/]*\\.)?example\\.org[:/]';

let publisher: TestPublisher;
beforeAll(async () => {
  publisher = await testPublisher();
});

/**
 * The background as it starts (background-runtime.ts): the channel service hands its records
 * to the settings controller, whose layers load the bundles; the options page asks the
 * controller for the rows.
 */
async function startBackground(area: MemoryStorageArea, channel: TestChannel) {
  const clock = testClock(T1 + 60);
  const c: SettingsController = new SettingsController(
    createEngine(rulesetsOf()),
    new SettingsStore(area),
    new TabActivity(),
    {
      overridesApplied: async () => undefined,
      policyChanged: async () => undefined,
      channels: {
        defaultsTimestamp: 0,
        definitionsChanged: (definitions) => service.setDefinitions(definitions),
        status: () => service.status(),
        checkNow: async (name) => void (await service.checkNow(name)),
        layersApplied: async () => undefined,
        platformProblems: async () => ({}),
      },
    },
  );
  const service = new ChannelService({
    area,
    alarms: new FakeAlarms(),
    fetchBytes: channel.fetchBytes,
    now: clock.now,
    installedChanged: (records) => c.setChannelRecords(records),
  });
  await c.start();
  await c.channelsSettled();
  await service.idle();
  const rows = async () => (await c.handle({ type: 'channelStatus' })) as ChannelRow[];
  return { c, service, rows };
}

describe('a stored channel bundle that fails verification', () => {
  it('shows as not in use, with its reason, until "Check now" downloads it again', async () => {
    const channel = await testChannel('Shop channel', publisher, { scope: SCOPE });
    await channel.publish(RULES, T1);
    const area = new MemoryStorageArea();
    const first = await startBackground(area, channel);
    await first.c.update(() => ({ channels: [channel.definition()] }));
    await first.c.channelsSettled();
    await first.service.idle();
    expect((await first.rows())[0]).toMatchObject({
      installed: { timestamp: T1, rulesetCount: 1 },
      notInUse: null,
    });
    expect(first.c.channels.scoped.rewrite('http://shop.example.org/')).toBe(
      'https://shop.example.org/',
    );

    // The saved copy changes on disk while the browser is closed: one byte of the bundle.
    const stored = area.data.get(channelKey('Shop channel')) as StoredChannelRecord;
    const bytes = Buffer.from(stored.installed!.bundle, 'base64');
    bytes[bytes.length >> 1]! ^= 0xff;
    area.data.set(channelKey('Shop channel'), {
      ...stored,
      installed: { ...stored.installed!, bundle: bytes.toString('base64') },
    });

    const second = await startBackground(area, channel);
    const [row] = await second.rows();
    // Not installed, not "this browser's" problem, and said plainly.
    expect(row).toMatchObject({
      installed: null,
      stale: false,
      platformProblem: null,
      storageProblem: null,
      notInUse: { reason: 'damaged', detail: expect.stringMatching(/checksum mismatch/) },
    });
    expect(channelPill(row!).key).toBe('channelPillNotInUse');
    expect(second.c.channels.channels).toEqual([]);
    expect(second.c.channels.scoped.rewrite('http://shop.example.org/')).toBeNull();

    // "Check now": the check does not call the damaged copy current; it downloads the release.
    const fetchedBefore = channel.fetched.length;
    const checked = (await second.c.handle({
      type: 'channelCheck',
      name: 'Shop channel',
    })) as ChannelRow[];
    expect(channel.fetched.slice(fetchedBefore).some((u) => /bundle/.test(u))).toBe(true);
    expect(checked[0]).toMatchObject({
      installed: { timestamp: T1 },
      notInUse: null,
      lastCheck: { result: 'updated' },
    });
    expect(second.c.channels.scoped.rewrite('http://shop.example.org/')).toBe(
      'https://shop.example.org/',
    );
  });
});
