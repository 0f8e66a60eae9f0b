import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundle } from '@httpsify/engine';
import { scopedEngineFromChannels } from '@httpsify/engine/channels';
import { channelStateDir, loadInstalledChannels } from '@httpsify/engine/node';
import {
  type ChannelServer,
  makeCertificate,
  startChannelServer,
  type TestCertificate,
  writeFiles,
} from '../../engine/test/channels-support.js';
import { runCli, type CliRun } from './support/run-cli.js';

/** The test publisher listens on loopback, which `update` refuses without --allow-private. */
const httpsify = (args: string[], env: Record<string, string> = {}): Promise<CliRun> =>
  runCli(args[0] === 'update' && args.includes('--channel') ? [...args, '--allow-private'] : args, {
    env,
  });

const XML_V1 =
  '<ruleset name="Example"><target host="example.com"/><target host="www.example.com"/><rule from="^http:" to="https:"/></ruleset>';
const XML_V2 =
  '<ruleset name="Example Org"><target host="example.org"/><rule from="^http:" to="https:"/></ruleset>';
const XML_EVIL =
  '<ruleset name="Evil"><target host="example.org"/><rule from="^http://example\\.org/" to="https://attacker.example/"/></ruleset>';

let work: string;
let cert: TestCertificate;
let server: ChannelServer;
let trust: Record<string, string>;
let channelFile: string;
let stateDir: string;
const channelDir = () => join(work, 'channel');
const now = Math.floor(Date.now() / 1000);
const T1 = now - 7200;
const T2 = now - 3600;
const T3 = now - 1800;
const T4 = now - 900;

async function installedRewrites(): Promise<(string | null)[]> {
  const active = await loadInstalledChannels(stateDir);
  const engine = scopedEngineFromChannels(active, null);
  return ['http://example.com/', 'http://example.org/', 'http://www.example.com/'].map((u) =>
    engine.rewrite(u),
  );
}

const publishArgs = (rules: string, ts: number, version = 1, prefix = join(work, 'key')) => [
  'publish',
  '--rules',
  rules,
  '--channel',
  channelFile,
  '--key',
  `${prefix}.signing-${version}.private.jwk`,
  '--cert',
  `${prefix}.key.${version}.json`,
  '--out',
  channelDir(),
  '--timestamp',
  String(ts),
];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'httpsify-update-cli-'));
  cert = makeCertificate();
  trust = { NODE_EXTRA_CA_CERTS: cert.certPath };
  mkdirSync(join(work, 'channel'));
  server = await startChannelServer(cert, channelDir());
  stateDir = join(work, 'state');
  writeFiles(work, { 'v1.xml': XML_V1 });
  const keygen = await httpsify([
    'keygen',
    '--out',
    join(work, 'key'),
    '--name',
    'Test',
    '--url-prefix',
    server.urlPrefix,
    '--scope',
    '^http://example\\.(com|org)/',
    '--min-timestamp',
    String(T1 - 60),
    '--max-age-days',
    '1',
  ]);
  expect(keygen.stderr).toContain('Keep it offline');
  expect(keygen.status).toBe(0);
  channelFile = join(work, 'key.channel.json');
  const publish = await httpsify(publishArgs(join(work, 'v1.xml'), T1));
  expect(publish.stderr).toContain('published 1 ruleset as');
  expect(publish.status).toBe(0);
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('httpsify update', () => {
  it('refuses a server whose certificate is not trusted, installing nothing', async () => {
    const run = await httpsify(['update', '--channel', channelFile, '--state-dir', stateDir]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^Test: update failed \[fetch-failed\]: .*certificate/m);
    expect(await installedRewrites()).toEqual([null, null, null]);
  });

  it('refuses a redirect to http:// (with the real fetch)', async () => {
    const { port } = new URL(server.urlPrefix);
    server.faults.set('latest-timestamp', {
      kind: 'redirect',
      status: 302,
      location: `http://127.0.0.1:${port}/channel/latest-timestamp`,
    });
    const run = await httpsify(
      ['update', '--channel', channelFile, '--state-dir', stateDir],
      trust,
    );
    expect(run.stdout).toContain('update failed [insecure-redirect]');
    expect(run.status).toBe(1);
    server.faults.clear();
  });

  it('installs a good update served with Content-Encoding: gzip; it applies only within the scope', async () => {
    server.faults.set(`rulesets.${T1}.bundle.gz`, { kind: 'encoding', encoding: 'gzip' });
    const run = await httpsify(
      ['update', '--channel', channelFile, '--state-dir', stateDir],
      trust,
    );
    server.faults.clear();
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      `Test: updated to ${T1} (${new Date(T1 * 1000).toISOString().replace('.000Z', 'Z')}), 1 ruleset\n`,
    );
    expect(run.status).toBe(0);
    // example.org has no ruleset yet; www.example.com has one, but lies outside the channel's scope.
    expect(await installedRewrites()).toEqual(['https://example.com/', null, null]);
    const [installed] = (await loadInstalledChannels(stateDir)).channels;
    expect(loadBundle(installed!.bundle).rewrite('http://www.example.com/')).toBe(
      'https://www.example.com/',
    );
    const again = await httpsify(
      ['update', '--channel', channelFile, '--state-dir', stateDir],
      trust,
    );
    expect(again.stdout).toMatch(/^Test: up to date at /);
    expect(again.status).toBe(0);
  });

  it('keeps the installed rulesets and says why when the new signature is bad', async () => {
    writeFiles(work, { 'v2.xml': XML_V2 });
    const publish = await httpsify(publishArgs(work, T2));
    expect(publish.status).toBe(0);
    // A delta from the release clients have, listed in a signed index.
    expect(publish.stderr).toMatch(
      new RegExp(
        `1 delta \\(rulesets\\.${T1}-${T2}\\.delta\\.gz \\d+ bytes\\) listed in rulesets\\.${T2}\\.deltas\\.json`,
      ),
    );
    const sig = readFileSync(join(channelDir(), `rulesets.${T2}.release.sig`));
    sig[0] ^= 0x80;
    server.faults.set(`rulesets.${T2}.release.sig`, { kind: 'replace', body: sig });

    const run = await httpsify(
      ['update', '--channel', channelFile, '--state-dir', stateDir],
      trust,
    );
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`Test: update failed [bad-signature]`);
    expect(run.stdout).toContain(`keeping the installed ${T1}`);
    expect(await installedRewrites()).toEqual(['https://example.com/', null, null]);

    const status = await httpsify(['update', '--status', '--state-dir', stateDir]);
    expect(status.status).toBe(1);
    expect(status.stdout).toContain(`installed: ${T1}`);
    expect(status.stdout).toMatch(/last check: .* failed \[bad-signature\]/);

    // Repaired on the server: the next run installs it.
    server.faults.clear();
    const retry = await httpsify(
      ['update', '--channel', channelFile, '--state-dir', stateDir, '--format', 'json'],
      trust,
    );
    expect(retry.status).toBe(0);
    const bundleGz = readFileSync(join(channelDir(), `rulesets.${T2}.bundle.gz`)).byteLength;
    const deltaGz = readFileSync(join(channelDir(), `rulesets.${T1}-${T2}.delta.gz`)).byteLength;
    expect(JSON.parse(retry.stdout)).toEqual([
      {
        channel: 'Test',
        result: 'updated',
        previousTimestamp: T1,
        installedTimestamp: T2,
        rulesetCount: 2,
        download: { kind: 'delta', bytes: deltaGz },
      },
    ]);
    expect(deltaGz).toBeLessThan(bundleGz);
    expect(await installedRewrites()).toEqual([
      'https://example.com/',
      'https://example.org/',
      null,
    ]);
  });

  it('shows a channel older than its maximum age as stale, in text and JSON', async () => {
    // T2 is an hour old, inside the maximum age of one day. Then the record is edited to say the
    // installed release is three days old, as it would be after three days of a frozen mirror.
    const fresh = JSON.parse(
      (await httpsify(['update', '--status', '--state-dir', stateDir, '--format', 'json'])).stdout,
    );
    expect(fresh.channels[0]).toMatchObject({
      stale: false,
      notApplied: null,
      installed: { timestamp: T2, keyVersion: 1 },
    });
    const faked = JSON.parse(
      readFileSync(join(channelStateDir(stateDir, 'Test'), 'record.json'), 'utf8'),
    );
    const old = structuredClone(faked);
    faked.installed.timestamp = now - 3 * 86_400;
    // A mirror frozen since then serves a release the definition still accepts (an install
    // older than its minTimestamp is not applied at all).
    faked.channel.minTimestamp = now - 10 * 86_400;
    writeFileSync(join(channelStateDir(stateDir, 'Test'), 'record.json'), JSON.stringify(faked));
    const text = await httpsify(['update', '--status', '--state-dir', stateDir]);
    expect(text.stdout).toMatch(
      /STALE: the newest release is 3 days old, older than the channel's maximum of 1 days .*its rules still apply/,
    );
    const json = JSON.parse(
      (await httpsify(['update', '--status', '--state-dir', stateDir, '--format', 'json'])).stdout,
    );
    expect(json.channels[0]).toMatchObject({ stale: true, ageSeconds: expect.any(Number) });
    writeFileSync(join(channelStateDir(stateDir, 'Test'), 'record.json'), JSON.stringify(old));
  });

  it('refuses a release whose rules send URLs outside the scope (publish refuses it too)', async () => {
    writeFiles(work, { 'evil.xml': XML_EVIL });
    const refused = await httpsify(publishArgs(join(work, 'evil.xml'), T3));
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain("outside the channel's scope");
  });

  it('rotation: a key certified as version 2 takes over; a release under key 1 is then refused', async () => {
    const rotate = await httpsify([
      'rotate-key',
      '--root',
      join(work, 'key.root.private.jwk'),
      '--channel',
      channelFile,
      '--key-version',
      '2',
      '--out',
      join(work, 'key'),
    ]);
    expect(rotate.status).toBe(0);
    expect((await httpsify(publishArgs(join(work, 'v2.xml'), T3, 2))).status).toBe(0);
    const run = await httpsify(
      ['update', '--channel', channelFile, '--state-dir', stateDir],
      trust,
    );
    expect(run.stdout).toContain(`updated to ${T3}`);
    // publish refuses a key older than one the channel has published: no client would take it.
    const old = await httpsify(publishArgs(join(work, 'v1.xml'), T4, 1));
    expect(old.status).toBe(2);
    expect(old.stderr).toContain(
      `is key version 1, but the channel directory ${channelDir()} has key version 2`,
    );
    // The old key (stolen, say) signs a newer release, made apart and copied in: clients that
    // know key 2 refuse it.
    const thief = join(work, 'thief');
    mkdirSync(thief);
    for (const f of ['key.signing-1.private.jwk', 'key.key.1.json', 'key.key.1.sig'])
      copyFileSync(join(work, f), join(thief, f));
    const stolenArgs = publishArgs(join(work, 'v1.xml'), T4, 1, join(thief, 'key'));
    stolenArgs[stolenArgs.indexOf('--out') + 1] = join(thief, 'channel');
    expect((await httpsify(stolenArgs)).status).toBe(0);
    cpSync(join(thief, 'channel'), channelDir(), { recursive: true });
    const stolen = await httpsify(
      ['update', '--channel', channelFile, '--state-dir', stateDir],
      trust,
    );
    expect(stolen.stdout).toContain('update failed [key-revoked]');
    expect(stolen.stdout).toContain(`keeping the installed ${T3}`);
    expect(await installedRewrites()).toEqual([null, 'https://example.org/', null]);
  }, 60_000);

  it('a definition with another channel name refuses these files (mix-and-match)', async () => {
    const other = { ...JSON.parse(readFileSync(channelFile, 'utf8')), name: 'Other' };
    writeFiles(work, { 'other.json': JSON.stringify(other) });
    const run = await httpsify(
      ['update', '--channel', join(work, 'other.json'), '--state-dir', stateDir],
      trust,
    );
    expect(run.stdout).toMatch(
      /^Other: update failed \[wrong-channel\]: signed channel name .*"Test"/m,
    );
  });

  it('the installed bundle is a real, loadable bundle carrying the advertised timestamp', async () => {
    const { channels } = await loadInstalledChannels(stateDir);
    expect(channels).toHaveLength(1);
    expect(loadBundle(channels[0]!.bundle).header.timestamp).toBe(T3);
  });

  it('rewrite uses installed channel rulesets inside their scope, on top of the defaults', async () => {
    const urls = ['http://example.org/', 'http://www.example.com/', 'http://www.eff.org/'];
    const run = await httpsify(['rewrite', '--state-dir', stateDir, '--format', 'jsonl', ...urls]);
    expect(run.status).toBe(0);
    expect(
      run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      {
        url: 'http://example.org/',
        rewritten: 'https://example.org/',
        ruleset: 'Example Org',
        channel: 'Test',
      },
      // www.example.com is a target of the channel, but outside its scope regex.
      { url: 'http://www.example.com/', rewritten: null, ruleset: null },
      { url: 'http://www.eff.org/', rewritten: 'https://www.eff.org/', ruleset: 'EFF' },
    ]);
    const without = await httpsify([
      'rewrite',
      '--state-dir',
      stateDir,
      '--no-channels',
      'http://example.org/',
    ]);
    expect(without.stdout).toBe('http://example.org/\n');
  });

  it('explains a broken or format 1 channel file and changes nothing', async () => {
    writeFiles(work, {
      'bad.json': JSON.stringify({
        format: 2,
        name: 'Bad',
        urlPrefix: 'http://insecure.example/',
        rootKey: {},
      }),
    });
    const run = await httpsify(
      ['update', '--channel', join(work, 'bad.json'), '--state-dir', stateDir],
      trust,
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('"urlPrefix" must be an https: URL');
    writeFiles(work, {
      'old.json': JSON.stringify({ name: 'Old', urlPrefix: 'https://x.example/', publicKey: {} }),
    });
    const old = await httpsify(
      ['update', '--channel', join(work, 'old.json'), '--state-dir', stateDir],
      trust,
    );
    expect(old.stderr).toContain('format 1 channel definition');
    // A root key with exponent 1 (anyone could forge its signatures) is refused when read.
    const weak = { ...JSON.parse(readFileSync(channelFile, 'utf8')), name: 'Weak' };
    weak.rootKey = { ...weak.rootKey, e: 'AQ' };
    writeFiles(work, { 'weak.json': JSON.stringify(weak) });
    const refused = await httpsify(
      ['update', '--channel', join(work, 'weak.json'), '--state-dir', stateDir],
      trust,
    );
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('"rootKey": public key exponent is 1; channels require 65537');
    expect((await loadInstalledChannels(stateDir)).channels.map((c) => c.timestamp)).toEqual([T3]);
  });

  it('state lock: a lock left by a killed run is broken, its leftovers removed; concurrent runs take turns', async () => {
    const dir = channelStateDir(stateDir, 'Test');
    const dead = await new Promise<number>((done) => {
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
      child.on('spawn', () => {
        const pid = child.pid as number;
        child.kill('SIGKILL');
        child.on('exit', () => done(pid));
      });
    });
    writeFileSync(join(stateDir, 'lock'), JSON.stringify({ pid: dead, host: hostname(), at: 1 }));
    writeFileSync(join(dir, `record.json.tmp-${dead}-00ff00ff`), '{"half":');
    writeFileSync(join(dir, `bundle.${T4}.bin`), 'written by the killed run, never referenced');
    const runs = await Promise.all(
      [1, 2, 3].map(() =>
        httpsify(['update', '--channel', channelFile, '--state-dir', stateDir], trust),
      ),
    );
    for (const run of runs) expect(run.stdout).toContain('update failed [key-revoked]');
    expect(readdirSync(dir).sort()).toEqual([`bundle.${T3}.bin`, 'record.json']);
    expect(existsSync(join(stateDir, 'lock'))).toBe(false);
    expect((await loadInstalledChannels(stateDir)).channels.map((c) => c.timestamp)).toEqual([T3]);
  });

  it('concurrent runs that find a new release: one installs it, the others find it current, nothing is lost', async () => {
    const T5 = now - 300;
    expect((await httpsify(publishArgs(join(work, 'v1.xml'), T5, 2))).status).toBe(0);
    const runs = await Promise.all(
      [1, 2, 3].map(() =>
        httpsify(
          ['update', '--channel', channelFile, '--state-dir', stateDir, '--format', 'json'],
          trust,
        ),
      ),
    );
    const results = runs
      .map((r) => (JSON.parse(r.stdout) as { result: string }[])[0]?.result)
      .sort();
    expect(results).toEqual(['current', 'current', 'updated']);
    expect(readdirSync(channelStateDir(stateDir, 'Test')).sort()).toEqual([
      `bundle.${T5}.bin`,
      'record.json',
    ]);
    expect((await loadInstalledChannels(stateDir)).channels.map((c) => c.timestamp)).toEqual([T5]);
  });

  it('a live lock makes update wait, then fail with who holds it', async () => {
    writeFileSync(
      join(stateDir, 'lock'),
      JSON.stringify({ pid: process.pid, host: hostname(), at: 1 }),
    );
    try {
      const run = await httpsify(['update', '--remove', 'Test', '--state-dir', stateDir], {
        HTTPSIFY_LOCK_WAIT_MS: '300',
      });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(`is in use by process ${process.pid}`);
      expect((await loadInstalledChannels(stateDir)).channels).toHaveLength(1);
    } finally {
      rmSync(join(stateDir, 'lock'));
    }
  });

  it('raising minKeyVersion in the definition revokes the installed bundle at once; status says why', async () => {
    const revoking = { ...JSON.parse(readFileSync(channelFile, 'utf8')), minKeyVersion: 3 };
    writeFiles(work, { 'revoking.json': JSON.stringify(revoking) });
    const run = await httpsify(
      ['update', '--channel', join(work, 'revoking.json'), '--state-dir', stateDir],
      trust,
    );
    expect(run.stdout).toContain('update failed [key-revoked]');
    expect(run.stdout).toContain('nothing installed');
    const status = await httpsify(['update', '--status', '--state-dir', stateDir]);
    expect(status.stdout).toMatch(
      /not applied: it is signed by key version 2, which is revoked \(version 3 or newer is required\)/,
    );
    const json = JSON.parse(
      (await httpsify(['update', '--status', '--state-dir', stateDir, '--format', 'json'])).stdout,
    );
    expect(
      json.channels.find((c: { channel: { name: string } }) => c.channel.name === 'Test'),
    ).toMatchObject({
      notApplied: expect.stringContaining('revoked'),
      stale: false,
    });
    expect(await installedRewrites()).toEqual([null, null, null]);
  });

  it('removes a channel', async () => {
    const run = await httpsify([
      'update',
      '--remove',
      'Test',
      '--remove',
      'Other',
      '--state-dir',
      stateDir,
    ]);
    expect(run.status).toBe(0);
    expect(await installedRewrites()).toEqual([null, null, null]);
    const status = await httpsify(['update', '--state-dir', stateDir]);
    expect(status.stdout).toBe(`no channels installed in ${stateDir}\n`);
  });
});
