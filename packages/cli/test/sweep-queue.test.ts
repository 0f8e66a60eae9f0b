import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepKeys } from '../src/sweep/queue/redis-keys.js';
import type { SweepResult } from '../src/sweep/verdicts.js';
import { startLocalWeb, writeLibrary, type LocalWeb } from './support/local-web.js';
import { startRedis, type TestRedis } from './support/redis-server.js';
import { workTimeout } from '../../engine/test/support/work-timeout.js';
import { killRunningClis, startCli } from './support/run-cli.js';

const QUEUE = 'qtest';

let web: LocalWeb;
let redis: TestRedis;
let root: string;

beforeAll(async () => {
  [web, redis] = await Promise.all([startLocalWeb(), startRedis()]);
  root = mkdtempSync(join(tmpdir(), 'httpsify-sweep-queue-'));
});
afterAll(async () => {
  await killRunningClis();
  await Promise.all([web.close(), redis.stop()]);
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const lines = (file: string): string[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.endsWith('}'))
    : [];

async function until(
  what: string,
  test: () => boolean | Promise<boolean>,
  ms = 60_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('httpsify sweep --queue (BullMQ on Redis)', () => {
  it('survives a worker and the coordinator killed with SIGKILL: one result per URL, none lost', async () => {
    const lib = join(root, 'lib');
    mkdirSync(lib);
    // Slow hosts keep every worker mid-job at any moment (each takes two 3 s timeouts).
    const hosts = [
      ...Array.from({ length: 80 }, (_, i) => `q${i}.good.test`),
      ...Array.from({ length: 8 }, (_, i) => `q${i}.slow.test`),
      'q.expired.test',
      'q.differs.test',
    ];
    writeLibrary(lib, hosts);
    const out = join(root, 'out');
    const common = [
      lib,
      '--queue',
      redis.url,
      '--queue-name',
      QUEUE,
      '--timeout',
      '3000',
      '--per-host-delay',
      '0',
      '--rate',
      '0',
      ...web.cliArgs,
    ];
    const coordinatorArgs = ['sweep', ...common, '--out', out];
    const workerArgs = ['sweep', ...common, '--worker', '--lock-ms', '2000', '--concurrency', '4'];
    const keys = sweepKeys(QUEUE);
    const stored = async (): Promise<Record<string, string>> => redis.client.hgetall(keys.workers);

    let coordinator = startCli(coordinatorArgs);
    const first = startCli(workerArgs);
    await until(
      'the first worker to store results',
      async () => Number(Object.values(await stored())[0] ?? 0) >= 5,
    );
    // Kill it while it holds jobs: remember which, to see them delivered again.
    const active = await redis.client.lrange(`bull:${QUEUE}:active`, 0, -1);
    const held = (
      await Promise.all(active.map((id) => redis.client.hget(`bull:${QUEUE}:${id}`, 'data')))
    )
      .filter((d): d is string => d !== null)
      .map((d) => (JSON.parse(d) as { key: string }).key);
    first.proc.kill('SIGKILL');
    expect(held.length).toBeGreaterThan(0);
    const workers = [startCli(workerArgs), startCli(workerArgs), startCli(workerArgs)];

    await until(
      'half the results journaled',
      () => lines(join(out, 'results.jsonl')).length >= hosts.length / 2,
    );
    coordinator.proc.kill('SIGKILL');
    const atKill = lines(join(out, 'results.jsonl')).length;
    // A hang is killed (status null) and fails below with every process's output. The slowest
    // URL takes two 3 s timeouts; a second a URL is far more than 12 worker slots need.
    coordinator = startCli(coordinatorArgs, { timeout: workTimeout(hosts.length, 1_000) });
    const code = (await coordinator.exited).status;
    const log = [coordinator, ...workers].map((c) => c.output()).join('\n---\n');
    expect(code, log).toBe(1); // done, with failing rulesets
    for (const w of workers) w.proc.kill('SIGTERM');

    const results = lines(join(out, 'results.jsonl')).map((l) => JSON.parse(l) as SweepResult);
    const urls = results.map((r) => r.url);
    expect(urls.length).toBe(hosts.length);
    expect(new Set(urls)).toEqual(new Set(hosts.map((h) => `http://${h}/`)));
    expect(atKill).toBeLessThan(hosts.length);
    for (const key of held) expect(results.some((r) => r.key === key)).toBe(true);
    // Progress adds up: the results each worker stored first sum to one per URL.
    const perWorker = Object.values(await stored()).map(Number);
    expect(perWorker.length).toBe(4);
    expect(perWorker.reduce((a, b) => a + b, 0)).toBe(hosts.length);
    const verdict = (h: string): string | undefined =>
      results.find((r) => r.url === `http://${h}/`)?.verdict;
    expect([
      verdict('q0.good.test'),
      verdict('q0.slow.test'),
      verdict('q.expired.test'),
      verdict('q.differs.test'),
    ]).toEqual(['works', 'timeout', 'cert-expired', 'content-differs']);
    expect(coordinator.output()).toMatch(/resumed run: \d+ results in the journal/);
  });
});
