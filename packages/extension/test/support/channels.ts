import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { ChannelError, type ChannelDefinition, type FetchBytes, generateSigningKeyPair, type SigningKeyPair } from '@httpsify/engine/channels';
import { publishChannelFiles } from '../../../engine/test/channels-support.js';
import type { AlarmsLike } from '../../src/channels/channel-service.js';

export { publishChannelFiles };

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
  key: SigningKeyPair;
  definition(extra?: Partial<ChannelDefinition>): ChannelDefinition;
  fetchBytes: FetchBytes;
  /** URLs fetched, in order. */
  fetched: string[];
  /** Makes every fetch fail (server down) while true. */
  down: boolean;
  /** Resolves fetches only when released (to observe concurrency); null: immediately. */
  gate: Promise<void> | null;
  publish(rulesets: Ruleset[], ts: number, options?: { signWith?: SigningKeyPair }): Promise<void>;
}

/** 2048-bit keys: the smallest clients accept, and quick to generate. */
export function testKey(): Promise<SigningKeyPair> {
  return generateSigningKeyPair(2048);
}

export async function testChannel(name = 'Test channel', key?: SigningKeyPair): Promise<TestChannel> {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-ext-channel-'));
  const urlPrefix = `https://${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.channels.test/v1/`;
  const channel: TestChannel = {
    dir,
    key: key ?? (await testKey()),
    fetched: [],
    down: false,
    gate: null,
    definition: (extra = {}) => ({ name, urlPrefix, publicKey: channel.key.publicKey, scope: '', replacesDefaults: false, ...extra }),
    fetchBytes: async (url) => {
      channel.fetched.push(url);
      if (channel.gate !== null) await channel.gate;
      if (channel.down) throw new ChannelError('fetch-failed', `${url}: connection refused (test)`);
      if (!url.startsWith(urlPrefix)) throw new ChannelError('fetch-failed', `${url}: unknown host (test)`);
      try {
        return new Uint8Array(await readFile(join(dir, url.slice(urlPrefix.length))));
      } catch {
        throw new ChannelError('fetch-failed', `${url}: server answered HTTP 404 (test)`);
      }
    },
    publish: async (rulesets, ts, options = {}) => {
      await publishChannelFiles(dir, rulesets, ts, (options.signWith ?? channel.key).privateKey);
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
export function testClock(start: number): { now: () => number; advance(seconds: number): void; set(seconds: number): void } {
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
