import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import {
  ChannelError,
  type ChannelDefinition,
  type FetchBytes,
  type SigningKeyPair,
} from '@httpsify/engine/channels';
import {
  publishChannelFiles,
  testDefinition,
  testKeyPair,
  type TestPublisher,
  testPublisher,
} from '../../../engine/test/channels-support.js';
import type { AlarmsLike } from '../../src/channels/channel-service.js';

export { publishChannelFiles, testDefinition, testPublisher, type TestPublisher };

/**
 * A channel definition that passes the definition checks but whose key signs nothing (a
 * placeholder RSA modulus): for tests of what is stored and shown, never of installing.
 */
export function placeholderChannel(fields: Partial<ChannelDefinition> = {}): ChannelDefinition {
  return {
    name: 'Team rules',
    urlPrefix: 'https://rules.example.org/channel/',
    rootKey: { kty: 'RSA', n: '_'.repeat(512), e: 'AQAB' },
    scope: '^https?://([^/]*\\.)?example\\.org[:/]',
    destinations: [],
    minTimestamp: 0,
    maxAgeDays: 14,
    minKeyVersion: 1,
    replacesDefaults: false,
    ...fields,
  };
}

export function rulesetsOf(...xml: string[]): Ruleset[] {
  return xml.map((x, i) => {
    const { ruleset, diagnostics } = parseRulesetXml(x, `${i}.xml`);
    if (ruleset === null) throw new Error(diagnostics.map((d) => d.message).join('; '));
    return ruleset;
  });
}

/**
 * A channel whose files live in a temporary directory and are served by an in-memory
 * FetchBytes (no network): tests publish with the real publish helper and the real key.
 */
export interface TestChannel {
  dir: string;
  /** The publisher's root and signing keys (shared between channels when passed in). */
  key: TestPublisher;
  definition(extra?: Partial<ChannelDefinition>): ChannelDefinition;
  fetchBytes: FetchBytes;
  /** URLs fetched, in order. */
  fetched: string[];
  /** Makes every fetch fail (server down) while true. */
  down: boolean;
  /** Resolves fetches only when released (to observe concurrency); null: immediately. */
  gate: Promise<void> | null;
  publish(
    rulesets: Ruleset[],
    ts: number,
    options?: { signWith?: SigningKeyPair; keyVersion?: number },
  ): Promise<void>;
}

/** A lone signing key (3072 bits, the smallest clients accept), e.g. one the root never certified. */
export function testKey(): Promise<SigningKeyPair> {
  return testKeyPair();
}

/** `base` sets definition fields (scope, maxAgeDays…) that the published releases are signed for too. */
export async function testChannel(
  name = 'Test channel',
  key?: TestPublisher,
  base: Partial<ChannelDefinition> = {},
): Promise<TestChannel> {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-ext-channel-'));
  const urlPrefix = `https://${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.channels.test/v1/`;
  const channel: TestChannel = {
    dir,
    key: key ?? (await testPublisher()),
    fetched: [],
    down: false,
    gate: null,
    definition: (extra = {}) => testDefinition(channel.key, urlPrefix, { name, ...base, ...extra }),
    fetchBytes: async (url) => {
      channel.fetched.push(url);
      if (channel.gate !== null) await channel.gate;
      if (channel.down) throw new ChannelError('fetch-failed', `${url}: connection refused (test)`);
      if (!url.startsWith(urlPrefix))
        throw new ChannelError('fetch-failed', `${url}: unknown host (test)`);
      try {
        return new Uint8Array(await readFile(join(dir, url.slice(urlPrefix.length))));
      } catch {
        throw new ChannelError('fetch-failed', `${url}: server answered HTTP 404 (test)`);
      }
    },
    publish: async (rulesets, ts, options = {}) => {
      await publishChannelFiles(dir, channel.definition(), channel.key, rulesets, ts, options);
    },
  };
  return channel;
}

/** chrome.alarms as far as the channel service uses it; remembers the single pending alarm. */
export class FakeAlarms implements AlarmsLike {
  readonly alarms = new Map<string, number>();
  create(name: string, info: { when: number }): void {
    this.alarms.set(name, info.when);
  }
  async clear(name: string): Promise<boolean> {
    return this.alarms.delete(name);
  }
}

/** A clock the test moves (unix seconds). */
export function testClock(start: number): {
  now: () => number;
  advance(seconds: number): void;
  set(seconds: number): void;
} {
  let t = start;
  return {
    now: () => t,
    advance: (s) => {
      t += s;
    },
    set: (s) => {
      t = s;
    },
  };
}
