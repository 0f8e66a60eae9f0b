import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBundleHeader } from '@httpsify/engine';
import { parseKeyCertificate, parseRelease, verifySignature } from '@httpsify/engine/channels';
import { writeFiles } from '../../engine/test/channels-support.js';
import { runCli } from './support/run-cli.js';

let work: string;
const now = Math.floor(Date.now() / 1000);

const keyArgs = (prefix: string, version = 1) => [
  '--channel',
  join(work, `${prefix}.channel.json`),
  '--key',
  join(work, `${prefix}.signing-${version}.private.jwk`),
  '--cert',
  join(work, `${prefix}.key.${version}.json`),
];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'httpsify-publish-'));
  writeFiles(work, {
    'ok.xml':
      '<ruleset name="Example"><target host="example.com"/><rule from="^http:" to="https:"/></ruleset>',
  });
  const channel = [
    '--url-prefix',
    'https://rules.example/v1/',
    '--scope',
    '^https?://([^/]*\\.)?example\\.com[:/]',
    '--min-timestamp',
    String(now - 3600),
  ];
  expect(
    (await runCli(['keygen', '--out', join(work, 'key'), '--name', 'Key', ...channel])).status,
  ).toBe(0);
  expect(
    (await runCli(['keygen', '--out', join(work, 'other'), '--name', 'Other', ...channel])).status,
  ).toBe(0);
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('httpsify keygen', () => {
  it('writes private keys readable only by the owner, a certificate of the signing key and a format 2 definition', async () => {
    const root = JSON.parse(readFileSync(join(work, 'key.root.private.jwk'), 'utf8'));
    const rootPub = JSON.parse(readFileSync(join(work, 'key.root.public.jwk'), 'utf8'));
    for (const f of ['key.root.private.jwk', 'key.signing-1.private.jwk'])
      expect(statSync(join(work, f)).mode & 0o777).toBe(0o600);
    expect(root).toMatchObject({ kty: 'RSA', d: expect.any(String), n: rootPub.n });
    expect(rootPub).toEqual({ kty: 'RSA', n: expect.any(String), e: 'AQAB', alg: 'PS256' });
    expect(Buffer.from(rootPub.n, 'base64url').length).toBe(512);
    const def = JSON.parse(readFileSync(join(work, 'key.channel.json'), 'utf8'));
    expect(def).toMatchObject({
      format: 2,
      name: 'Key',
      rootKey: rootPub,
      scope: '^https?://([^/]*\\.)?example\\.com[:/]',
      destinations: [],
      maxAgeDays: 14,
      minKeyVersion: 1,
    });
    expect(def.minTimestamp).toBe(now - 3600);
    const cert = new Uint8Array(readFileSync(join(work, 'key.key.1.json')));
    await expect(
      verifySignature(rootPub, new Uint8Array(readFileSync(join(work, 'key.key.1.sig'))), cert),
    ).resolves.toBeUndefined();
  });

  it('needs a scope: the default no longer matches every URL', async () => {
    const run = await runCli([
      'keygen',
      '--out',
      join(work, 'noscope'),
      '--name',
      'N',
      '--url-prefix',
      'https://rules.example/',
    ]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("required option '--scope <regex>'");
  });

  it('never overwrites an existing key', async () => {
    const before = readFileSync(join(work, 'key.root.private.jwk'), 'utf8');
    const run = await runCli([
      'keygen',
      '--out',
      join(work, 'key'),
      '--name',
      'Key',
      '--url-prefix',
      'https://rules.example/v1/',
      '--scope',
      '',
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('already exists');
    expect(readFileSync(join(work, 'key.root.private.jwk'), 'utf8')).toBe(before);
  });
});

describe('httpsify publish', () => {
  it('writes the certificate, the gzipped bundle, a signed release binding the channel, then latest-timestamp', async () => {
    const out = join(work, 'channel');
    const ts = now - 60;
    const run = await runCli([
      'publish',
      '--rules',
      join(work, 'ok.xml'),
      ...keyArgs('key'),
      '--out',
      out,
      '--timestamp',
      String(ts),
    ]);
    expect(run.stderr).toContain('signed by key version 1');
    expect(run.status).toBe(0);
    expect(readdirSync(out).sort()).toEqual([
      'key.1.json',
      'key.1.sig',
      'latest-timestamp',
      `rulesets.${ts}.bundle.gz`,
      `rulesets.${ts}.release.json`,
      `rulesets.${ts}.release.sig`,
    ]);
    expect(readFileSync(join(out, 'latest-timestamp'), 'utf8')).toBe(`${ts}\n`);
    const bundle = gunzipSync(readFileSync(join(out, `rulesets.${ts}.bundle.gz`)));
    expect(readBundleHeader(bundle)).toMatchObject({ timestamp: ts, rulesetCount: 1 });
    const releaseBytes = new Uint8Array(readFileSync(join(out, `rulesets.${ts}.release.json`)));
    const release = parseRelease(releaseBytes);
    expect(release).toMatchObject({
      channel: 'Key',
      urlPrefix: 'https://rules.example/v1/',
      scope: '^https?://([^/]*\\.)?example\\.com[:/]',
      timestamp: ts,
      keyVersion: 1,
      bundle: { bytes: bundle.length },
    });
    const signing = parseKeyCertificate(new Uint8Array(readFileSync(join(out, 'key.1.json')))).key;
    const sig = new Uint8Array(readFileSync(join(out, `rulesets.${ts}.release.sig`)));
    await expect(verifySignature(signing, sig, releaseBytes)).resolves.toBeUndefined();
    const other = JSON.parse(readFileSync(join(work, 'other.root.public.jwk'), 'utf8'));
    await expect(verifySignature(other, sig, releaseBytes)).rejects.toMatchObject({
      code: 'bad-signature',
    });

    // Same or older timestamp: refused, and the published channel is untouched.
    const again = await runCli([
      'publish',
      '--rules',
      join(work, 'ok.xml'),
      ...keyArgs('key'),
      '--out',
      out,
      '--timestamp',
      String(ts),
    ]);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain('not newer than the published');
    expect(readdirSync(out)).toHaveLength(6);
  });

  it('refuses a rule whose destination the URL parser reads as another host than the scope was tested on', async () => {
    const out = join(work, 'backslash');
    const xml = join(work, 'backslash.xml');
    // A plain reading ends in example.com; browsers and Node load attacker.example.
    writeFileSync(
      xml,
      '<ruleset name="B"><target host="www.example.com"/><rule from="^http://www\\.example\\.com/" to="https://attacker.example\\.example.com/"/></ruleset>',
    );
    const run = await runCli([
      'publish',
      '--rules',
      xml,
      ...keyArgs('key'),
      '--out',
      out,
      '--timestamp',
      String(now - 30),
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('outside the channel');
    expect(existsSync(out)).toBe(false);
  });

  it('refuses rulesets that can never apply within the channel scope, naming them', async () => {
    const out = join(work, 'outside-scope');
    const dir = join(work, 'outside-scope-rules');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'Ok.xml'),
      '<ruleset name="Ok"><target host="*.example.com"/><rule from="^http:" to="https:"/></ruleset>',
    );
    writeFileSync(
      join(dir, 'Other.xml'),
      '<ruleset name="Other Site"><target host="other.org"/><rule from="^http:" to="https:"/></ruleset>',
    );
    writeFileSync(
      join(dir, 'Far.xml'),
      '<ruleset name="Far"><target host="example.*"/><rule from="^http:" to="https:"/></ruleset>',
    );
    const run = await runCli([
      'publish',
      '--rules',
      dir,
      ...keyArgs('key'),
      '--out',
      out,
      '--timestamp',
      String(now - 20),
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /1 ruleset can never apply within the channel's scope .*"Other Site" \(.*Other\.xml\)/,
    );
    expect(run.stderr).not.toMatch(/"Ok"|"Far"/);
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a key or certificate of another channel, a public key, broken rulesets and future or too old timestamps', async () => {
    const out = join(work, 'refused');
    const base = ['publish', '--rules', join(work, 'ok.xml'), '--out', out];
    const wrongKey = await runCli([
      ...base,
      '--channel',
      join(work, 'key.channel.json'),
      '--key',
      join(work, 'other.signing-1.private.jwk'),
      '--cert',
      join(work, 'key.key.1.json'),
    ]);
    expect(wrongKey.stderr).toContain('is not the key certified by');
    const wrongCert = await runCli([
      ...base,
      '--channel',
      join(work, 'key.channel.json'),
      '--key',
      join(work, 'other.signing-1.private.jwk'),
      '--cert',
      join(work, 'other.key.1.json'),
    ]);
    expect(wrongCert.stderr).toContain('not signed by the root key of channel "Key"');
    const publicKey = await runCli([
      ...base,
      ...keyArgs('key').slice(0, 2),
      '--key',
      join(work, 'key.root.public.jwk'),
      '--cert',
      join(work, 'key.key.1.json'),
    ]);
    expect(publicKey.stderr).toContain('this is a public key');
    const future = await runCli([
      ...base,
      ...keyArgs('key'),
      '--timestamp',
      String(now + 10 * 86400),
    ]);
    expect(future.stderr).toContain('in the future');
    const tooOld = await runCli([
      ...base,
      ...keyArgs('key'),
      '--timestamp',
      String(now - 10 * 86400),
    ]);
    expect(tooOld.stderr).toContain("older than the channel's minTimestamp");
    const millis = await runCli([...base, ...keyArgs('key'), '--timestamp', String(now * 1000)]);
    expect(millis.stderr).toContain('not a unix time in seconds');
    writeFiles(work, { 'broken.xml': '<ruleset name="Broken"><target host="x.example"/>' });
    const broken = await runCli([
      'publish',
      '--rules',
      join(work, 'broken.xml'),
      '--out',
      out,
      ...keyArgs('key'),
    ]);
    expect(broken.stderr).toContain('--allow-errors');
    for (const r of [wrongKey, wrongCert, publicKey, future, tooOld, millis, broken])
      expect(r.status).toBe(2);
    expect(() => readdirSync(out)).toThrow();
  });

  it('refuses a signing key older than the newest one the channel has: clients would refuse the release', async () => {
    const rotate = [
      'rotate-key',
      '--root',
      join(work, 'key.root.private.jwk'),
      '--channel',
      join(work, 'key.channel.json'),
      '--key-version',
      '2',
    ];
    expect((await runCli([...rotate, '--out', join(work, 'key')])).status).toBe(0);
    const out = join(work, 'rotated');
    const base = ['publish', '--rules', join(work, 'ok.xml'), '--out', out];
    const old = await runCli([...base, ...keyArgs('key', 1)]);
    expect(old.stderr).toContain(
      `key.key.1.json is key version 1, but ${work} (httpsify rotate-key) has key version 2`,
    );
    expect(old.status).toBe(2);
    expect(() => readdirSync(out)).toThrow();
    expect(
      (await runCli([...base, ...keyArgs('key', 2), '--timestamp', String(now - 60)])).status,
    ).toBe(0);
    // Once key 2 is in the channel directory, key 1 is refused there even from elsewhere.
    const apart = join(work, 'apart');
    mkdirSync(apart);
    for (const f of ['signing-1.private.jwk', 'key.1.json', 'key.1.sig'])
      copyFileSync(join(work, `key.${f}`), join(apart, `key.${f}`));
    const again = await runCli([
      ...base,
      ...keyArgs('key', 1).map((a) =>
        a
          .replace(join(work, 'key.s'), join(apart, 'key.s'))
          .replace(join(work, 'key.key'), join(apart, 'key.key')),
      ),
    ]);
    expect(again.stderr).toContain(
      `is key version 1, but the channel directory ${out} has key version 2`,
    );
    expect(again.status).toBe(2);
  }, 60_000);

  it('says plainly that the directory for --out does not exist, and writes nothing', async () => {
    const missing = join(work, 'missing', 'K');
    const run = await runCli([
      'keygen',
      '--out',
      missing,
      '--name',
      'K',
      '--url-prefix',
      'https://rules.example/v1/',
      '--scope',
      '^https://k\\.example/',
    ]);
    expect([run.status, run.stderr]).toEqual([
      2,
      `httpsify: --out ${missing}: the directory ${join(work, 'missing')} does not exist (create it first)\n`,
    ]);
  });
});
