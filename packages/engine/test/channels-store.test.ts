import { execFileSync } from 'node:child_process';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileBundle } from '../src/bundle/write.js';
import {
  channelBinding,
  type ChannelRecord,
  generateSigningKeyPair,
} from '../src/channels/index.js';
import {
  channelStateDir,
  defaultStateDir,
  fileChannelStorage,
  loadInstalledChannels,
  readChannelRecords,
  removeChannelLeftovers,
  removeChannelState,
  withStateLock,
} from '../src/node/index.js';

const key = await generateSigningKeyPair(3072);
const bundleAt = (timestamp: number, host = 'example.com') =>
  compileBundle(
    [
      {
        name: host,
        targets: [{ host }],
        rules: [{ from: '^http:', to: 'https:' }],
        exclusions: [],
        secureCookies: [],
        tests: [],
      },
    ],
    { timestamp },
  );

function record(
  name: string,
  timestamp: number | undefined,
  extra: Partial<ChannelRecord['channel']> = {},
): ChannelRecord {
  const channel = {
    name,
    urlPrefix: 'https://rules.example/',
    rootKey: { kty: 'RSA', n: key.publicKey.n, e: key.publicKey.e },
    scope: '',
    destinations: [],
    minTimestamp: 0,
    maxAgeDays: 30,
    minKeyVersion: 1,
    replacesDefaults: false,
    ...extra,
  };
  const r: ChannelRecord = {
    channel,
    signingKey: {
      version: 1,
      key: { kty: 'RSA', n: key.publicKey.n, e: key.publicKey.e },
      verifiedFor: channelBinding(channel),
    },
    floor: {
      root: JSON.stringify([key.publicKey.n, key.publicKey.e]),
      keyVersion: 1,
      timestamp: timestamp ?? 0,
    },
    lastCheck: { at: 1_700_000_500, result: 'updated' },
    lastSuccessAt: 1_700_000_500,
  };
  if (timestamp !== undefined)
    r.installed = {
      timestamp,
      bundle: bundleAt(timestamp),
      rulesetCount: 1,
      installedAt: 1_700_000_600,
      keyVersion: 1,
      verifiedFor: channelBinding(channel),
    };
  return r;
}

let stateDir: string;
beforeEach(() => {
  stateDir = mkdtempSync(join(tmpdir(), 'httpsify-state-'));
});
afterEach(() => rmSync(stateDir, { recursive: true, force: true }));

describe('file channel storage', () => {
  it('round-trips a record and keeps exactly one bundle file per channel', async () => {
    const storage = fileChannelStorage(stateDir, 'EFF (Full)');
    expect(await storage.load()).toBeUndefined();
    const first = record('EFF (Full)', 1_700_000_000);
    await storage.save(first);
    expect(await storage.load()).toEqual(first);

    const second = record('EFF (Full)', 1_700_086_400);
    await storage.save(second);
    expect(await storage.load()).toEqual(second);
    const dir = channelStateDir(stateDir, 'EFF (Full)');
    expect(readdirSync(dir).sort()).toEqual(['bundle.1700086400.bin', 'record.json']);

    // A status-only save keeps the bundle.
    await storage.save({
      ...second,
      lastCheck: {
        at: 1_700_100_000,
        result: 'failed',
        error: { code: 'fetch-failed', message: 'HTTP 500' },
      },
    });
    expect((await storage.load())?.installed).toEqual(second.installed);
  });

  it('keeps channels whose names differ only in unsafe characters apart', async () => {
    await fileChannelStorage(stateDir, 'a/b').save(record('a/b', 1_700_000_000));
    await fileChannelStorage(stateDir, 'a:b').save(record('a:b', 1_700_000_001));
    expect(channelStateDir(stateDir, 'a/b')).not.toBe(channelStateDir(stateDir, 'a:b'));
    expect((await fileChannelStorage(stateDir, 'a:b').load())?.installed?.timestamp).toBe(
      1_700_000_001,
    );
  });

  it('reports a damaged bundle or record instead of using it', async () => {
    const storage = fileChannelStorage(stateDir, 'chan');
    await storage.save(record('chan', 1_700_000_000));
    const dir = channelStateDir(stateDir, 'chan');
    const file = join(dir, 'bundle.1700000000.bin');
    const bytes = readFileSync(file);
    bytes[bytes.length - 1] ^= 0xff;
    writeFileSync(file, bytes);
    await expect(storage.load()).rejects.toMatchObject({
      code: 'storage-failed',
      message: expect.stringContaining('damaged'),
    });

    await storage.save(record('chan', 1_700_000_000));
    const good = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8'));
    writeFileSync(
      join(dir, 'record.json'),
      JSON.stringify({ ...good, floor: { ...good.floor, timestamp: -1 } }),
    );
    await expect(storage.load()).rejects.toMatchObject({
      code: 'storage-failed',
      message: expect.stringContaining('malformed "floor"'),
    });

    writeFileSync(join(dir, 'record.json'), '{"format": 2, "chan');
    await expect(storage.load()).rejects.toMatchObject({
      code: 'storage-failed',
      message: expect.stringContaining('not valid JSON'),
    });
    const { records, problems } = await readChannelRecords(stateDir);
    expect(records).toEqual([]);
    expect(problems).toHaveLength(1);
  });

  it.runIf(process.platform !== 'win32')(
    'reads only regular files: a FIFO or a link to /dev/zero is reported, not waited on or read',
    async () => {
      const storage = fileChannelStorage(stateDir, 'chan');
      await storage.save(record('chan', 1_700_000_000));
      const dir = channelStateDir(stateDir, 'chan');
      const bundle = join(dir, 'bundle.1700000000.bin');
      rmSync(bundle);
      execFileSync('mkfifo', [bundle]);
      await expect(storage.load()).rejects.toMatchObject({
        code: 'storage-failed',
        message: expect.stringContaining('not a regular file'),
      });
      rmSync(join(dir, 'record.json'));
      symlinkSync('/dev/zero', join(dir, 'record.json'));
      await expect(storage.load()).rejects.toMatchObject({
        code: 'storage-failed',
        message: expect.stringContaining('not a regular file'),
      });
    },
  );
});

describe('state directory lock and leftovers', () => {
  it('serialises writers: the second waits for the first', async () => {
    const order: string[] = [];
    let release!: () => void;
    const first = withStateLock(stateDir, async () => {
      order.push('first in');
      await new Promise<void>((r) => (release = r));
      order.push('first out');
    });
    await expect.poll(() => order.length).toBe(1);
    const second = withStateLock(stateDir, async () => order.push('second'));
    await new Promise((r) => setTimeout(r, 100));
    expect(order).toEqual(['first in']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second']);
    expect(readdirSync(stateDir)).not.toContain('lock');
  });

  it('breaks the lock of a process that was killed, and gives up on a live one with a clear message', async () => {
    // A pid that is certainly not running: a child that has exited.
    const { spawnSync } = await import('node:child_process');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
    const { hostname } = await import('node:os');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(join(stateDir, 'lock'), JSON.stringify({ pid: dead, host: hostname(), at: 1 }));
    expect(await withStateLock(stateDir, async () => 'ran', { waitMs: 2000 })).toBe('ran');

    writeFileSync(
      join(stateDir, 'lock'),
      JSON.stringify({ pid: process.pid, host: hostname(), at: 1 }),
    );
    await expect(withStateLock(stateDir, async () => 'ran', { waitMs: 200 })).rejects.toMatchObject(
      {
        code: 'locked',
        message: expect.stringContaining(`process ${process.pid}`),
      },
    );
    expect(readFileSync(join(stateDir, 'lock'), 'utf8')).toContain(String(process.pid));
  });

  it('removes temp files and unreferenced bundles a killed run left behind, keeping the installed bundle', async () => {
    const storage = fileChannelStorage(stateDir, 'chan');
    await storage.save(record('chan', 1_700_000_000));
    const dir = channelStateDir(stateDir, 'chan');
    writeFileSync(join(dir, 'bundle.1700086400.bin.tmp-4242-deadbeef'), 'half');
    writeFileSync(join(dir, 'record.json.tmp-4242-0badf00d'), '{');
    writeFileSync(join(dir, 'bundle.1700086400.bin'), 'written, but the record was never renamed');
    const removed = await removeChannelLeftovers(stateDir);
    expect(removed.map((p) => p.slice(dir.length + 1)).sort()).toEqual([
      'bundle.1700086400.bin',
      'bundle.1700086400.bin.tmp-4242-deadbeef',
      'record.json.tmp-4242-0badf00d',
    ]);
    expect(readdirSync(dir).sort()).toEqual(['bundle.1700000000.bin', 'record.json']);
    expect((await storage.load())?.installed?.timestamp).toBe(1_700_000_000);
  });
});

describe('loadInstalledChannels', () => {
  it('is empty for a state directory that does not exist', async () => {
    expect(await loadInstalledChannels(join(stateDir, 'missing'))).toEqual({
      channels: [],
      useDefaults: true,
      problems: [],
    });
  });

  it('returns installed bundles with scope, sorted by name, skipping channels without a bundle', async () => {
    await fileChannelStorage(stateDir, 'zeta').save(
      record('zeta', 1_700_000_000, { scope: '^https?://zeta\\.example/' }),
    );
    await fileChannelStorage(stateDir, 'alpha').save(
      record('alpha', 1_700_000_001, { replacesDefaults: true }),
    );
    await fileChannelStorage(stateDir, 'empty').save(record('empty', undefined));
    const loaded = await loadInstalledChannels(stateDir);
    expect(loaded.useDefaults).toBe(false);
    expect(loaded.channels.map((c) => [c.name, c.timestamp, c.scope, c.replacesDefaults])).toEqual([
      ['alpha', 1_700_000_001, '', true],
      ['zeta', 1_700_000_000, '^https?://zeta\\.example/', false],
    ]);
    expect(loaded.channels[0]?.bundle).toEqual(bundleAt(1_700_000_001));
    // Defaults newer than the replacing channel's bundle win again.
    const newer = await loadInstalledChannels(stateDir, { defaultsTimestamp: 1_800_000_000 });
    expect(newer.useDefaults).toBe(true);
    expect(newer.channels.map((c) => c.name)).toEqual(['zeta']);
  });

  it('removes a channel', async () => {
    await fileChannelStorage(stateDir, 'gone').save(record('gone', 1_700_000_000));
    expect(await removeChannelState(stateDir, 'gone')).toBe(true);
    expect(await removeChannelState(stateDir, 'gone')).toBe(false);
    expect((await loadInstalledChannels(stateDir)).channels).toEqual([]);
  });
});

describe('defaultStateDir', () => {
  it('follows XDG_STATE_HOME when absolute, else ~/.local/state', () => {
    expect(defaultStateDir({ XDG_STATE_HOME: '/var/tmp/state' })).toBe('/var/tmp/state/httpsify');
    expect(defaultStateDir({ XDG_STATE_HOME: 'relative' })).toMatch(/\/\.local\/state\/httpsify$/);
    expect(defaultStateDir({})).toMatch(/\/\.local\/state\/httpsify$/);
  });
});
