import { execFileSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { compileBundle } from '../src/bundle/write.js';
import {
  checkChannel,
  type ChannelDefinition,
  type ChannelRecord,
  fetchBytesWith,
  keyCertificateBytes,
  parseKeyCertificate,
  parseRelease,
  releaseBytes,
  sha256Hex,
  verifySignature,
} from '../src/channels/index.js';
import {
  fetchTrusting,
  makeCertificate,
  startChannelServer,
  writeFiles,
} from './channels-support.js';

/**
 * Interoperability with the openssl command line, as docs/update-channels.md promises: files
 * signed by `openssl dgst -sha256 -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32`
 * verify, and a signature with another salt length does not. The committed fixture was made by
 * fixtures/openssl-channel/make.sh; a change of the salt length (32 to 20, say) breaks it.
 */
const fixture = resolve(fileURLToPath(import.meta.url), '../fixtures/openssl-channel');
const read = (name: string) => new Uint8Array(readFileSync(join(fixture, name)));

describe('openssl-made fixture', () => {
  const root = JSON.parse(readFileSync(join(fixture, 'root.public.jwk'), 'utf8')) as JsonWebKey;
  const certBytes = read('key.1.json');
  const releaseFile = read('rulesets.1700000000.release.json');

  it('verifies the certificate with the root key and the release with the certified key', async () => {
    await expect(verifySignature(root, read('key.1.sig'), certBytes)).resolves.toBeUndefined();
    const cert = parseKeyCertificate(certBytes);
    expect(cert).toMatchObject({ channel: 'openssl fixture', version: 1 });
    await expect(
      verifySignature(cert.key, read('rulesets.1700000000.release.sig'), releaseFile),
    ).resolves.toBeUndefined();
    expect(parseRelease(releaseFile)).toMatchObject({
      channel: 'openssl fixture',
      timestamp: 1_700_000_000,
      keyVersion: 1,
      scope: '^https?://([^/]*\\.)?example\\.com[:/]',
    });
  });

  it('refuses the same release signed with a 20-byte salt, and any changed byte', async () => {
    const cert = parseKeyCertificate(certBytes);
    await expect(
      verifySignature(cert.key, read('rulesets.1700000000.release.salt20.sig'), releaseFile),
    ).rejects.toMatchObject({ code: 'bad-signature' });
    const changed = releaseFile.slice();
    changed[releaseFile.indexOf(0x31)] = 0x32; // one digit of the timestamp
    await expect(
      verifySignature(cert.key, read('rulesets.1700000000.release.sig'), changed),
    ).rejects.toMatchObject({ code: 'bad-signature' });
    await expect(
      verifySignature(root, read('rulesets.1700000000.release.sig'), releaseFile),
    ).rejects.toMatchObject({ code: 'bad-signature' });
  });
});

describe('a channel published with openssl keys and signatures', () => {
  const work = mkdtempSync(join(tmpdir(), 'httpsify-openssl-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const openssl = (args: string[]) =>
    execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'ignore'] });
  const pemKey = (name: string): { path: string; jwk: JsonWebKey } => {
    const path = join(work, `${name}.pem`);
    openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:3072', '-out', path]);
    const k = createPublicKey(readFileSync(path)).export({ format: 'jwk' });
    return { path, jwk: { kty: 'RSA', n: k.n, e: k.e, alg: 'PS256' } };
  };
  const sign = (key: string, bytes: Uint8Array): Uint8Array => {
    const file = join(work, 'to-sign');
    writeFileSync(file, bytes);
    return new Uint8Array(
      openssl([
        'dgst',
        '-sha256',
        '-sigopt',
        'rsa_padding_mode:pss',
        '-sigopt',
        'rsa_pss_saltlen:32',
        '-sign',
        key,
        file,
      ]),
    );
  };

  it('installs over HTTPS', async () => {
    const cert = makeCertificate();
    const dir = join(work, 'channel');
    const server = await startChannelServer(cert, dir);
    try {
      const [root, online] = [pemKey('root'), pemKey('online')];
      const def: ChannelDefinition = {
        name: 'openssl',
        urlPrefix: server.urlPrefix,
        rootKey: root.jwk,
        scope: '^https?://([^/]*\\.)?example\\.com[:/]',
        destinations: [],
        minTimestamp: 1_700_000_000,
        maxAgeDays: 7,
        minKeyVersion: 1,
        replacesDefaults: false,
      };
      const ts = 1_700_000_000;
      const bundle = compileBundle(
        [
          {
            name: 'Example',
            targets: [{ host: 'example.com' }],
            rules: [{ from: '^http:', to: 'https:' }],
            exclusions: [],
            secureCookies: [],
            tests: [],
          },
        ],
        { timestamp: ts },
      );
      const certBytes = keyCertificateBytes({
        channel: def.name,
        urlPrefix: def.urlPrefix,
        version: 1,
        key: online.jwk,
      });
      const release = releaseBytes({
        channel: def.name,
        urlPrefix: def.urlPrefix,
        scope: def.scope,
        destinations: [],
        timestamp: ts,
        keyVersion: 1,
        bundle: {
          file: `rulesets.${ts}.bundle.gz`,
          bytes: bundle.length,
          sha256: await sha256Hex(bundle),
        },
      });
      (await import('node:fs')).mkdirSync(dir);
      writeFiles(dir, {
        'key.1.json': certBytes,
        'key.1.sig': sign(root.path, certBytes),
        [`rulesets.${ts}.bundle.gz`]: new Uint8Array(gzipSync(bundle)),
        [`rulesets.${ts}.release.json`]: release,
        [`rulesets.${ts}.release.sig`]: sign(online.path, release),
        'latest-timestamp': `${ts}\n`,
      });
      let saved: ChannelRecord | undefined;
      const report = await checkChannel(
        def,
        { load: async () => undefined, save: async (r) => void (saved = r) },
        { fetchBytes: fetchBytesWith(fetchTrusting(cert.cert)), now: () => ts + 60 },
      );
      expect(report).toMatchObject({ result: 'updated', installedTimestamp: ts, rulesetCount: 1 });
      expect(saved?.installed?.bundle).toEqual(bundle);
    } finally {
      await server.close();
    }
  });
});
