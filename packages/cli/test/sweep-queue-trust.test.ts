import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCoordinator } from '../src/sweep/queue/coordinator.js';
import { sweepKeys } from '../src/sweep/queue/redis-keys.js';
import { startWorker } from '../src/sweep/queue/worker.js';
import { prepareSweep, type SweepOptions } from '../src/sweep/run-sweep.js';
import type { SweepResult } from '../src/sweep/verdicts.js';
import { startLocalWeb, writeLibrary, type LocalWeb } from './support/local-web.js';
import { startRedis, type TestRedis } from './support/redis-server.js';
import { killRunningClis, startCli } from './support/run-cli.js';

let web: LocalWeb;
let redis: TestRedis;
let root: string;

beforeAll(async () => {
  [web, redis] = await Promise.all([startLocalWeb(), startRedis()]);
  root = mkdtempSync(join(tmpdir(), 'httpsify-sweep-trust-'));
});
afterAll(async () => {
  await killRunningClis();
  await Promise.all([web.close(), redis.stop()]);
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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

function options(paths: string[], out: string, extra: Partial<SweepOptions> = {}): SweepOptions {
  return {
    paths,
    outDir: out,
    concurrency: 4,
    request: {
      timeoutMs: 5000,
      maxBodyBytes: 64 * 1024,
      resolve: [],
      caFiles: [web.caPath],
      lookup: web.lookup,
      allowPrivate: true,
      connectPorts: web.connectPorts,
      perHostConnections: 2,
      perHostDelayMs: 0,
      globalRate: 0,
    },
    ...extra,
  };
}

/**
 * Runs a coordinator, waits until its jobs wait in Redis, lets `plant` write what a hostile
 * Redis client would, then starts a worker and waits for the end.
 */
async function sweepWithPlanted(
  queueName: string,
  opts: SweepOptions,
  plant: (keys: ReturnType<typeof sweepKeys>, jobKeys: string[]) => Promise<void>,
) {
  const logs: string[] = [];
  const coordinator = runCoordinator({
    ...opts,
    queueUrl: redis.url,
    queueName,
    log: (l) => logs.push(l),
  });
  const queue = new Queue(queueName, { connection: redis.client.duplicate() });
  await until('jobs in the queue', async () => (await queue.getJobCounts('waiting')).waiting! > 0);
  const waiting = await queue.getJobs(['waiting']);
  await plant(
    sweepKeys(queueName),
    waiting.map((j) => (j.data as { key: string }).key),
  );
  const setup = await prepareSweep(opts);
  const worker = await startWorker({
    queueUrl: redis.url,
    queueName,
    concurrency: 2,
    lockMs: 5000,
    check: setup.check,
  });
  try {
    const outcome = await coordinator;
    return { outcome, logs };
  } finally {
    await worker.close();
    setup.close();
    await queue.close();
  }
}

const results = (out: string): SweepResult[] =>
  readFileSync(join(out, 'results.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as SweepResult);

describe('sweep --queue: nothing read back from Redis is trusted', () => {
  it('a planted result cannot edit a file outside the library, and bad ones are refused and swept again', async () => {
    const lib = join(root, 'lib');
    const outside = join(root, 'outside');
    mkdirSync(lib);
    mkdirSync(outside);
    writeLibrary(lib, ['t1.good.test', 't2.good.test', 't3.good.test']);
    const victim = join(outside, 'Victim.xml');
    const victimText =
      '<ruleset name="Victim">\n\t<target host="victim.example" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n';
    writeFileSync(victim, victimText);
    // A previous sweep (long ago) in which the victim and the library's rulesets failed.
    const failing = (file: string) => ({
      name: file,
      file,
      health: 'failing',
      urls: 1,
      failingUrls: 1,
      reasons: ['certificate expired: x'],
      verdicts: {},
    });
    const previous = join(root, 'previous.json');
    writeFileSync(
      previous,
      JSON.stringify({
        format: 'httpsify-sweep-summary/1',
        kind: 'ruleset',
        startedAt: 1,
        finishedAt: 2,
        urls: 4,
        byVerdict: {},
        byHealth: {},
        rulesets: [
          failing(victim),
          ...['t1', 't2', 't3'].map((t) => failing(join(lib, `${t}.good.test.xml`))),
        ],
      }),
    );
    const out = join(root, 'out-write');
    const { outcome, logs } = await sweepWithPlanted(
      'trust-write',
      options([lib], out, { write: true, previous, confirmAfterMs: 0 }),
      async (keys, jobKeys) => {
        const [k1, k2, k3] = jobKeys.sort();
        const forged = (key: string, extra: object) =>
          JSON.stringify({
            key,
            kind: 'ruleset',
            ruleset: 'Victim',
            file: victim,
            url: 'http://victim.example/',
            rewritten: null,
            verdict: 'cert-expired',
            detail: 'x',
            plainStatus: 200,
            secureStatus: null,
            similarity: null,
            at: Date.now(),
            ms: 1,
            ...extra,
          });
        // Well-formed but naming another file; a verdict no sweep has; a huge detail; a key no job has.
        await redis.client.hset(keys.results, k1 as string, forged(k1 as string, {}));
        await redis.client.hset(
          keys.results,
          k2 as string,
          forged(k2 as string, { verdict: 'pwned' }),
        );
        await redis.client.hset(
          keys.results,
          k3 as string,
          forged(k3 as string, { detail: 'x'.repeat(200_000) }),
        );
        await redis.client.hset(
          keys.results,
          `ruleset|${victim}|http://victim.example/`,
          forged(`ruleset|${victim}|http://victim.example/`, {}),
        );
        await redis.client.rpush(
          keys.done,
          k1 as string,
          k2 as string,
          k3 as string,
          `ruleset|${victim}|http://victim.example/`,
        );
      },
    );
    // The file outside the library is untouched, whatever the planted result said.
    expect(readFileSync(victim, 'utf8')).toBe(victimText);
    const lines = results(out);
    expect(lines.map((r) => r.file).sort()).toEqual(
      ['t1', 't2', 't3'].map((t) => join(lib, `${t}.good.test.xml`)).sort(),
    );
    expect(lines.every((r) => r.url.startsWith('http://t') && r.ruleset !== 'Victim')).toBe(true);
    // The two malformed results were refused (with a counted warning) and their URLs swept again.
    expect(logs.join('\n')).toMatch(/refused a stored result .*unknown verdict/);
    expect(logs.join('\n')).toMatch(/refused a stored result .*stored result of \d+ bytes/);
    expect(logs.join('\n')).toMatch(/2 stored results refused, 1 unknown keys ignored/);
    expect(lines.filter((r) => r.verdict === 'works').length).toBe(2);
    expect(outcome.writeBack?.errors.join('\n') ?? '').not.toContain(victim);
  }, 120_000);

  it('a planted discovery result cannot write a ruleset outside --out', async () => {
    const lib = join(root, 'lib-discover');
    mkdirSync(lib);
    writeLibrary(lib, ['covered.good.test']);
    const list = join(root, 'hosts.txt');
    writeFileSync(list, 'd1.good.test\nd2.good.test\n');
    const out = join(root, 'a', 'b', 'out-discover');
    const escapeName = '../../../escaped';
    await sweepWithPlanted(
      'trust-discover',
      options([lib], out, { discover: list }),
      async (keys, jobKeys) => {
        for (const key of jobKeys) {
          await redis.client.hset(
            keys.results,
            key,
            JSON.stringify({
              key,
              kind: 'discover',
              ruleset: escapeName,
              file: '',
              url: 'http://x/',
              rewritten: 'https://x/',
              verdict: 'works',
              detail: 'ok',
              plainStatus: 200,
              secureStatus: 200,
              similarity: 1,
              at: Date.now(),
              ms: 1,
            }),
          );
          await redis.client.rpush(keys.done, key);
        }
      },
    );
    expect(existsSync(join(out, 'rulesets', `${escapeName}.xml`))).toBe(false);
    expect(existsSync(join(root, 'escaped.xml'))).toBe(false);
    expect(existsSync(join(root, 'a', 'escaped.xml'))).toBe(false);
    expect(
      results(out)
        .map((r) => r.ruleset)
        .sort(),
    ).toEqual(['d1.good.test', 'd2.good.test']);
  }, 120_000);
});

describe('sweep --queue: politeness across workers, counted at the server', () => {
  it('3 workers keep each host to --per-host connections and --per-host-delay between starts', async () => {
    const lib = join(root, 'lib-polite');
    mkdirSync(lib);
    const hosts = ['p0.good.test', 'p1.good.test', 'p2.good.test'];
    for (const host of hosts) {
      const tests = Array.from(
        { length: 10 },
        (_, i) => `\t<test url="http://${host}/page${i}" />\n`,
      ).join('');
      writeFileSync(
        join(lib, `${host}.xml`),
        `<ruleset name="${host}">\n\t<target host="${host}" />\n${tests}\t<rule from="^http:" to="https:" />\n</ruleset>\n`,
      );
    }
    const delay = 300;
    const common = [
      lib,
      '--queue',
      redis.url,
      '--queue-name',
      'polite',
      '--per-host',
      '2',
      '--per-host-delay',
      String(delay),
      '--rate',
      '0',
      '--timeout',
      '10000',
      ...web.cliArgs,
    ];
    const workers = [0, 1, 2].map(() =>
      startCli(['sweep', ...common, '--worker', '--concurrency', '8']),
    );
    const coordinator = startCli(['sweep', ...common, '--out', join(root, 'out-polite')]);
    const code = (await coordinator.exited).status;
    for (const w of workers) w.proc.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    const log = [coordinator, ...workers].map((c) => c.output()).join('\n---\n');
    expect(code, log).toBe(0);
    // All three workers took part.
    expect(
      workers.every((w) => /stopped after storing [1-9]/.test(w.output())),
      log,
    ).toBe(true);
    for (const host of hosts) {
      // HTTP and HTTPS together: never more than 2 connections open.
      expect(web.connections.peakOpen.get(host), host).toBeLessThanOrEqual(2);
    }
    // Starts are spaced at the server too. The gaps the server sees shift with its own event
    // loop, so a few may look shorter on a loaded machine; without shared spacing most would.
    const gaps = web.connections.gaps.filter((g) => hosts.includes(g.host)).map((g) => g.ms);
    expect(gaps.length).toBeGreaterThanOrEqual(hosts.length * 19);
    expect(gaps.filter((g) => g < delay / 2).length).toBeLessThanOrEqual(
      Math.floor(gaps.length / 10),
    );
  }, 180_000);
});
