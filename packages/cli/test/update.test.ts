import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundle } from '@httpsify/engine';
import { scopedEngineFromChannels } from '@httpsify/engine/channels';
import { loadInstalledChannels } from '@httpsify/engine/node';
import { type ChannelServer, makeCertificate, startChannelServer, type TestCertificate, writeFiles } from '../../engine/test/channels-support.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../dist/bin.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function httpsify(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [bin, ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const XML_V1 = '<ruleset name="Example"><target host="example.com"/><target host="www.example.com"/><rule from="^http:" to="https:"/></ruleset>';
const XML_V2 = '<ruleset name="Example Org"><target host="example.org"/><rule from="^http:" to="https:"/></ruleset>';

let work: string;
let cert: TestCertificate;
let server: ChannelServer;
let trust: Record<string, string>;
let channelFile: string;
let stateDir: string;
const now = Math.floor(Date.now() / 1000);
const T1 = now - 7200;
const T2 = now - 3600;

async function installedRewrites(): Promise<(string | null)[]> {
  const active = await loadInstalledChannels(stateDir);
  const engine = scopedEngineFromChannels(active, null);
  return ['http://example.com/', 'http://example.org/', 'http://www.example.com/'].map((u) => engine.rewrite(u));
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'httpsify-update-cli-'));
  cert = makeCertificate();
  trust = { NODE_EXTRA_CA_CERTS: cert.certPath };
  server = await startChannelServer(cert, join(work, 'channel'));
  stateDir = join(work, 'state');
  writeFiles(work, { 'v1.xml': XML_V1 });
  const keygen = await httpsify(['keygen', '--out', join(work, 'key'), '--name', 'Test', '--url-prefix', server.urlPrefix, '--scope', '^http://example\\.(com|org)/']);
  expect(keygen.code).toBe(0);
  channelFile = join(work, 'key.channel.json');
  const publish = await httpsify(['publish', '--rules', join(work, 'v1.xml'), '--key', join(work, 'key.private.jwk'), '--out', join(work, 'channel'), '--timestamp', String(T1), '--channel', channelFile]);
  expect(publish.stderr).toContain('published 1 ruleset as');
  expect(publish.code).toBe(0);
});

afterAll(async () => {
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('httpsify update', () => {
  it('refuses a server whose certificate is not trusted, installing nothing', async () => {
    const run = await httpsify(['update', '--channel', channelFile, '--state-dir', stateDir]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^Test: update failed \[fetch-failed\]: .*certificate/m);
    expect(await installedRewrites()).toEqual([null, null, null]);
  });

  it('installs a good update, and the installed bundle applies only within the scope', async () => {
    const run = await httpsify(['update', '--channel', channelFile, '--state-dir', stateDir], trust);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`Test: updated to ${T1} (${new Date(T1 * 1000).toISOString().replace('.000Z', 'Z')}), 1 ruleset\n`);
    expect(run.code).toBe(0);
    // example.org has no ruleset yet; www.example.com has one, but lies outside the channel's scope.
    expect(await installedRewrites()).toEqual(['https://example.com/', null, null]);
    const [installed] = (await loadInstalledChannels(stateDir)).channels;
    expect(loadBundle(installed!.bundle).rewrite('http://www.example.com/')).toBe('https://www.example.com/');
    const again = await httpsify(['update', '--channel', channelFile, '--state-dir', stateDir], trust);
    expect(again.stdout).toMatch(/^Test: up to date at /);
    expect(again.code).toBe(0);
  });

  it('keeps the installed rulesets and says why when the new signature is bad', async () => {
    writeFiles(work, { 'v2.xml': XML_V2 });
    const publish = await httpsify(['publish', '--rules', work, '--key', join(work, 'key.private.jwk'), '--out', join(work, 'channel'), '--timestamp', String(T2)]);
    expect(publish.code).toBe(0);
    const sig = readFileSync(join(work, 'channel', `rulesets.${T2}.sig`));
    sig[0] ^= 0x80;
    server.faults.set(`rulesets.${T2}.sig`, { kind: 'replace', body: sig });

    const run = await httpsify(['update', '--channel', channelFile, '--state-dir', stateDir], trust);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`Test: update failed [bad-signature]`);
    expect(run.stdout).toContain(`keeping the installed ${T1}`);
    expect(await installedRewrites()).toEqual(['https://example.com/', null, null]);

    const status = await httpsify(['update', '--status', '--state-dir', stateDir]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(`installed: ${T1}`);
    expect(status.stdout).toMatch(/last check: .* failed \[bad-signature\]/);

    // Repaired on the server: the next run installs it.
    server.faults.clear();
    const retry = await httpsify(['update', '--channel', channelFile, '--state-dir', stateDir, '--format', 'json'], trust);
    expect(retry.code).toBe(0);
    expect(JSON.parse(retry.stdout)).toEqual([{ channel: 'Test', result: 'updated', previousTimestamp: T1, installedTimestamp: T2, rulesetCount: 2 }]);
    expect(await installedRewrites()).toEqual(['https://example.com/', 'https://example.org/', null]);
  });

  it('the installed bundle is a real, loadable bundle carrying the advertised timestamp', async () => {
    const { channels } = await loadInstalledChannels(stateDir);
    expect(channels).toHaveLength(1);
    expect(loadBundle(channels[0]!.bundle).header.timestamp).toBe(T2);
  });

  it('rewrite uses installed channel rulesets inside their scope, on top of the defaults', async () => {
    const urls = ['http://example.org/', 'http://www.example.com/', 'http://www.eff.org/'];
    const run = await httpsify(['rewrite', '--state-dir', stateDir, '--format', 'jsonl', ...urls]);
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      { url: 'http://example.org/', rewritten: 'https://example.org/', ruleset: 'Example Org', channel: 'Test' },
      // www.example.com is a target of the channel, but outside its scope regex.
      { url: 'http://www.example.com/', rewritten: null, ruleset: null },
      { url: 'http://www.eff.org/', rewritten: 'https://www.eff.org/', ruleset: 'EFF' },
    ]);
    const without = await httpsify(['rewrite', '--state-dir', stateDir, '--no-channels', 'http://example.org/']);
    expect(without.stdout).toBe('http://example.org/\n');
  });

  it('explains a broken channel file and changes nothing', async () => {
    writeFiles(work, { 'bad.json': JSON.stringify({ name: 'Bad', urlPrefix: 'http://insecure.example/', publicKey: {} }) });
    const run = await httpsify(['update', '--channel', join(work, 'bad.json'), '--state-dir', stateDir], trust);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('"urlPrefix" must be an https: URL');
    expect((await loadInstalledChannels(stateDir)).channels.map((c) => c.timestamp)).toEqual([T2]);
  });

  it('removes a channel', async () => {
    const run = await httpsify(['update', '--remove', 'Test', '--state-dir', stateDir]);
    expect(run.code).toBe(0);
    expect(await installedRewrites()).toEqual([null, null, null]);
    const status = await httpsify(['update', '--state-dir', stateDir]);
    expect(status.stdout).toBe(`no channels installed in ${stateDir}\n`);
  });
});
