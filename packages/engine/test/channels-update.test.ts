import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compileBundle } from '../src/bundle/write.js';
import {
  type ChannelDefinition,
  channelFreshness,
  type ChannelRecord,
  type ChannelStorage,
  checkChannel,
  fetchBytesWith,
  releaseFiles,
  scopedEngineFromChannels,
  installedProblem,
  selectActiveChannels,
  type SigningKeyPair,
} from '../src/channels/index.js';
import type { Ruleset } from '../src/model/ruleset.js';
import {
  type ChannelServer,
  fetchTrusting,
  makeCertificate,
  publishChannelFiles,
  startChannelServer,
  type TestCertificate,
  testDefinition,
  testKeyPair,
  type TestPublisher,
  testPublisher,
  writeFiles,
} from './channels-support.js';

const T1 = 1_700_000_000;
const T2 = 1_700_086_400;
const T3 = 1_700_172_800;
const NOW = 1_700_200_000;

function ruleset(name: string, host: string, to = 'https:', from = '^http:'): Ruleset {
  return {
    name,
    targets: [{ host }],
    rules: [{ from, to }],
    exclusions: [],
    secureCookies: [],
    tests: [],
  };
}

/** Rulesets of version 1 upgrade example.com; version 2 also upgrades example.org. */
const V1 = [ruleset('Example', 'example.com')];
const V2 = [ruleset('Example', 'example.com'), ruleset('Example Org', 'example.org')];

/** A real (in-memory) ChannelStorage: records are deep-copied in and out, as a store would. */
function memoryStorage(): ChannelStorage & { record: ChannelRecord | undefined; saves: number } {
  const store = {
    record: undefined as ChannelRecord | undefined,
    saves: 0,
    load: async () => (store.record ? structuredClone(store.record) : undefined),
    save: async (r: ChannelRecord) => {
      store.saves++;
      store.record = structuredClone(r);
    },
  };
  return store;
}

let cert: TestCertificate;
let publisher: TestPublisher;
let otherKey: SigningKeyPair;
let root: string;
let server: ChannelServer;
let channel: ChannelDefinition;

/** Publishes into the test channel's directory, signed with key version 1 unless told otherwise. */
function publish(
  rulesets: Ruleset[],
  ts: number,
  options: Parameters<typeof publishChannelFiles>[5] & { def?: ChannelDefinition } = {},
) {
  return publishChannelFiles(root, options.def ?? channel, publisher, rulesets, ts, options);
}

const options = (extra: Partial<Parameters<typeof checkChannel>[2]> = {}) => ({
  fetchBytes: fetchBytesWith(fetchTrusting(cert.cert)),
  now: () => NOW,
  ...extra,
});

/** What a client would rewrite with, given the stored record. */
function rewriteAll(record: ChannelRecord | undefined): (string | null)[] {
  const engine = scopedEngineFromChannels(selectActiveChannels(record ? [record] : []), null);
  return ['http://example.com/', 'http://example.org/', 'http://unrelated.net/'].map((u) =>
    engine.rewrite(u),
  );
}

beforeAll(async () => {
  cert = makeCertificate();
  [publisher, otherKey] = await Promise.all([testPublisher(), testKeyPair()]);
});

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'httpsify-channel-'));
  server = await startChannelServer(cert, root);
  channel = testDefinition(publisher, server.urlPrefix);
  // Rotation tests add keys; every test starts from the single key version 1.
  for (const v of [...publisher.keys.keys()]) if (v !== 1) publisher.keys.delete(v);
});

afterEach(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

/** Installs V1 at T1 and returns the storage plus a snapshot of what is active. */
async function installV1(
  def = channel,
): Promise<{ storage: ReturnType<typeof memoryStorage>; before: ChannelRecord }> {
  await publish(V1, T1, { def });
  const storage = memoryStorage();
  const report = await checkChannel(def, storage, options());
  expect(report).toMatchObject({ result: 'updated', installedTimestamp: T1, rulesetCount: 1 });
  return { storage, before: structuredClone(storage.record as ChannelRecord) };
}

/** The failure contract: reported, recorded as the last check, and the installed bundle untouched. */
function expectUnchanged(storage: ReturnType<typeof memoryStorage>, before: ChannelRecord): void {
  const after = storage.record as ChannelRecord;
  expect(after.installed).toEqual(before.installed);
  expect(after.lastCheck?.result).toBe('failed');
  expect(after.lastSuccessAt).toBe(before.lastSuccessAt);
  expect(rewriteAll(after)).toEqual(rewriteAll(before));
}

const sig = (ts: number) => `rulesets.${ts}.release.sig`;
const gzName = (ts: number) => `rulesets.${ts}.bundle.gz`;
const rel = (ts: number) => `rulesets.${ts}.release.json`;

describe('channel update over HTTPS', () => {
  it('installs a good update, then reports current, then installs a newer one', async () => {
    const { storage, before } = await installV1();
    expect(before.installed?.timestamp).toBe(T1);
    expect(rewriteAll(before)).toEqual(['https://example.com/', null, null]);
    expect(before.lastCheck).toEqual({ at: NOW, result: 'updated' });

    server.requests.length = 0;
    const again = await checkChannel(channel, storage, options());
    expect(again).toMatchObject({ result: 'current', installedTimestamp: T1 });
    // Up to date: only the timestamp is fetched; the bundle in storage was verified under this definition.
    expect(server.requests).toEqual(['/channel/latest-timestamp']);

    await publish(V2, T2);
    const update = await checkChannel(channel, storage, options());
    expect(update).toMatchObject({
      result: 'updated',
      previousTimestamp: T1,
      installedTimestamp: T2,
      rulesetCount: 2,
    });
    expect(rewriteAll(storage.record)).toEqual([
      'https://example.com/',
      'https://example.org/',
      null,
    ]);
  });

  it('rejects a bad signature and retries successfully next time', async () => {
    const { storage, before } = await installV1();
    const files = await publish(V2, T2);
    const bad = (files[sig(T2)] as Uint8Array).slice();
    bad[10] = (bad[10] as number) ^ 0x01;
    server.faults.set(sig(T2), { kind: 'replace', body: bad });

    const report = await checkChannel(channel, storage, options());
    expect(report).toMatchObject({
      result: 'failed',
      installedTimestamp: T1,
      error: { code: 'bad-signature' },
    });
    expectUnchanged(storage, before);

    // Nothing about T2 was remembered, so the repaired publication is picked up.
    server.faults.clear();
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'updated',
      installedTimestamp: T2,
    });
  });

  it('rejects a signature of the wrong length', async () => {
    const { storage, before } = await installV1();
    const files = await publish(V2, T2);
    server.faults.set(sig(T2), {
      kind: 'replace',
      body: (files[sig(T2)] as Uint8Array).subarray(0, 256),
    });
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'failed',
      error: { code: 'bad-signature' },
    });
    expectUnchanged(storage, before);
  });

  it('rejects a truncated bundle (signature over the full bytes)', async () => {
    const { storage, before } = await installV1();
    const gz = (await publish(V2, T2))[gzName(T2)] as Uint8Array;
    server.faults.set(gzName(T2), { kind: 'replace', body: gz.subarray(0, gz.length >> 1) });
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'failed',
      error: { code: 'corrupt-bundle' },
    });
    expectUnchanged(storage, before);
  });

  it('rejects a truncated bundle even when the publisher signed the truncated bytes', async () => {
    const { storage, before } = await installV1();
    const full = compileBundle(V2, { timestamp: T2 });
    const gz = new Uint8Array(gzipSync(full));
    const files = await releaseFiles(
      channel,
      full,
      T2,
      (publisher.keys.get(1) as SigningKeyPair).privateKey,
      1,
      gz.subarray(0, gz.length - 8),
    );
    writeFiles(root, { ...files, 'latest-timestamp': `${T2}` });
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'failed',
      error: { code: 'corrupt-bundle' },
    });
    expectUnchanged(storage, before);
  });

  it('rejects a signed gzip whose content is not a bundle', async () => {
    const { storage, before } = await installV1();
    const notBundle = new TextEncoder().encode('<ruleset name="not compiled"/>');
    writeFiles(root, {
      ...(await releaseFiles(
        channel,
        notBundle,
        T2,
        (publisher.keys.get(1) as SigningKeyPair).privateKey,
        1,
      )),
      'latest-timestamp': `${T2}`,
    });
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'failed',
      error: { code: 'corrupt-bundle' },
    });
    expectUnchanged(storage, before);
  });

  it('refuses a replayed older bundle', async () => {
    await publish(V1, T1);
    const storage = memoryStorage();
    await publish(V2, T2);
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'updated',
      installedTimestamp: T2,
    });
    const before = structuredClone(storage.record as ChannelRecord);

    // The server (or an attacker in its place) goes back to the older, validly signed T1.
    writeFiles(root, { 'latest-timestamp': `${T1}\n` });
    server.requests.length = 0;
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'failed',
      installedTimestamp: T2,
      error: { code: 'not-newer' },
    });
    expectUnchanged(storage, before);
    expect(server.requests).toEqual(['/channel/latest-timestamp']);
  });

  it('refuses an older signed bundle served under a newer timestamp', async () => {
    const { storage, before } = await installV1();
    const old = {
      gz: readFileSync(join(root, gzName(T1))),
      rel: readFileSync(join(root, rel(T1))),
      sig: readFileSync(join(root, sig(T1))),
    };
    writeFiles(root, {
      [gzName(T3)]: old.gz,
      [rel(T3)]: old.rel,
      [sig(T3)]: old.sig,
      'latest-timestamp': `${T3}`,
    });
    const report = await checkChannel(channel, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'timestamp-mismatch' } });
    expect(report.error?.message).toContain(String(T1));
    expectUnchanged(storage, before);
  });

  it('refuses a bundle whose embedded timestamp differs from the advertised one', async () => {
    const { storage, before } = await installV1();
    await publish(V2, T3, { embedded: T2 });
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'failed',
      error: { code: 'timestamp-mismatch' },
    });
    expectUnchanged(storage, before);
  });

  it('refuses a release signed with a key the root did not certify', async () => {
    const { storage, before } = await installV1();
    await publish(V2, T2, { signWith: otherKey });
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'failed',
      error: { code: 'bad-signature' },
    });
    expectUnchanged(storage, before);
  });

  it('installs nothing when the channel definition carries the wrong root key', async () => {
    await publish(V1, T1);
    const storage = memoryStorage();
    const report = await checkChannel(
      { ...channel, rootKey: otherKey.publicKey },
      storage,
      options(),
    );
    expect(report).toMatchObject({ result: 'failed', error: { code: 'bad-signature' } });
    expect(storage.record?.installed).toBeUndefined();
    expect(rewriteAll(storage.record)).toEqual([null, null, null]);
  });

  it.each([
    ['latest-timestamp', 500],
    ['latest-timestamp', 404],
    [sig(T2), 503],
    [rel(T2), 404],
    ['key.1.json', 500],
    [gzName(T2), 500],
  ])(
    'keeps the installed rulesets when the server fails on %s with HTTP %i',
    async (file, status) => {
      const { storage, before } = await installV1();
      // The key certificate is remembered after the first install; forget it to exercise its download.
      if (file.startsWith('key.')) delete storage.record?.signingKey;
      await publish(V2, T2);
      server.faults.set(file, { kind: 'status', status });
      const report = await checkChannel(channel, storage, options());
      expect(report).toMatchObject({ result: 'failed', error: { code: 'fetch-failed' } });
      expect(report.error?.message).toContain(`HTTP ${status}`);
      expectUnchanged(storage, before);
    },
  );

  it('keeps the installed rulesets when the server is unreachable', async () => {
    const { storage, before } = await installV1();
    await server.close();
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'failed',
      error: { code: 'fetch-failed' },
    });
    expectUnchanged(storage, before);
  });

  it('keeps the installed rulesets when the download is interrupted', async () => {
    const { storage, before } = await installV1();
    const gz = (await publish(V2, T2))[gzName(T2)] as Uint8Array;
    server.faults.set(gzName(T2), { kind: 'interrupt', sendBytes: gz.length >> 1 });
    const report = await checkChannel(channel, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'fetch-failed' } });
    expect(report.error?.message).toMatch(/interrupted/);
    expectUnchanged(storage, before);
  });

  it('enforces the size limits before and after decompression', async () => {
    const { storage, before } = await installV1();
    const gz = (await publish(V2, T2))[gzName(T2)] as Uint8Array;
    const small = await checkChannel(
      channel,
      storage,
      options({ limits: { maxCompressedBytes: gz.length - 1 } }),
    );
    expect(small).toMatchObject({ result: 'failed', error: { code: 'too-large' } });
    expectUnchanged(storage, before);
    const bomb = await checkChannel(channel, storage, options({ limits: { maxBundleBytes: 64 } }));
    expect(bomb).toMatchObject({ result: 'failed', error: { code: 'too-large' } });
    expectUnchanged(storage, before);
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'updated' });
  });

  it('refuses a malformed or far-future latest-timestamp', async () => {
    const { storage, before } = await installV1();
    for (const body of [
      '',
      'soon',
      '0x6553F100',
      '1.7e9',
      `${T2},1`,
      '-1700000000',
      '17000000000000',
    ]) {
      writeFiles(root, { 'latest-timestamp': body });
      expect(await checkChannel(channel, storage, options())).toMatchObject({
        result: 'failed',
        error: { code: 'invalid-timestamp' },
      });
      expectUnchanged(storage, before);
    }
    await publish(V2, NOW + 3 * 86400);
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'failed',
      error: { code: 'invalid-timestamp' },
    });
    expectUnchanged(storage, before);
  });

  it('refuses, for a channel replacing the defaults, bundles older than the built-in rulesets', async () => {
    await publish(V1, T1);
    const replacing = { ...channel, replacesDefaults: true };
    const storage = memoryStorage();
    expect(
      await checkChannel(replacing, storage, options({ defaultsTimestamp: T2 })),
    ).toMatchObject({
      result: 'failed',
      error: { code: 'older-than-defaults' },
    });
    expect(storage.record?.installed).toBeUndefined();
    // The same bundle is fine for a channel that only adds rulesets.
    expect(await checkChannel(channel, storage, options({ defaultsTimestamp: T2 }))).toMatchObject({
      result: 'updated',
    });
    await publish(V2, T2);
    expect(
      await checkChannel(replacing, memoryStorage(), options({ defaultsTimestamp: T2 })),
    ).toMatchObject({ result: 'updated' });
  });

  it('reports a storage failure without losing the installed bundle', async () => {
    const { storage, before } = await installV1();
    await publish(V2, T2);
    const failing: ChannelStorage = {
      load: storage.load,
      save: async () => Promise.reject(new Error('disk full')),
    };
    const report = await checkChannel(channel, failing, options());
    expect(report).toMatchObject({
      result: 'failed',
      installedTimestamp: T1,
      error: { code: 'storage-failed' },
    });
    expect(report.error?.message).toContain('disk full');
    expect(storage.record).toEqual(before);
  });
});

describe('attacks from issue 13', () => {
  it('mix-and-match: a release of channel A is refused by channel B sharing its keys, naming what differs', async () => {
    // The publisher signs two channels with the same keys; B's server serves A's files.
    const a = { ...channel, name: 'Channel A' };
    const b = { ...channel, name: 'Channel B' };
    await publish(V1, T1, { def: a });
    const storage = memoryStorage();
    const report = await checkChannel(b, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'wrong-channel' } });
    expect(report.error?.message).toMatch(/channel name .*"Channel A".*"Channel B"/);
    expect(rewriteAll(storage.record)).toEqual([null, null, null]);
    expect(await checkChannel(a, memoryStorage(), options())).toMatchObject({ result: 'updated' });
  });

  it.each([
    ['scope', { scope: '^https?://example\\.com/' }, /scope/],
    ['URL prefix', { urlPrefix: 'https://elsewhere.example/channel/' }, /URL prefix/],
    ['destination list', { destinations: ['cdn.example.net'] }, /destination list/],
  ])(
    'mix-and-match: a release signed for another %s is refused',
    async (_what, signedFor, message) => {
      await publish(V1, T1, { def: { ...channel, ...signedFor } });
      const report = await checkChannel(channel, memoryStorage(), options());
      expect(report).toMatchObject({ result: 'failed', error: { code: 'wrong-channel' } });
      expect(report.error?.message).toMatch(message);
    },
  );

  it('destinations: a rule sending in-scope URLs to another site refuses the whole release', async () => {
    const scoped = { ...channel, scope: '^https?://([^/]*\\.)?example\\.org[:/]' };
    const { storage, before } = await installV1(scoped);
    const evil = [
      ruleset(
        'Example Org',
        'www.example.org',
        'https://attacker.example/www/',
        '^http://www\\.example\\.org/',
      ),
      ruleset('Fine', 'example.org'),
    ];
    await publish(evil, T2, { def: scoped });
    const report = await checkChannel(scoped, storage, options());
    expect(report).toMatchObject({
      result: 'failed',
      error: { code: 'destination-outside-scope' },
    });
    expect(report.error?.message).toContain('https://attacker.example/www/');
    expectUnchanged(storage, before);
    // Listed in the (signed) destinations, the same rule is accepted.
    const listed = { ...scoped, destinations: ['attacker.example'] };
    await publish(evil, T3, { def: listed });
    expect(await checkChannel(listed, memoryStorage(), options())).toMatchObject({
      result: 'updated',
    });
  });

  it('destinations: a computed destination outside the scope is not followed when rewriting', async () => {
    const scoped = { ...channel, scope: '^https?://([^/]*\\.)?example\\.org[:/]' };
    const sneaky = [
      ruleset('Sneaky', '*.example.org', 'https://$1.attacker.example/', '^http://([^/]+)/'),
      ruleset('Fine', 'example.org'),
    ];
    await publish(sneaky, T1, { def: scoped });
    const storage = memoryStorage();
    expect(await checkChannel(scoped, storage, options())).toMatchObject({ result: 'updated' });
    const engine = scopedEngineFromChannels(
      selectActiveChannels([storage.record as ChannelRecord]),
      null,
    );
    expect(engine.rewriteWithRuleset('http://www.example.org/')).toMatchObject({
      rewritten: null,
      refused: { channel: 'Test channel', rewritten: 'https://www.example.org.attacker.example/' },
    });
    expect(engine.rewrite('http://example.org/')).toBe('https://example.org/');
  });

  it('freshness: a first install never goes below the minimum timestamp', async () => {
    await publish(V1, T1);
    const strict = { ...channel, minTimestamp: T2 };
    const storage = memoryStorage();
    const report = await checkChannel(strict, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'below-minimum' } });
    expect(storage.record?.installed).toBeUndefined();
    await publish(V2, T2);
    expect(await checkChannel(strict, storage, options())).toMatchObject({
      result: 'updated',
      installedTimestamp: T2,
    });
  });

  it('freshness: a frozen mirror leaves the channel "current" but stale after its maximum age; its rules keep applying', async () => {
    const { storage } = await installV1({ ...channel, maxAgeDays: 2 });
    const def = { ...channel, maxAgeDays: 2 };
    const at = (days: number) => T1 + days * 86_400;
    expect(channelFreshness(def, storage.record, at(1))).toEqual({
      stale: false,
      ageSeconds: 86_400,
      maxAgeSeconds: 172_800,
    });
    // The server keeps serving T1 for ever: every check is "current", and staleness shows.
    expect(await checkChannel(def, storage, options({ now: () => at(5) }))).toMatchObject({
      result: 'current',
    });
    expect(channelFreshness(def, storage.record, at(5))).toMatchObject({
      stale: true,
      ageSeconds: 5 * 86_400,
    });
    expect(rewriteAll(storage.record)).toEqual(['https://example.com/', null, null]);
  });

  it('rotation: after key 2 is certified, releases under key 1 are refused and its installed bundle stops applying', async () => {
    const { storage } = await installV1();
    expect(storage.record?.signingKey?.version).toBe(1);
    publisher.keys.set(2, await testKeyPair());
    await publish(V2, T2, { keyVersion: 2 });
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'updated',
      installedTimestamp: T2,
    });
    expect(storage.record?.signingKey?.version).toBe(2);
    // A thief holding key 1 publishes a newer release with it: refused, the T2 bundle stays.
    await publish(V1, T3, { keyVersion: 1 });
    const report = await checkChannel(channel, storage, options());
    expect(report).toMatchObject({
      result: 'failed',
      installedTimestamp: T2,
      error: { code: 'key-revoked' },
    });
    expect(rewriteAll(storage.record)).toEqual([
      'https://example.com/',
      'https://example.org/',
      null,
    ]);
  });

  it('revocation belongs to the root key: a changed definition under the same root keeps key 1 revoked', async () => {
    const { storage } = await installV1();
    publisher.keys.set(2, await testKeyPair());
    await publish(V2, T2, { keyVersion: 2 });
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'updated',
      installedTimestamp: T2,
    });
    // The owner widens the definition (a new destination); the thief signs a release for it with key 1.
    const widened = { ...channel, destinations: ['cdn.example.net'] };
    await publish(V2, T3, { def: widened, keyVersion: 1 });
    const report = await checkChannel(widened, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'key-revoked' } });
    expect(storage.record?.floor).toMatchObject({ keyVersion: 2, timestamp: T2 });
    // Key 2 still works under the new definition.
    await publish(V2, T3 + 1, { def: widened, keyVersion: 2 });
    expect(await checkChannel(widened, storage, options())).toMatchObject({
      result: 'updated',
      installedTimestamp: T3 + 1,
    });
  });

  it('the rollback floor belongs to the root key: a changed definition does not accept an older release', async () => {
    const { storage } = await installV1();
    await publish(V2, T3);
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'updated',
      installedTimestamp: T3,
    });
    // An older release signed for a wider definition (for instance kept from a past change) is replayed.
    const widened = { ...channel, destinations: ['cdn.example.net'] };
    await publish(V1, T2, { def: widened });
    const report = await checkChannel(widened, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'not-newer' } });
    expect(storage.record?.floor?.timestamp).toBe(T3);
  });

  it('rotation: learning of key 2 in a check that then fails still revokes the bundle signed by key 1', async () => {
    const { storage } = await installV1();
    publisher.keys.set(2, await testKeyPair());
    await publish(V2, T2, { keyVersion: 2 });
    server.faults.set(gzName(T2), { kind: 'status', status: 503 });
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'failed',
      installedTimestamp: undefined,
      error: { code: 'fetch-failed' },
    });
    expect(storage.record?.installed?.keyVersion).toBe(1);
    expect(rewriteAll(storage.record)).toEqual([null, null, null]);
  });

  it('revocation: raising minKeyVersion in the definition stops the old bundle and re-verifies instead of saying "up to date"', async () => {
    const { storage } = await installV1();
    const revoked = { ...channel, minKeyVersion: 2 };
    expect(
      selectActiveChannels([{ ...(storage.record as ChannelRecord), channel: revoked }]).channels,
    ).toEqual([]);
    const report = await checkChannel(revoked, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'key-revoked' } });
    expect(rewriteAll(storage.record)).toEqual([null, null, null]);
  });

  it('a raised minTimestamp stops an installed release older than it, as a revoked key does', async () => {
    const { storage } = await installV1();
    const raised = { ...channel, minTimestamp: T1 + 1 };
    const record = { ...(storage.record as ChannelRecord), channel: raised };
    expect(selectActiveChannels([record]).channels).toEqual([]);
    expect(installedProblem(raised, record)).toMatch(/older than the definition's minimum/);
    expect(installedProblem(channel, storage.record)).toBeNull();
  });

  it('a new root key in the definition: the bundle verified under the old root no longer applies', async () => {
    const { storage } = await installV1();
    const otherRoot = { ...channel, rootKey: otherKey.publicKey };
    const report = await checkChannel(otherRoot, storage, options());
    expect(report).toMatchObject({
      result: 'failed',
      previousTimestamp: undefined,
      error: { code: 'bad-signature' },
    });
    expect(rewriteAll(storage.record)).toEqual([null, null, null]);
  });

  it.each([301, 302, 307, 308])(
    'transport: a %i redirect to http:// is refused; one to https:// is followed',
    async (status) => {
      await publish(V1, T1);
      const { port } = new URL(server.urlPrefix);
      server.faults.set('latest-timestamp', {
        kind: 'redirect',
        status,
        location: `http://127.0.0.1:${port}/channel/latest-timestamp`,
      });
      const storage = memoryStorage();
      expect(await checkChannel(channel, storage, options())).toMatchObject({
        result: 'failed',
        error: { code: 'insecure-redirect' },
      });
      server.faults.clear();
      writeFiles(root, { 'moved.gz': readFileSync(join(root, gzName(T1))) });
      server.faults.set(gzName(T1), { kind: 'redirect', status, location: '/channel/moved.gz' });
      expect(await checkChannel(channel, storage, options())).toMatchObject({
        result: 'updated',
        installedTimestamp: T1,
      });
      expect(server.requests).toContain('/channel/moved.gz');
    },
  );

  it('transport: a redirect of the bundle to http:// is refused too', async () => {
    await publish(V1, T1);
    server.faults.set(gzName(T1), {
      kind: 'redirect',
      status: 302,
      location: 'http://127.0.0.1:1/x.gz',
    });
    expect(await checkChannel(channel, memoryStorage(), options())).toMatchObject({
      result: 'failed',
      error: { code: 'insecure-redirect' },
    });
  });

  it('transport: the .gz served with Content-Encoding: gzip installs', async () => {
    await publish(V1, T1);
    server.faults.set(gzName(T1), { kind: 'encoding', encoding: 'gzip' });
    const storage = memoryStorage();
    expect(await checkChannel(channel, storage, options())).toMatchObject({
      result: 'updated',
      installedTimestamp: T1,
    });
    expect(rewriteAll(storage.record)).toEqual(['https://example.com/', null, null]);
  });

  it('state: a failing check never writes its older view over a success saved meanwhile', async () => {
    const { storage } = await installV1();
    await publish(V2, T2);
    // A second client installs T2 while this one is still downloading; this one then fails.
    const fetchBytes = fetchBytesWith(fetchTrusting(cert.cert));
    const racing = async (url: string, o: { maxBytes: number }): Promise<Uint8Array> => {
      if (url.endsWith('.bundle.gz')) {
        expect(await checkChannel(channel, storage, options())).toMatchObject({
          result: 'updated',
          installedTimestamp: T2,
        });
        throw new Error('connection reset (test)');
      }
      return fetchBytes(url, o);
    };
    const report = await checkChannel(channel, storage, options({ fetchBytes: racing }));
    expect(report).toMatchObject({ result: 'failed', installedTimestamp: T2 });
    expect(storage.record?.installed?.timestamp).toBe(T2);
    expect(rewriteAll(storage.record)).toEqual([
      'https://example.com/',
      'https://example.org/',
      null,
    ]);
  });
});
