import { mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupFunction } from '../src/fetch-test/resolve-option.js';
import { requestOnce } from '../src/fetch-test/single-request.js';
import { checkJob } from '../src/sweep/check-job.js';
import { sweepClient, type SweepRequestOptions } from '../src/sweep/polite-settings.js';
import { runSweep } from '../src/sweep/run-sweep.js';
import { startLocalWeb, type LocalWeb } from './support/local-web.js';

const toLoopback: LookupFunction = (_host, options, callback) =>
  process.nextTick(() =>
    options.all === true
      ? callback(null, [{ address: '127.0.0.1', family: 4 }])
      : callback(null, '127.0.0.1', 4),
  );

const requestOptions = (extra: Partial<SweepRequestOptions>): SweepRequestOptions => ({
  timeoutMs: 5000,
  maxBodyBytes: 64 * 1024,
  resolve: [],
  caFiles: [],
  lookup: toLoopback,
  allowPrivate: true,
  perHostConnections: 2,
  perHostDelayMs: 0,
  globalRate: 0,
  ...extra,
});

/** A raw HTTP/1.1 server: each connection answers its first request, then resets on the next. */
function resettingServer(): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket: Socket) => {
    connections++;
    let requests = 0;
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      while (buffered.includes('\r\n\r\n')) {
        buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4);
        if (++requests > 1) return void socket.resetAndDestroy();
        const body = '<html><body>hello there</body></html>';
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n${body}`,
        );
      }
    });
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        port: (server.address() as AddressInfo).port,
        connections: () => connections,
      }),
    ),
  );
}

describe('honest verdicts under stress', () => {
  it('retries once on a reset of a reused keep-alive connection', async () => {
    const { server, port, connections } = await resettingServer();
    const client = sweepClient(requestOptions({}));
    try {
      const first = await requestOnce(new URL(`http://reset.test:${port}/a`), client.settings);
      expect(first.status).toBe(200);
      // The second request goes out on the kept-alive connection, which the server resets.
      const second = await requestOnce(new URL(`http://reset.test:${port}/b`), client.settings);
      expect(second.status).toBe(200);
      expect(connections()).toBe(2);
    } finally {
      client.close();
      server.close();
    }
  });

  it('after such a reset, tries a new connection rather than another stale one', async () => {
    const { server, port, connections } = await resettingServer();
    const client = sweepClient(requestOptions({}));
    try {
      // Two connections kept alive, both of which the server will reset on their next request.
      const two = await Promise.all(
        ['a', 'b'].map((p) =>
          requestOnce(new URL(`http://reset.test:${port}/${p}`), client.settings),
        ),
      );
      expect(two.map((r) => r.status)).toEqual([200, 200]);
      expect(connections()).toBe(2);
      const third = await requestOnce(new URL(`http://reset.test:${port}/c`), client.settings);
      expect(third.status).toBe(200);
      expect(connections()).toBe(3);
    } finally {
      client.close();
      server.close();
    }
  });

  it('a name that never resolves is "host does not resolve" at the deadline, not a timeout', async () => {
    const never: LookupFunction = () => undefined;
    const client = sweepClient(requestOptions({ lookup: never, timeoutMs: 300 }));
    try {
      const job = {
        key: 'k',
        kind: 'ruleset' as const,
        ruleset: 'R',
        file: '',
        url: 'http://never.test/',
        rewritten: 'https://never.test/',
      };
      const result = await checkJob(job, client.settings, (u) => u);
      expect(result.verdict).toBe('host-gone');
      expect(result.detail).toMatch(/cannot resolve host/);
    } finally {
      client.close();
    }
  });

  it('a DNS failure slower than the deadline is still "host does not resolve"', async () => {
    const slowFailure: LookupFunction = (host, _options, callback) => {
      setTimeout(
        () =>
          callback(
            Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }),
            '',
          ),
        1500,
      );
    };
    const client = sweepClient(requestOptions({ lookup: slowFailure, timeoutMs: 300 }));
    try {
      const job = {
        key: 'k',
        kind: 'ruleset' as const,
        ruleset: 'R',
        file: '',
        url: 'http://slowgone.test/',
        rewritten: 'https://slowgone.test/',
      };
      const result = await checkJob(job, client.settings, (u) => u);
      expect(result.verdict).toBe('host-gone');
    } finally {
      client.close();
    }
  });

  it('the deadline starts when the request is sent, not while it waits for a connection of our own', async () => {
    // Each answer takes 500 ms; one connection at a time; six requests at once. The last waits
    // 2.5 s in our own pool, far beyond the 2 s deadline, yet its server answers in 0.5 s.
    const server = createServer((socket: Socket) => {
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1');
        while (buffered.includes('\r\n\r\n')) {
          buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4);
          setTimeout(
            () =>
              socket.write(
                'HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok',
              ),
            500,
          );
        }
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const client = sweepClient(requestOptions({ perHostConnections: 1, timeoutMs: 2000 }));
    // No politeness gate: the requests queue in the connection pool itself.
    const settings = { ...client.settings, gate: undefined };
    try {
      const all = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          requestOnce(new URL(`http://queue.test:${port}/${i}`), settings),
        ),
      );
      expect(
        all.map((r) => (r.status === 'fulfilled' ? r.value.status : (r.reason as Error).message)),
      ).toEqual([200, 200, 200, 200, 200, 200]);
    } finally {
      client.close();
      server.close();
    }
  }, 30_000);
});

describe('politeness in one process, counted at the server', () => {
  let web: LocalWeb;
  beforeAll(async () => {
    web = await startLocalWeb();
  });
  afterAll(() => web.close());

  it('--per-host 2 means 2 connections to a host name, HTTP and HTTPS together', async () => {
    const root = mkdtempSync(join(tmpdir(), 'httpsify-one-pool-'));
    const lib = join(root, 'lib');
    mkdirSync(lib);
    const hosts = ['s0.good.test', 's1.good.test'];
    const { writeFileSync } = await import('node:fs');
    for (const host of hosts) {
      const tests = Array.from(
        { length: 12 },
        (_, i) => `\t<test url="http://${host}/p${i}" />\n`,
      ).join('');
      writeFileSync(
        join(lib, `${host}.xml`),
        `<ruleset name="${host}">\n\t<target host="${host}" />\n${tests}\t<rule from="^http:" to="https:" />\n</ruleset>\n`,
      );
    }
    await runSweep({
      paths: [lib],
      outDir: join(root, 'out'),
      concurrency: 16,
      request: {
        ...requestOptions({
          lookup: web.lookup,
          connectPorts: web.connectPorts,
          caFiles: [web.caPath],
          perHostDelayMs: 20,
        }),
      },
    });
    for (const host of hosts) {
      expect(web.connections.opened.get(host), host).toBeGreaterThan(0);
      expect(web.connections.peakOpen.get(host), host).toBeLessThanOrEqual(2);
    }
  }, 60_000);
});
