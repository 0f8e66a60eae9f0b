// `npm run bench:sweep`: URLs per second and peak memory of `httpsify sweep` against the local
// web (no internet), embedded and as 1 coordinator + 3 workers on Redis. SWEEP_BENCH_HOSTS sets
// the size (default 20,000 hosts: one trivial ruleset each, one URL each). CPU-heavy.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { writeLibrary } from '../test/support/local-web.js';
import { startRedis } from '../test/support/redis-server.js';

const HOSTS = Number(process.env.SWEEP_BENCH_HOSTS ?? 20_000);
const WORKERS = 3;
const bin = resolve(import.meta.dirname, '../dist/bin.js');
const preload = resolve(import.meta.dirname, 'report-rss.mjs');
const root = mkdtempSync(join(tmpdir(), 'httpsify-sweep-bench-'));
const rssFile = join(root, 'rss.jsonl');

/** Mostly good hosts, and one in 25 of each failing kind that answers fast. */
function hostName(i: number): string {
  const kinds = ['expired', 'wrongname', 'differs', 'refused', 'mixed', 'downgrade'];
  const k = i % 25 < kinds.length ? kinds[i % 25] : 'good';
  return `h${i}.${k}.test`;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, ['--import', preload, bin, 'sweep', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, SWEEP_BENCH_RSS: rssFile, ...env },
  });
}

const exited = (c: ChildProcess): Promise<number | null> => new Promise((res) => (c.exitCode !== null ? res(c.exitCode) : c.once('exit', res)));

async function main(): Promise<void> {
  const lib = join(root, 'lib');
  mkdirSync(lib);
  writeLibrary(
    lib,
    Array.from({ length: HOSTS }, (_, i) => hostName(i)),
  );
  const web = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'local-web-process.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await createInterface({ input: web.stdout! })[Symbol.asyncIterator]().next();
  const { cliArgs } = JSON.parse(String(first.value)) as { cliArgs: string[] };
  const common = [lib, '--per-host-delay', '0', '--rate', '0', '--timeout', '10000', '--concurrency', '64', ...cliArgs];

  let t = Date.now();
  const embedded = run([...common, '--out', join(root, 'embedded')]);
  await exited(embedded);
  const embeddedSeconds = (Date.now() - t) / 1000;

  const redis = await startRedis();
  const q = ['--queue', redis.url, '--queue-name', 'bench'];
  const workers = Array.from({ length: WORKERS }, () => run([...common, ...q, '--worker']));
  t = Date.now();
  const coordinator = run([...common, ...q, '--out', join(root, 'queued')]);
  await exited(coordinator);
  const queuedSeconds = (Date.now() - t) / 1000;
  for (const w of workers) w.kill('SIGTERM');
  await Promise.all(workers.map(exited));
  await redis.stop();
  web.kill('SIGTERM');
  await exited(web);

  const count = (dir: string): number =>
    readFileSync(join(root, dir, 'results.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '').length;
  const rss = readFileSync(rssFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { role: string; maxRssKb: number });
  const peak = (role: string): string => `${(Math.max(...rss.filter((r) => r.role === role).map((r) => r.maxRssKb)) / 1024).toFixed(0)} MB`;
  console.log(`sweep bench: ${HOSTS} hosts (one ruleset and one URL each), local web in its own process`);
  console.log(
    `  embedded:              ${count('embedded')} results in ${embeddedSeconds.toFixed(1)} s = ${(count('embedded') / embeddedSeconds).toFixed(0)} URLs/s, peak RSS ${peak('embedded')}`,
  );
  console.log(
    `  1 coordinator + ${WORKERS} workers: ${count('queued')} results in ${queuedSeconds.toFixed(1)} s = ${(count('queued') / queuedSeconds).toFixed(0)} URLs/s, peak RSS coordinator ${peak('coordinator')}, worker ${peak('worker')}`,
  );
}

await main();
