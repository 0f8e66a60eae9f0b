import { describe, expect, it } from 'vitest';
import type { LookupFunction } from '../src/fetch-test/resolve-option.js';
import { cachedLookup } from '../src/sweep/dns-cache.js';
import { HostGate } from '../src/sweep/host-gate.js';
import { httpSubresources } from '../src/sweep/mixed-content.js';
import { hostOfLine } from '../src/sweep/discovery.js';
import { wildcardLookup } from '../src/sweep/polite-settings.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('sweep politeness', () => {
  it('keeps at most N requests in flight per host, and spaces their starts', async () => {
    const gate = new HostGate({ perHostConnections: 2, perHostDelayMs: 40, globalRate: 0 });
    let active = 0;
    let peak = 0;
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        const release = await gate.acquire('a.example');
        starts.push(Date.now());
        peak = Math.max(peak, ++active);
        await sleep(100);
        active--;
        release();
      }),
    );
    expect(peak).toBe(2);
    const gaps = starts.slice(1).map((t, i) => t - (starts[i] as number));
    // Timers may fire a millisecond early; the spacing is the delay, not a coincidence of sleeps.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(38);
    // Another host is not held up by the first one's limit: its start waits on no timer, so it
    // wins a race against the next turn of the event loop however loaded the machine is.
    const nextTurn = new Promise<'timer'>((resolve) => setImmediate(() => resolve('timer')));
    const first = await Promise.race([
      gate.acquire('b.example').then((release) => (release(), 'gate' as const)),
      nextTurn,
    ]);
    expect(first).toBe('gate');
  });

  it('caps the global rate over all hosts', async () => {
    const gate = new HostGate({ perHostConnections: 10, perHostDelayMs: 0, globalRate: 50 });
    const t = Date.now();
    await Promise.all(
      Array.from({ length: 11 }, async (_, i) => (await gate.acquire(`h${i}.example`))()),
    );
    // 11 starts at 50/s: the last one 200 ms after the first.
    expect(Date.now() - t).toBeGreaterThanOrEqual(195);
  });

  it('asks the resolver once per name, sharing concurrent asks', async () => {
    const asked: string[] = [];
    const base: LookupFunction = (name, _opts, cb) => {
      asked.push(name);
      setTimeout(() => cb(null, [{ address: '192.0.2.1', family: 4 }]), 5);
    };
    const lookup = cachedLookup(base);
    const ask = (name: string): Promise<string> =>
      new Promise((resolve) => lookup(name, {}, (_err, address) => resolve(String(address))));
    expect(await Promise.all([ask('a.example'), ask('A.example'), ask('b.example')])).toEqual([
      '192.0.2.1',
      '192.0.2.1',
      '192.0.2.1',
    ]);
    expect(await ask('a.example')).toBe('192.0.2.1');
    expect(asked).toEqual(['a.example', 'b.example']);
  });

  it('resolves wildcard --resolve entries, the most specific first', async () => {
    const lookup = wildcardLookup(
      new Map([
        ['*.refused.test', '127.0.0.2'],
        ['*', '127.0.0.1'],
        ['exact.refused.test', '127.0.0.3'],
      ]),
    );
    const ask = (name: string): Promise<string> =>
      new Promise((resolve) => lookup(name, {}, (_err, address) => resolve(String(address))));
    expect(
      await Promise.all([ask('x.refused.test'), ask('a.b.good.test'), ask('exact.refused.test')]),
    ).toEqual(['127.0.0.2', '127.0.0.1', '127.0.0.3']);
  });
});

describe('sweep input and page checks', () => {
  it('reads host lists: names, CSV rows, URLs; reports the rest', () => {
    expect(
      [
        'example.com',
        '12,Example.ORG',
        'https://www.example.net/a?b',
        '',
        '# note',
        'not a host',
        'http://[::1]/',
        '1,localhost',
      ].map(hostOfLine),
    ).toEqual([
      'example.com',
      'example.org',
      'www.example.net',
      null,
      null,
      { error: 'not a host name or URL: "not a host"' },
      { error: 'not a public host name: "[::1]"' },
      { error: 'not a public host name: "localhost"' },
    ]);
  });

  it('finds http:// subresources, not links', () => {
    const page =
      '<a href="http://x.test/">link</a><img src="http://x.test/a.png"><link rel="stylesheet" href="http://x.test/s.css">' +
      '<link rel="alternate" href="http://x.test/feed"><img srcset="https://x.test/1.png 1x, http://x.test/2.png 2x"><script src="https://x.test/ok.js"></script>';
    expect(httpSubresources(page)).toEqual([
      'http://x.test/a.png',
      'http://x.test/s.css',
      'http://x.test/2.png',
    ]);
  });
});
