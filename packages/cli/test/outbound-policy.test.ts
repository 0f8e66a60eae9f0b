import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followRedirects } from '../src/fetch-test/follow-redirects.js';
import { lookupWithOverrides, type LookupFunction } from '../src/fetch-test/resolve-option.js';
import type { RequestSettings } from '../src/fetch-test/single-request.js';
import { isNonPublicAddress, refusedUrl } from '../src/net/outbound-policy.js';
import { policyFetch } from '../src/net/policy-fetch.js';
import { sweepClient } from '../src/sweep/polite-settings.js';
import { startLocalWeb, writeLibrary } from './support/local-web.js';
import { runCli } from './support/run-cli.js';

describe('outbound policy: which addresses are not public', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '[::1]',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    '::ffff:0:127.0.0.1',
    '64:ff9b::7f00:1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::1',
    '2002:c0a8:101::',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  ])('%s is refused', (ip) => expect(isNonPublicAddress(ip)).toBe(true));

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '100.128.0.1',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    'example.org',
  ])('%s is public', (ip) => expect(isNonPublicAddress(ip)).toBe(false));

  it('judges a URL as the WHATWG parser reads it: decimal, octal, hex and short IPv4, IPv6 forms', () => {
    for (const url of [
      'http://2130706433/',
      'http://0x7f.1/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://0x7f000001/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]:8080/',
      'http://[0:0:0:0:0:0:0:1]/',
      'http://169.254.169.254./',
      'http://%31%32%37.0.0.1/',
    ]) {
      expect(refusedUrl(new URL(url), { allowPrivate: false }), url).not.toBeNull();
      expect(refusedUrl(new URL(url), { allowPrivate: true }), url).toBeNull();
    }
    expect(refusedUrl(new URL('http://8.8.8.8/'), { allowPrivate: false })).toBeNull();
  });
});

describe('outbound policy on real requests (a loopback server)', () => {
  let server: Server;
  let port: number;
  const hits: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/to-literal')
        return void res.writeHead(302, { location: `http://127.0.0.1:${port}/secret` }).end();
      if (req.url === '/to-name')
        return void res.writeHead(302, { location: `http://inside.example:${port}/secret` }).end();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('secret');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // A resolver of our own: `inside.example` and `rebound.example` point at loopback, as a
  // hostile DNS zone would; `start.example` is the user's own --resolve mapping (trusted).
  const lookup: LookupFunction = (_hostname, options, callback) =>
    process.nextTick(() => {
      const address = '127.0.0.1';
      if (options.all === true) callback(null, [{ address, family: 4 }]);
      else callback(null, address, 4);
    });
  const settings = (allowPrivate: boolean): RequestSettings => ({
    lookup,
    policy: { allowPrivate, trustedNames: new Set(['start.example']) },
    ca: undefined,
    timeoutMs: 5000,
    maxBodyBytes: 1024,
  });

  it('refuses a literal address, a name that resolves to loopback, and redirects to either', async () => {
    hits.length = 0;
    const cases = [
      `http://127.0.0.1:${port}/secret`,
      `http://2130706433:${port}/secret`,
      `http://[::ffff:127.0.0.1]:${port}/secret`,
      `http://inside.example:${port}/secret`,
      `http://INSIDE.example.:${port}/secret`,
      `http://start.example:${port}/to-literal`,
      `http://start.example:${port}/to-name`,
    ];
    for (const url of cases) {
      const outcome = await followRedirects(url, settings(false));
      expect(outcome.failure?.kind, url).toBe('not-public');
      expect(outcome.failure?.message, url).toMatch(/refused: .*--allow-private/);
    }
    // The trusted first hops were fetched; nothing else was.
    expect(hits).toEqual(['/to-literal', '/to-name']);
  });

  it('refuses localhost names before asking any resolver', async () => {
    for (const host of ['localhost', 'localhost.', 'LocalHost..', 'anything.localhost']) {
      const outcome = await followRedirects(`http://${host}:${port}/secret`, {
        ...settings(false),
        lookup: lookupWithOverrides(new Map()),
      });
      expect(outcome.failure?.kind, host).toBe('not-public');
    }
  });

  it('fetches all of them with --allow-private', async () => {
    for (const url of [
      `http://127.0.0.1:${port}/secret`,
      `http://inside.example:${port}/secret`,
      `http://start.example:${port}/to-name`,
    ]) {
      const outcome = await followRedirects(url, settings(true));
      expect(outcome.status, url).toBe(200);
      expect(outcome.body).toBe('secret');
    }
  });

  it('checks every connection of the sweep client, cached answers included (rebinding)', async () => {
    let answer = '192.0.2.1'; // documentation range: refused too, and never routed
    const rebinding: LookupFunction = (_host, options, callback) =>
      process.nextTick(() =>
        options.all === true
          ? callback(null, [{ address: answer, family: 4 }])
          : callback(null, answer, 4),
      );
    const client = sweepClient({
      timeoutMs: 5000,
      maxBodyBytes: 1024,
      resolve: [],
      caFiles: [],
      lookup: rebinding,
      allowPrivate: false,
      perHostConnections: 2,
      perHostDelayMs: 0,
      globalRate: 0,
    });
    try {
      const first = await followRedirects(`http://rebound.example:${port}/secret`, client.settings);
      expect(first.failure?.kind).toBe('not-public');
      answer = '127.0.0.1';
      const second = await followRedirects(
        `http://rebound.example:${port}/secret`,
        client.settings,
      );
      expect(second.failure?.kind).toBe('not-public');
    } finally {
      client.close();
    }
  });

  it('update: channel files are fetched under the same policy', async () => {
    const fetchLocal = policyFetch({ allowPrivate: false }, lookup);
    await expect(fetchLocal(`http://127.0.0.1:${port}/secret`, {})).rejects.toThrow(
      /refused: 127\.0\.0\.1/,
    );
    await expect(fetchLocal(`http://inside.example:${port}/secret`, {})).rejects.toThrow(
      /refused: inside\.example resolves to 127\.0\.0\.1/,
    );
    const allowed = await policyFetch({ allowPrivate: true }, lookup)(
      `http://inside.example:${port}/secret`,
      {},
    );
    expect(await allowed.text()).toBe('secret');
  });
});

describe('httpsify sweep refuses what a library points at this machine', () => {
  it('without --allow-private nothing is fetched and the URLs say why; with it they are swept', async () => {
    const web = await startLocalWeb();
    try {
      const root = mkdtempSync(join(tmpdir(), 'httpsify-ssrf-'));
      const lib = join(root, 'lib');
      mkdirSync(lib);
      writeLibrary(lib, ['a.good.test', 'b.good.test']);
      const served = (): number => web.served.http + web.served.https;
      const before = served();
      const args = (out: string, extra: string[]): string[] => [
        'sweep',
        lib,
        '--out',
        out,
        '--per-host-delay',
        '0',
        '--rate',
        '0',
        ...extra,
      ];
      const strict = web.cliArgs.filter((a) => a !== '--allow-private');
      const refused = await runCli(args(join(root, 'strict'), strict));
      expect(served()).toBe(before);
      const lines = readFileSync(join(root, 'strict', 'results.jsonl'), 'utf8')
        .trim()
        .split('\n');
      const verdicts = lines.map((l) => (JSON.parse(l) as { verdict: string }).verdict);
      expect(verdicts.length).toBe(2);
      expect(new Set(verdicts)).toEqual(new Set(['not-public']));
      expect(refused.status).toBe(0);
      const allowed = await runCli(args(join(root, 'allowed'), web.cliArgs));
      expect(served()).toBeGreaterThan(before);
      expect(allowed.stdout).toMatch(/works/);
    } finally {
      await web.close();
    }
  }, 60_000);
});
