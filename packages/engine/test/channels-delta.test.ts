import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compileBundle } from '../src/bundle/write.js';
import {
  applyDelta,
  type ChannelDefinition,
  type ChannelRecord,
  type ChannelStorage,
  checkChannel,
  deltaFileName,
  deltaFiles,
  deltaIndexBytes,
  deltaIndexFileName,
  deltaIndexSignatureFileName,
  fetchBytesWith,
  makeDelta,
  parseDeltaIndex,
  sha256Hex,
  signBytes,
} from '../src/channels/index.js';
import type { Ruleset } from '../src/model/ruleset.js';
import { parseRulesetXml } from '../src/parse/xml-ruleset.js';
import {
  type ChannelServer,
  fetchTrusting,
  makeCertificate,
  publishChannelFiles,
  startChannelServer,
  type TestCertificate,
  testDefinition,
  type TestPublisher,
  testPublisher,
  writeFiles,
} from './channels-support.js';
import { corpusXmlFiles } from './support/corpus.js';

/** Real corpus rulesets (every 40th file), and a day's change: some edited, some added, some gone. */
const V1: Ruleset[] = corpusXmlFiles()
  .filter((_, i) => i % 40 === 0)
  .flatMap((file) => parseRulesetXml(readFileSync(file, 'utf8'), file).ruleset ?? []);
function dayAfter(rulesets: readonly Ruleset[]): Ruleset[] {
  const out = rulesets
    .filter((_, i) => i % 397 !== 5)
    .map((rs, i) =>
      i % 131 === 0
        ? {
            ...rs,
            targets: [...rs.targets, { host: `new-${i}.example.org` }],
            rules: [...rs.rules].reverse(),
          }
        : rs,
    );
  for (let k = 0; k < 4; k++)
    out.splice(37 * (k + 1), 0, {
      ...(rulesets[k] as Ruleset),
      name: `Brand new ${k}`,
      targets: [{ host: `brand-new-${k}.example.net` }],
    });
  return out;
}
const V2 = dayAfter(V1);
const T1 = 1_700_000_000;
const T2 = 1_700_086_400;
const NOW = 1_700_100_000;

describe('channel deltas', () => {
  const b1 = compileBundle(V1, { timestamp: T1 });
  const b2 = compileBundle(V2, { timestamp: T2 });

  it('rebuild the next release byte for byte, for a small fraction of its size', () => {
    const delta = makeDelta(b1, b2);
    expect(applyDelta(b1, delta, { timestamp: T2, maxBytes: b2.length })).toEqual(b2);
    expect(gzipSync(delta).length).toBeLessThan(gzipSync(b2).length * 0.1);
  });

  it('refuse hostile deltas: cut short, runs out of range or reused, output above the signed length', () => {
    const delta = makeDelta(b1, b2);
    const apply =
      (d: Uint8Array, maxBytes = b2.length) =>
      () =>
        applyDelta(b1, d, { timestamp: T2, maxBytes });
    expect(apply(delta.subarray(0, 10))).toThrow(/shorter than its header/);
    expect(apply(delta.subarray(0, delta.length - 100))).toThrow(/delta's bundle does not load/);
    const badMagic = delta.slice();
    badMagic[0] = 0;
    expect(apply(badMagic)).toThrow(/bad magic/);
    const manyRuns = delta.slice();
    new DataView(manyRuns.buffer).setUint32(12, 0x0fffffff, true);
    expect(apply(manyRuns)).toThrow(/cut short/);
    const pastEnd = delta.slice();
    new DataView(pastEnd.buffer).setUint32(20, V1.length + 1, true);
    expect(apply(pastEnd)).toThrow(/reaches past/);
    // The first run again in place of the second: a ruleset used twice (what could grow the output).
    const twice = delta.slice();
    const view = new DataView(twice.buffer);
    view.setUint32(24, view.getUint32(16, true), true);
    view.setUint32(28, view.getUint32(20, true), true);
    expect(apply(twice)).toThrow(/a second time/);
    expect(apply(delta, b2.length - 1)).toThrow(/more than the \d+ of the signed release/);
    // A delta applied to another base builds something else (the client's digest check refuses it).
    const other = compileBundle(V1.slice(1), { timestamp: T1 });
    const wrong = (() => {
      try {
        return applyDelta(other, delta, { timestamp: T2, maxBytes: b2.length * 2 });
      } catch {
        return null;
      }
    })();
    expect(wrong).not.toEqual(b2);
  });

  describe('over HTTPS', () => {
    let cert: TestCertificate;
    let publisher: TestPublisher;
    let server: ChannelServer;
    let root: string;
    let channel: ChannelDefinition;
    beforeAll(async () => {
      cert = makeCertificate();
      publisher = await testPublisher();
    });
    beforeEach(async () => {
      root = mkdtempSync(join(tmpdir(), 'httpsify-delta-'));
      server = await startChannelServer(cert, root);
      channel = testDefinition(publisher, server.urlPrefix);
      return async () => {
        await server.close();
        rmSync(root, { recursive: true, force: true });
      };
    });
    afterAll(() => undefined);

    const key = () => publisher.keys.get(1)?.privateKey as JsonWebKey;
    const options = () => ({
      fetchBytes: fetchBytesWith(fetchTrusting(cert.cert)),
      now: () => NOW,
    });
    function memoryStorage(): ChannelStorage & { record: ChannelRecord | undefined } {
      const store = {
        record: undefined as ChannelRecord | undefined,
        load: async () => (store.record ? structuredClone(store.record) : undefined),
        save: async (r: ChannelRecord) => {
          store.record = structuredClone(r);
        },
      };
      return store;
    }
    /** V1 installed, V2 published with a delta from V1 (as `httpsify publish` writes them). */
    async function installedThenPublished(): Promise<ReturnType<typeof memoryStorage>> {
      await publishChannelFiles(root, channel, publisher, V1, T1);
      const storage = memoryStorage();
      expect((await checkChannel(channel, storage, options())).download?.kind).toBe('full');
      await publishChannelFiles(root, channel, publisher, V2, T2);
      writeFiles(
        root,
        await deltaFiles(
          channel,
          [{ timestamp: T1, bundle: b1 }],
          b2,
          T2,
          key(),
          1,
          gzipSync(b2).length,
        ),
      );
      return storage;
    }
    /** A fresh client with V1 installed, while the channel advertises V2 again. */
    async function backToV1(storage: ReturnType<typeof memoryStorage>): Promise<void> {
      storage.record = undefined;
      writeFiles(root, { 'latest-timestamp': `${T1}\n` });
      expect((await checkChannel(channel, storage, options())).installedTimestamp).toBe(T1);
      writeFiles(root, { 'latest-timestamp': `${T2}\n` });
    }
    async function expectInstalledV2(
      storage: ReturnType<typeof memoryStorage>,
      kind: 'delta' | 'full',
      problem?: RegExp,
    ) {
      const report = await checkChannel(channel, storage, options());
      expect(report.result).toBe('updated');
      expect(report.download?.kind).toBe(kind);
      if (problem) expect(report.download?.deltaProblem).toMatch(problem);
      else expect(report.download?.deltaProblem).toBeUndefined();
      expect(storage.record?.installed?.bundle).toEqual(b2);
      return report;
    }

    it('installs the next release from its delta', async () => {
      const storage = await installedThenPublished();
      const report = await expectInstalledV2(storage, 'delta');
      expect(report.download?.bytes).toBeLessThan(gzipSync(b2).length * 0.1);
    });

    it('downloads the whole bundle when no delta starts from the installed release', async () => {
      const storage = await installedThenPublished();
      // The index offers only a delta from another release.
      writeFiles(
        root,
        await deltaFiles(
          channel,
          [{ timestamp: T1 - 10, bundle: compileBundle(V1.slice(3), { timestamp: T1 - 10 }) }],
          b2,
          T2,
          key(),
          1,
          1e9,
        ),
      );
      await expectInstalledV2(storage, 'full');
    });

    it('falls back to the whole bundle on a delta from another base bundle', async () => {
      const storage = await installedThenPublished();
      // Claims to start from T1, but was made from other bytes than the installed bundle.
      const other = compileBundle(V1.slice(2), { timestamp: T1 });
      writeFiles(
        root,
        await deltaFiles(channel, [{ timestamp: T1, bundle: other }], b2, T2, key(), 1, 1e9),
      );
      await expectInstalledV2(storage, 'full', /starts from another bundle/);
    });

    it('falls back on a truncated or tampered delta file', async () => {
      const storage = await installedThenPublished();
      const file = join(root, deltaFileName(T1, T2));
      const gz = readFileSync(file);
      writeFiles(root, { [deltaFileName(T1, T2)]: gz.subarray(0, gz.length >> 1) });
      await expectInstalledV2(storage, 'full', /delta|gzip|unexpected end/i);
      await backToV1(storage);
      const tampered = gunzipSync(gz);
      tampered[tampered.length - 9] ^= 1;
      writeFiles(root, { [deltaFileName(T1, T2)]: gzipSync(tampered) });
      await expectInstalledV2(
        storage,
        'full',
        /does not match the digest in the signed delta index/,
      );
    });

    it('falls back on a signed delta whose result is not the signed bundle (forged result)', async () => {
      const storage = await installedThenPublished();
      // Signed with the real key, digests right, but it builds V2 without one ruleset.
      const forged = makeDelta(b1, compileBundle(V2.slice(1), { timestamp: T2 }));
      const index = deltaIndexBytes({
        channel: channel.name,
        urlPrefix: channel.urlPrefix,
        timestamp: T2,
        keyVersion: 1,
        bundle: { file: `rulesets.${T2}.bundle.gz`, bytes: b2.length, sha256: await sha256Hex(b2) },
        deltas: [
          {
            from: T1,
            fromSha256: await sha256Hex(b1),
            file: deltaFileName(T1, T2),
            bytes: forged.length,
            sha256: await sha256Hex(forged),
          },
        ],
      });
      writeFiles(root, {
        [deltaFileName(T1, T2)]: gzipSync(forged),
        [deltaIndexFileName(T2)]: index,
        [deltaIndexSignatureFileName(T2)]: await signBytes(key(), index),
      });
      expect(parseDeltaIndex(index).deltas).toHaveLength(1);
      await expectInstalledV2(storage, 'full', /does not rebuild the bundle of the signed release/);
    });

    it('falls back on an index not signed by the release key, or signed for another release', async () => {
      const storage = await installedThenPublished();
      const other = await testPublisher();
      const index = readFileSync(join(root, deltaIndexFileName(T2)));
      writeFiles(root, {
        [deltaIndexSignatureFileName(T2)]: await signBytes(
          other.keys.get(1)?.privateKey as JsonWebKey,
          index,
        ),
      });
      await expectInstalledV2(storage, 'full', /delta index/);
      await backToV1(storage);
      const otherRelease = JSON.parse(index.toString()) as Record<string, unknown>;
      const moved = new TextEncoder().encode(
        JSON.stringify({
          ...otherRelease,
          bundle: { ...(otherRelease.bundle as object), bytes: 7 },
        }),
      );
      writeFiles(root, {
        [deltaIndexFileName(T2)]: moved,
        [deltaIndexSignatureFileName(T2)]: await signBytes(key(), moved),
      });
      await expectInstalledV2(storage, 'full', /signed for another release/);
    });
  });
});
