import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupFunction } from '../src/fetch-test/resolve-option.js';
import { requestOnce } from '../src/fetch-test/single-request.js';
import { sweepClient, type SweepRequestOptions } from '../src/sweep/polite-settings.js';
import { sharedHostLimits } from '../src/sweep/queue/host-leases.js';
import { startRedis, type TestRedis } from './support/redis-server.js';

const toLoopback: LookupFunction = (_host, options, callback) =>
  process.nextTick(() =>
    options.all === true
      ? callback(null, [{ address: '127.0.0.1', family: 4 }])
      : callback(null, '127.0.0.1', 4),
  );

const options = (extra: Partial<SweepRequestOptions> = {}): SweepRequestOptions => ({
  timeoutMs: 1500,
  maxBodyBytes: 64 * 1024,
  resolve: [],
  caFiles: [],
  lookup: toLoopback,
  allowPrivate: true,
  perHostConnections: 1,
  perHostDelayMs: 0,
  globalRate: 0,
  ...extra,
});

const PAGE = '<html><body>hello</body></html>';

interface DribblingServer {
  port: number;
  open: () => number;
  maxOpen: () => number;
  /** Resolves when the server has seen `n` connections close. */
  closed: (n: number) => Promise<void>;
  close: () => void;
}

/**
 * Sends a complete compressed body, then keeps the response open, a byte every 100 ms: the
 * decoder ends with its compressed stream while the response never does.
 */
async function dribblingServer(encoding: 'deflate' | 'br'): Promise<DribblingServer> {
  const body = encoding === 'deflate' ? deflateSync(PAGE) : brotliCompressSync(PAGE);
  let open = 0;
  let max = 0;
  let closes = 0;
  const waiters: (() => void)[] = [];
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': encoding });
    res.write(body);
    const drip = setInterval(() => res.write('x'), 100);
    res.on('close', () => clearInterval(drip));
  });
  server.on('connection', (socket) => {
    max = Math.max(max, ++open);
    socket.on('close', () => {
      open--;
      closes++;
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const closed = async (n: number): Promise<void> => {
    while (closes < n) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return {
    port: (server.address() as AddressInfo).port,
    open: () => open,
    maxOpen: () => max,
    closed,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Rejects if `p` has not settled after `ms`: a hang is a failure, not a slow test. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

describe('a compressed body that ends before its response does', () => {
  for (const encoding of ['deflate', 'br'] as const) {
    it(`${encoding}: the client closes the connection, and the next request to the host is answered`, async () => {
      const server = await dribblingServer(encoding);
      const client = sweepClient(options());
      try {
        const url = (path: string): URL => new URL(`http://drip.test:${server.port}/${path}`);
        const first = await within(requestOnce(url('a'), client.settings), 1000, 'first request');
        expect(first.status).toBe(200);
        expect(first.body).toBe(PAGE);
        // The server sees the client close it, long before the dribble would ever end.
        await within(server.closed(1), 1000, 'server sees the first connection close');
        // With the connection leaked, this one waited for it and was recorded as a timeout.
        const second = await within(requestOnce(url('b'), client.settings), 1000, 'second request');
        expect(second.status).toBe(200);
        expect(second.body).toBe(PAGE);
      } finally {
        client.close();
        server.close();
      }
    });
  }
});

describe('host leases shared through Redis (--queue) with an early decoder end', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('two workers with --per-host 1 never hold two connections to the host', async () => {
    const server = await dribblingServer('deflate');
    const limits = { perHostConnections: 1, perHostDelayMs: 0 };
    const leases = [0, 1].map(() =>
      sharedHostLimits(redis.client, 'early-end', limits, { leaseMs: 15_000 }),
    );
    const clients = leases.map((shared) => sweepClient(options({ shared })));
    try {
      const results = await within(
        Promise.all(
          clients.flatMap((c) =>
            ['a', 'b'].map((p) =>
              requestOnce(new URL(`http://drip.test:${server.port}/${p}`), c.settings),
            ),
          ),
        ),
        5000,
        'four requests over two workers',
      );
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      await within(server.closed(4), 1000, 'server sees every connection close');
      expect(server.maxOpen()).toBe(1);
    } finally {
      for (const c of clients) c.close();
      for (const l of leases) l.close();
      server.close();
    }
  });
});
