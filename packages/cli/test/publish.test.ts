import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBundleHeader } from '@httpsify/engine';
import { verifySignature } from '@httpsify/engine/channels';
import { writeFiles } from '../../engine/test/channels-support.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../dist/bin.js');

function httpsify(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [bin, ...args], (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

let work: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'httpsify-publish-'));
  writeFiles(work, { 'ok.xml': '<ruleset name="Example"><target host="example.com"/><rule from="^http:" to="https:"/></ruleset>' });
  expect((await httpsify(['keygen', '--out', join(work, 'key')])).code).toBe(0);
  expect((await httpsify(['keygen', '--out', join(work, 'other')])).code).toBe(0);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('httpsify keygen', () => {
  it('writes a private key readable only by the owner and a public PS256 key', () => {
    const priv = JSON.parse(readFileSync(join(work, 'key.private.jwk'), 'utf8'));
    const pub = JSON.parse(readFileSync(join(work, 'key.public.jwk'), 'utf8'));
    expect(statSync(join(work, 'key.private.jwk')).mode & 0o777).toBe(0o600);
    expect(priv).toMatchObject({ kty: 'RSA', d: expect.any(String), n: pub.n });
    expect(pub).toEqual({ kty: 'RSA', n: expect.any(String), e: 'AQAB', alg: 'PS256' });
    expect(Buffer.from(pub.n, 'base64url').length).toBe(512);
  });

  it('never overwrites an existing key', async () => {
    const before = readFileSync(join(work, 'key.private.jwk'), 'utf8');
    const run = await httpsify(['keygen', '--out', join(work, 'key')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('already exists');
    expect(readFileSync(join(work, 'key.private.jwk'), 'utf8')).toBe(before);
  });
});

describe('httpsify publish', () => {
  it('writes latest-timestamp, the gzipped bundle carrying the timestamp, and a signature over the exact gz bytes', async () => {
    const out = join(work, 'channel');
    const ts = now - 60;
    const run = await httpsify(['publish', '--rules', join(work, 'ok.xml'), '--key', join(work, 'key.private.jwk'), '--out', out, '--timestamp', String(ts)]);
    expect(run.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['latest-timestamp', `rulesets.${ts}.bundle.gz`, `rulesets.${ts}.sig`]);
    expect(readFileSync(join(out, 'latest-timestamp'), 'utf8')).toBe(`${ts}\n`);
    const gz = new Uint8Array(readFileSync(join(out, `rulesets.${ts}.bundle.gz`)));
    expect(readBundleHeader(gunzipSync(gz))).toMatchObject({ timestamp: ts, rulesetCount: 1 });
    const pub = JSON.parse(readFileSync(join(work, 'key.public.jwk'), 'utf8'));
    const sig = new Uint8Array(readFileSync(join(out, `rulesets.${ts}.sig`)));
    await expect(verifySignature(pub, sig, gz)).resolves.toBeUndefined();
    const other = JSON.parse(readFileSync(join(work, 'other.public.jwk'), 'utf8'));
    await expect(verifySignature(other, sig, gz)).rejects.toMatchObject({ code: 'bad-signature' });

    // Same or older timestamp: refused, and the published channel is untouched.
    const again = await httpsify(['publish', '--rules', join(work, 'ok.xml'), '--key', join(work, 'key.private.jwk'), '--out', out, '--timestamp', String(ts)]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('not newer than the published');
    expect(readdirSync(out)).toHaveLength(3);
  });

  it('refuses a key that does not belong to the channel, a public key, broken rulesets and future timestamps', async () => {
    const out = join(work, 'refused');
    writeFiles(work, { 'chan.json': JSON.stringify({ name: 'C', urlPrefix: 'https://rules.example/', publicKey: JSON.parse(readFileSync(join(work, 'other.public.jwk'), 'utf8')) }) });
    const base = ['publish', '--rules', join(work, 'ok.xml'), '--out', out];
    const wrongKey = await httpsify([...base, '--key', join(work, 'key.private.jwk'), '--channel', join(work, 'chan.json')]);
    expect(wrongKey.stderr).toContain('is not the key of channel "C"');
    const publicKey = await httpsify([...base, '--key', join(work, 'key.public.jwk')]);
    expect(publicKey.stderr).toContain('this is a public key');
    const future = await httpsify([...base, '--key', join(work, 'key.private.jwk'), '--timestamp', String(now + 10 * 86400)]);
    expect(future.stderr).toContain('in the future');
    const millis = await httpsify([...base, '--key', join(work, 'key.private.jwk'), '--timestamp', String(now * 1000)]);
    expect(millis.stderr).toContain('not a unix time in seconds');
    writeFiles(work, { 'broken.xml': '<ruleset name="Broken"><target host="x.example"/>' });
    const broken = await httpsify(['publish', '--rules', join(work, 'broken.xml'), '--out', out, '--key', join(work, 'key.private.jwk')]);
    expect(broken.stderr).toContain('--allow-errors');
    for (const r of [wrongKey, publicKey, future, millis, broken]) expect(r.code).toBe(2);
    expect(() => readdirSync(out)).toThrow();
  });
});
