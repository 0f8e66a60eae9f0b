import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agreeOnPoliteness } from '../src/sweep/queue/host-leases.js';
import { startRedis, type TestRedis } from './support/redis-server.js';
import { workTimeout } from '../../engine/test/support/work-timeout.js';
import { killRunningClis, runCliSync, startCli } from './support/run-cli.js';

let redis: TestRedis;
let root: string;
beforeAll(async () => {
  redis = await startRedis();
  root = mkdtempSync(join(tmpdir(), 'httpsify-sweep-politeness-'));
});
afterAll(async () => {
  await killRunningClis();
  await redis.stop();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('a queued sweep runs with one set of per-host settings', () => {
  it('the first process stores its settings; one with others is refused, until they lapse', async () => {
    const strict = { perHostConnections: 1, perHostDelayMs: 1000 };
    const first = await agreeOnPoliteness(redis.client, 'agree', strict, { ttlMs: 400 });
    const same = await agreeOnPoliteness(redis.client, 'agree', strict, { ttlMs: 400 });
    for (const generous of [
      { perHostConnections: 4, perHostDelayMs: 1000 },
      { perHostConnections: 1, perHostDelayMs: 0 },
    ]) {
      await expect(
        agreeOnPoliteness(redis.client, 'agree', generous, { ttlMs: 400 }),
      ).rejects.toThrow(
        `--queue-name agree: this process has --per-host ${generous.perHostConnections} --per-host-delay ${generous.perHostDelayMs}, ` +
          'but the sweep on this queue runs with --per-host 1 --per-host-delay 1000 (set by its first process)',
      );
    }
    // Kept alive while a process with them runs, past their lifetime.
    await sleep(800);
    await expect(
      agreeOnPoliteness(
        redis.client,
        'agree',
        { perHostConnections: 4, perHostDelayMs: 0 },
        { ttlMs: 400 },
      ),
    ).rejects.toThrow(/runs with --per-host 1/);
    first.close();
    same.close();
    await sleep(600);
    // Every process of that sweep has stopped: a new sweep on the same name may choose others.
    const next = await agreeOnPoliteness(
      redis.client,
      'agree',
      { perHostConnections: 4, perHostDelayMs: 0 },
      { ttlMs: 400 },
    );
    next.close();
  });

  it('sweep --queue: a worker or coordinator started with other --per-host settings than a running worker exits, saying so', async () => {
    const lib = join(root, 'lib');
    mkdirSync(lib);
    writeFileSync(
      join(lib, 'A.xml'),
      '<ruleset name="A">\n\t<target host="a.test" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
    );
    const common = [lib, '--queue', redis.url, '--queue-name', 'polite-cli', '--rate', '0'];
    const worker = startCli(['sweep', ...common, '--worker', '--per-host', '1']);
    await worker.until(() => worker.stderr().includes('ready on queue'));
    for (const args of [
      [...common, '--worker', '--per-host', '3'],
      [...common, '--per-host', '1', '--per-host-delay', '0', '--out', join(root, 'out')],
    ]) {
      // Refused at start, before any work: a bound of one unit is plenty.
      const r = runCliSync(['sweep', ...args], { timeout: workTimeout(1, 1_000) });
      expect(r.signal).toBeNull();
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(
        'but the sweep on this queue runs with --per-host 1 --per-host-delay 500 (set by its first process)',
      );
    }
    worker.proc.kill('SIGTERM');
    await worker.exited;
  }, 60_000);
});
