import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compileBundle } from '../src/bundle/write.js';
import {
  type ChannelDefinition,
  type ChannelRecord,
  type ChannelStorage,
  checkChannel,
  fetchBytesWith,
  generateSigningKeyPair,
  scopedEngineFromChannels,
  selectActiveChannels,
  signBytes,
  type SigningKeyPair,
} from '../src/channels/index.js';
import type { Ruleset } from '../src/model/ruleset.js';
import { type ChannelServer, fetchTrusting, makeCertificate, publishChannelFiles, startChannelServer, type TestCertificate, writeFiles } from './channels-support.js';

const T1 = 1_700_000_000;
const T2 = 1_700_086_400;
const T3 = 1_700_172_800;
const NOW = 1_700_200_000;

function ruleset(name: string, host: string, to = 'https:'): Ruleset {
  return { name, targets: [{ host }], rules: [{ from: '^http:', to }], exclusions: [], secureCookies: [], tests: [] };
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
let key: SigningKeyPair;
let otherKey: SigningKeyPair;
let root: string;
let server: ChannelServer;
let channel: ChannelDefinition;

/** Publishes into the test channel's directory, signed with the channel key unless told otherwise. */
function publish(rulesets: Ruleset[], ts: number, options: { embedded?: number; signWith?: SigningKeyPair; advertise?: boolean } = {}): Promise<{ gz: Uint8Array; sig: Uint8Array }> {
  return publishChannelFiles(root, rulesets, ts, (options.signWith ?? key).privateKey, options);
}

const options = (extra: Partial<Parameters<typeof checkChannel>[2]> = {}) => ({
  fetchBytes: fetchBytesWith(fetchTrusting(cert.cert)),
  now: () => NOW,
  ...extra,
});

/** What a client would rewrite with, given the stored record. */
function rewriteAll(record: ChannelRecord | undefined): (string | null)[] {
  const engine = scopedEngineFromChannels(selectActiveChannels(record ? [record] : []), null);
  return ['http://example.com/', 'http://example.org/', 'http://unrelated.net/'].map((u) => engine.rewrite(u));
}

beforeAll(async () => {
  cert = makeCertificate();
  [key, otherKey] = await Promise.all([generateSigningKeyPair(), generateSigningKeyPair()]);
});

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'httpsify-channel-'));
  server = await startChannelServer(cert, root);
  channel = { name: 'Test channel', urlPrefix: server.urlPrefix, publicKey: key.publicKey, scope: '', replacesDefaults: false };
});

afterEach(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

/** Installs V1 at T1 and returns the storage plus a snapshot of what is active. */
async function installV1(): Promise<{ storage: ReturnType<typeof memoryStorage>; before: ChannelRecord }> {
  await publish(V1, T1);
  const storage = memoryStorage();
  const report = await checkChannel(channel, storage, options());
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

describe('channel update over HTTPS', () => {
  it('installs a good update, then reports current, then installs a newer one', async () => {
    const { storage, before } = await installV1();
    expect(before.installed?.timestamp).toBe(T1);
    expect(rewriteAll(before)).toEqual(['https://example.com/', null, null]);
    expect(before.lastCheck).toEqual({ at: NOW, result: 'updated' });

    server.requests.length = 0;
    const again = await checkChannel(channel, storage, options());
    expect(again).toMatchObject({ result: 'current', installedTimestamp: T1 });
    // Up to date: only the timestamp is fetched.
    expect(server.requests).toEqual(['/channel/latest-timestamp']);

    await publish(V2, T2);
    const update = await checkChannel(channel, storage, options());
    expect(update).toMatchObject({ result: 'updated', previousTimestamp: T1, installedTimestamp: T2, rulesetCount: 2 });
    expect(rewriteAll(storage.record)).toEqual(['https://example.com/', 'https://example.org/', null]);
  });

  it('rejects a bad signature and retries successfully next time', async () => {
    const { storage, before } = await installV1();
    const { sig } = await publish(V2, T2);
    const bad = sig.slice();
    bad[10] = (bad[10] as number) ^ 0x01;
    server.faults.set(`rulesets.${T2}.sig`, { kind: 'replace', body: bad });

    const report = await checkChannel(channel, storage, options());
    expect(report).toMatchObject({ result: 'failed', installedTimestamp: T1, error: { code: 'bad-signature' } });
    expectUnchanged(storage, before);

    // Nothing about T2 was remembered, so the repaired publication is picked up.
    server.faults.clear();
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'updated', installedTimestamp: T2 });
  });

  it('rejects a signature of the wrong length', async () => {
    const { storage, before } = await installV1();
    const { sig } = await publish(V2, T2);
    server.faults.set(`rulesets.${T2}.sig`, { kind: 'replace', body: sig.subarray(0, 256) });
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'failed', error: { code: 'bad-signature' } });
    expectUnchanged(storage, before);
  });

  it('rejects a truncated bundle (signature over the full bytes)', async () => {
    const { storage, before } = await installV1();
    const { gz } = await publish(V2, T2);
    server.faults.set(`rulesets.${T2}.bundle.gz`, { kind: 'replace', body: gz.subarray(0, gz.length >> 1) });
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'failed', error: { code: 'bad-signature' } });
    expectUnchanged(storage, before);
  });

  it('rejects a truncated bundle even when the publisher signed the truncated bytes', async () => {
    const { storage, before } = await installV1();
    const full = new Uint8Array(gzipSync(compileBundle(V2, { timestamp: T2 })));
    const truncated = full.subarray(0, full.length - 8);
    writeFiles(root, { [`rulesets.${T2}.bundle.gz`]: truncated, [`rulesets.${T2}.sig`]: await signBytes(key.privateKey, truncated), 'latest-timestamp': `${T2}` });
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'failed', error: { code: 'corrupt-bundle' } });
    expectUnchanged(storage, before);
  });

  it('rejects a signed gzip whose content is not a bundle', async () => {
    const { storage, before } = await installV1();
    const gz = new Uint8Array(gzipSync(new TextEncoder().encode('<ruleset name="not compiled"/>')));
    writeFiles(root, { [`rulesets.${T2}.bundle.gz`]: gz, [`rulesets.${T2}.sig`]: await signBytes(key.privateKey, gz), 'latest-timestamp': `${T2}` });
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'failed', error: { code: 'corrupt-bundle' } });
    expectUnchanged(storage, before);
  });

  it('refuses a replayed older bundle', async () => {
    await publish(V1, T1);
    const storage = memoryStorage();
    await publish(V2, T2);
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'updated', installedTimestamp: T2 });
    const before = structuredClone(storage.record as ChannelRecord);

    // The server (or an attacker in its place) goes back to the older, validly signed T1.
    writeFiles(root, { 'latest-timestamp': `${T1}\n` });
    server.requests.length = 0;
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'failed', installedTimestamp: T2, error: { code: 'not-newer' } });
    expectUnchanged(storage, before);
    expect(server.requests).toEqual(['/channel/latest-timestamp']);
  });

  it('refuses an older signed bundle served under a newer timestamp', async () => {
    const { storage, before } = await installV1();
    const old = { gz: readFileSync(join(root, `rulesets.${T1}.bundle.gz`)), sig: readFileSync(join(root, `rulesets.${T1}.sig`)) };
    writeFiles(root, { [`rulesets.${T3}.bundle.gz`]: old.gz, [`rulesets.${T3}.sig`]: old.sig, 'latest-timestamp': `${T3}` });
    const report = await checkChannel(channel, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'timestamp-mismatch' } });
    expect(report.error?.message).toContain(String(T1));
    expectUnchanged(storage, before);
  });

  it('refuses a bundle whose embedded timestamp differs from the advertised one', async () => {
    const { storage, before } = await installV1();
    await publish(V2, T3, { embedded: T2 });
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'failed', error: { code: 'timestamp-mismatch' } });
    expectUnchanged(storage, before);
  });

  it('refuses a bundle signed with another key', async () => {
    const { storage, before } = await installV1();
    await publish(V2, T2, { signWith: otherKey });
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'failed', error: { code: 'bad-signature' } });
    expectUnchanged(storage, before);
  });

  it('installs nothing when the channel definition carries the wrong key', async () => {
    await publish(V1, T1);
    const storage = memoryStorage();
    const report = await checkChannel({ ...channel, publicKey: otherKey.publicKey }, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'bad-signature' } });
    expect(storage.record?.installed).toBeUndefined();
    expect(rewriteAll(storage.record)).toEqual([null, null, null]);
  });

  it.each([
    ['latest-timestamp', 500],
    ['latest-timestamp', 404],
    [`rulesets.${T2}.sig`, 503],
    [`rulesets.${T2}.bundle.gz`, 500],
  ])('keeps the installed rulesets when the server fails on %s with HTTP %i', async (file, status) => {
    const { storage, before } = await installV1();
    await publish(V2, T2);
    server.faults.set(file, { kind: 'status', status });
    const report = await checkChannel(channel, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'fetch-failed' } });
    expect(report.error?.message).toContain(`HTTP ${status}`);
    expectUnchanged(storage, before);
  });

  it('keeps the installed rulesets when the server is unreachable', async () => {
    const { storage, before } = await installV1();
    await server.close();
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'failed', error: { code: 'fetch-failed' } });
    expectUnchanged(storage, before);
  });

  it('keeps the installed rulesets when the download is interrupted', async () => {
    const { storage, before } = await installV1();
    const { gz } = await publish(V2, T2);
    server.faults.set(`rulesets.${T2}.bundle.gz`, { kind: 'interrupt', sendBytes: gz.length >> 1 });
    const report = await checkChannel(channel, storage, options());
    expect(report).toMatchObject({ result: 'failed', error: { code: 'fetch-failed' } });
    expect(report.error?.message).toMatch(/interrupted/);
    expectUnchanged(storage, before);
  });

  it('enforces the size limits before and after decompression', async () => {
    const { storage, before } = await installV1();
    const { gz } = await publish(V2, T2);
    const small = await checkChannel(channel, storage, options({ limits: { maxCompressedBytes: gz.length - 1 } }));
    expect(small).toMatchObject({ result: 'failed', error: { code: 'too-large' } });
    expectUnchanged(storage, before);
    const bomb = await checkChannel(channel, storage, options({ limits: { maxBundleBytes: 64 } }));
    expect(bomb).toMatchObject({ result: 'failed', error: { code: 'too-large' } });
    expectUnchanged(storage, before);
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'updated' });
  });

  it('refuses a malformed or far-future latest-timestamp', async () => {
    const { storage, before } = await installV1();
    for (const body of ['', 'soon', '0x6553F100', '1.7e9', `${T2},1`, '-1700000000', '17000000000000']) {
      writeFiles(root, { 'latest-timestamp': body });
      expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'failed', error: { code: 'invalid-timestamp' } });
      expectUnchanged(storage, before);
    }
    await publish(V2, NOW + 3 * 86400);
    expect(await checkChannel(channel, storage, options())).toMatchObject({ result: 'failed', error: { code: 'invalid-timestamp' } });
    expectUnchanged(storage, before);
  });

  it('refuses, for a channel replacing the defaults, bundles older than the built-in rulesets', async () => {
    await publish(V1, T1);
    const replacing = { ...channel, replacesDefaults: true };
    const storage = memoryStorage();
    expect(await checkChannel(replacing, storage, options({ defaultsTimestamp: T2 }))).toMatchObject({ result: 'failed', error: { code: 'older-than-defaults' } });
    expect(storage.record?.installed).toBeUndefined();
    // The same bundle is fine for a channel that only adds rulesets.
    expect(await checkChannel(channel, storage, options({ defaultsTimestamp: T2 }))).toMatchObject({ result: 'updated' });
    await publish(V2, T2);
    expect(await checkChannel(replacing, memoryStorage(), options({ defaultsTimestamp: T2 }))).toMatchObject({ result: 'updated' });
  });

  it('reports a storage failure without losing the installed bundle', async () => {
    const { storage, before } = await installV1();
    await publish(V2, T2);
    const failing: ChannelStorage = { load: storage.load, save: async () => Promise.reject(new Error('disk full')) };
    const report = await checkChannel(channel, failing, options());
    expect(report).toMatchObject({ result: 'failed', installedTimestamp: T1, error: { code: 'storage-failed' } });
    expect(report.error?.message).toContain('disk full');
    expect(storage.record).toEqual(before);
  });
});
