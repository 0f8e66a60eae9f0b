import {
  CHECK_PERIOD_SECONDS,
  RETRY_AFTER_FAILURE_SECONDS,
  type ChannelRecord,
} from '@httpsify/engine/channels';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHANNEL_ALARM, ChannelService } from '../src/channels/channel-service.js';
import { planChannelChecks } from '../src/channels/check-schedule.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import {
  FakeAlarms,
  rulesetsOf,
  type TestChannel,
  testChannel,
  testClock,
  testKey,
  type TestPublisher,
  testPublisher,
} from './support/channels.js';

const T1 = 1_700_000_000;
const T2 = T1 + 2 * CHECK_PERIOD_SECONDS;
const START = T1 + 3600;
const V1 = rulesetsOf(
  '<ruleset name="Example"><target host="example.com"/><rule from="^http:" to="https:"/></ruleset>',
);
const V2 = rulesetsOf(
  '<ruleset name="Example"><target host="example.com"/><rule from="^http:" to="https:"/></ruleset>',
  '<ruleset name="Example Org"><target host="example.org"/><rule from="^http:" to="https:"/></ruleset>',
);

let key: TestPublisher;
beforeAll(async () => {
  key = await testPublisher();
});

function setup(channels: TestChannel[]) {
  const area = new MemoryStorageArea();
  const alarms = new FakeAlarms();
  const clock = testClock(START);
  const installed: ChannelRecord[][] = [];
  const fetchBytes = (url: string, o: { maxBytes: number }) =>
    (channels.find((c) => url.startsWith(c.definition().urlPrefix)) as TestChannel).fetchBytes(
      url,
      o,
    );
  const service = new ChannelService({
    area,
    alarms,
    fetchBytes,
    now: clock.now,
    installedChanged: async (r) => void installed.push(r),
  });
  const alarmAt = () => {
    const when = alarms.alarms.get(CHANNEL_ALARM);
    return when === undefined ? undefined : when / 1000;
  };
  return { area, alarms, clock, installed, service, alarmAt };
}

describe('channel check schedule', () => {
  it('plans: never checked is due now, then 24 h after a success and 1 h after a failure', () => {
    const now = 1_000_000;
    expect(planChannelChecks([], now)).toEqual({ due: [], nextAt: null });
    expect(
      planChannelChecks(
        [
          { name: 'new', lastCheck: undefined },
          { name: 'fine', lastCheck: { at: now - 10, result: 'current' } },
          { name: 'broken', lastCheck: { at: now - 10, result: 'failed' } },
          { name: 'overdue', lastCheck: { at: now - 3 * CHECK_PERIOD_SECONDS, result: 'updated' } },
        ],
        now,
      ),
    ).toEqual({ due: ['new', 'overdue'], nextAt: now - 10 + RETRY_AFTER_FAILURE_SECONDS });
  });

  it('checks a new channel at once, then arms one alarm for 24 h later; the alarm checks again', async () => {
    const channel = await testChannel('A', key);
    await channel.publish(V1, T1);
    const { service, clock, alarmAt, installed } = setup([channel]);
    await service.setDefinitions([channel.definition()]);
    expect(service.status()[0]?.installed?.timestamp).toBe(T1);
    expect(installed.at(-1)?.[0]?.installed?.timestamp).toBe(T1);
    expect(alarmAt()).toBe(START + CHECK_PERIOD_SECONDS);

    // The alarm fires a day later: the new version is installed and the alarm re-armed.
    await channel.publish(V2, T2 - 10);
    clock.advance(CHECK_PERIOD_SECONDS);
    await service.onAlarm();
    expect(service.status()[0]?.installed?.timestamp).toBe(T2 - 10);
    expect(installed.at(-1)?.[0]?.installed?.rulesetCount).toBe(2);
    expect(alarmAt()).toBe(START + 2 * CHECK_PERIOD_SECONDS);
  });

  it('a failed check keeps the installed bundle, records the error and retries an hour later', async () => {
    const channel = await testChannel('B', key);
    await channel.publish(V1, T1);
    const { service, clock, alarmAt, installed } = setup([channel]);
    await service.setDefinitions([channel.definition()]);
    const emitted = installed.length;

    channel.down = true;
    clock.advance(CHECK_PERIOD_SECONDS);
    await service.onAlarm();
    const [status] = service.status();
    expect(status?.installed?.timestamp).toBe(T1);
    expect(status?.lastCheck).toMatchObject({
      at: START + CHECK_PERIOD_SECONDS,
      result: 'failed',
      error: { code: 'fetch-failed' },
    });
    expect(status?.lastSuccessAt).toBe(START);
    expect(installed.length).toBe(emitted); // nothing changed for the rewriting side
    expect(alarmAt()).toBe(START + CHECK_PERIOD_SECONDS + RETRY_AFTER_FAILURE_SECONDS);

    // A bad signature is a failure too, and the previous rules stay.
    channel.down = false;
    const other = await testKey();
    await channel.publish(V2, T1 + 50, { signWith: other });
    clock.advance(RETRY_AFTER_FAILURE_SECONDS);
    await service.onAlarm();
    expect(service.status()[0]?.lastCheck?.error?.code).toBe('bad-signature');
    expect(service.status()[0]?.installed?.timestamp).toBe(T1);

    // The retry after the publisher fixed it installs the update.
    await channel.publish(V2, T1 + 60);
    clock.advance(RETRY_AFTER_FAILURE_SECONDS);
    await service.onAlarm();
    expect(service.status()[0]?.installed?.timestamp).toBe(T1 + 60);
    expect(service.status()[0]?.lastCheck?.error).toBeUndefined();
  });

  it('catches up at start when the browser was closed past the due time, and not before', async () => {
    const channel = await testChannel('C', key);
    await channel.publish(V1, T1);
    const first = setup([channel]);
    await first.service.setDefinitions([channel.definition()]);
    const fetches = channel.fetched.length;

    // A restart 2 hours later: state comes from storage, nothing is due, the alarm is re-armed.
    const again = new ChannelService({
      area: first.area,
      alarms: first.alarms,
      fetchBytes: channel.fetchBytes,
      now: () => START + 7200,
      installedChanged: async () => undefined,
    });
    first.alarms.alarms.clear();
    await again.setDefinitions([channel.definition()]);
    expect(channel.fetched.length).toBe(fetches);
    expect(first.alarmAt()).toBe(START + CHECK_PERIOD_SECONDS);
    expect(again.status()[0]?.installed?.timestamp).toBe(T1);

    // A restart three days later checks at once.
    const late = new ChannelService({
      area: first.area,
      alarms: first.alarms,
      fetchBytes: channel.fetchBytes,
      now: () => START + 3 * CHECK_PERIOD_SECONDS,
      installedChanged: async () => undefined,
    });
    await late.setDefinitions([channel.definition()]);
    expect(channel.fetched.length).toBeGreaterThan(fetches);
    expect(late.status()[0]?.lastCheck).toEqual({
      at: START + 3 * CHECK_PERIOD_SECONDS,
      result: 'current',
    });
    expect(first.alarmAt()).toBe(START + 4 * CHECK_PERIOD_SECONDS);
  });

  it('runs one check at a time: "Check now" twice shares one check, and two channels never overlap', async () => {
    const a = await testChannel('D', key);
    const b = await testChannel('E', key);
    await a.publish(V1, T1);
    await b.publish(V1, T1);
    const { service } = setup([a, b]);
    await service.setDefinitions([a.definition(), b.definition()]);
    a.fetched.length = 0;
    b.fetched.length = 0;

    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    a.gate = gate;
    const first = service.checkNow('D');
    const second = service.checkNow('D');
    const other = service.checkNow('E');
    await new Promise((r) => setTimeout(r, 20));
    expect(service.status().map((s) => s.checking)).toEqual([true, true]);
    // D is waiting on its server; E has not started (checks are serialised).
    expect(a.fetched.length).toBe(1);
    expect(b.fetched.length).toBe(0);
    release();
    const [r1, r2, r3] = await Promise.all([first, second, other]);
    expect(r1).toEqual(r2);
    expect(r1?.[0]?.result).toBe('current');
    expect(r3?.[0]?.result).toBe('current');
    expect(a.fetched.length).toBe(1);
    expect(b.fetched.length).toBe(1);
    expect(service.status().map((s) => s.checking)).toEqual([false, false]);
  });

  it('clears the alarm when the last channel goes', async () => {
    const channel = await testChannel('F', key);
    await channel.publish(V1, T1);
    const { service, alarmAt } = setup([channel]);
    await service.setDefinitions([channel.definition()]);
    expect(alarmAt()).toBeDefined();
    await service.setDefinitions([]);
    expect(alarmAt()).toBeUndefined();
  });
});
