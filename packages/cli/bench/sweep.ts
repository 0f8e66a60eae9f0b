// `npm run bench:sweep`: URLs per second and peak memory of `httpsify sweep` against the local
// web (no internet), embedded and as 1 coordinator + 3 workers on Redis. SWEEP_BENCH_HOSTS sets
// the size (default 20,000 hosts: one trivial ruleset each, one URL each). CPU-heavy. Then
// politeness as the server sees it: a few hosts with many URLs each, swept with --per-host 2
// and --per-host-delay 100 by 1 process and by 3 workers; the local web counts the connections
// each host name had open at once (both schemes) and the shortest gap between two requests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { writeLibrary } from '../test/support/local-web.js';
import { startRedis } from '../test/support/redis-server.js';

const HOSTS = Number(process.env.SWEEP_BENCH_HOSTS ?? 20_000);
/** The queued run can be smaller (SWEEP_BENCH_QUEUE_HOSTS) on a busy machine: the first N hosts. */
const QUEUE_HOSTS = Math.min(HOSTS, Number(process.env.SWEEP_BENCH_QUEUE_HOSTS ?? HOSTS));
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

/** CPU time (ms) a process has used so far, from /proc (Linux); NaN elsewhere. */
function cpuMsOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

interface WebStats {
  hosts: number;
  maxOpenPerHost: number;
  minGapMs: number;
  maxOpenedPerHost: number;
  gapP5Ms: number;
  gapP50Ms: number;
}

/** A local web in its own process: the CLI options that reach it, and its counts when stopped. */
async function startWebProcess(): Promise<{ cliArgs: string[]; stop: () => Promise<WebStats> }> {
  const web = spawn(
    process.execPath,
    ['--import', 'tsx', resolve(import.meta.dirname, 'local-web-process.ts')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: web.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  const { cliArgs } = JSON.parse(String(first.value)) as { cliArgs: string[] };
  return {
    cliArgs,
    stop: async () => {
      web.kill('SIGTERM');
      const stats = await lines.next();
      await exited(web);
      return JSON.parse(String(stats.value)) as WebStats;
    },
  };
}

const POLITE_HOSTS = 8;
const POLITE_URLS = 30;
const POLITE_PER_HOST = 2;
const POLITE_DELAY_MS = 100;

/** POLITE_HOSTS rulesets of POLITE_URLS test URLs each, all on one host per ruleset. */
function writePoliteLibrary(dir: string): void {
  for (let h = 0; h < POLITE_HOSTS; h++) {
    const host = `p${h}.good.test`;
    const tests = Array.from(
      { length: POLITE_URLS },
      (_, i) => `\t<test url="http://${host}/page${i}" />\n`,
    ).join('');
    writeFileSync(
      join(dir, `${host}.xml`),
      `<ruleset name="${host}">\n\t<target host="${host}" />\n${tests}\t<rule from="^http:" to="https:" />\n</ruleset>\n`,
    );
  }
}

async function politeness(workers: number): Promise<WebStats> {
  const lib = join(root, `polite-lib-${workers}`);
  mkdirSync(lib);
  writePoliteLibrary(lib);
  const web = await startWebProcess();
  const options = [
    '--per-host',
    String(POLITE_PER_HOST),
    '--per-host-delay',
    String(POLITE_DELAY_MS),
    '--rate',
    '0',
    '--concurrency',
    '16',
    ...web.cliArgs,
  ];
  if (workers === 0) {
    await exited(run([lib, ...options, '--out', join(root, `polite-${workers}`)]));
  } else {
    const redis = await startRedis();
    const q = ['--queue', redis.url, '--queue-name', 'polite'];
    const ws = Array.from({ length: workers }, () => run([lib, ...options, ...q, '--worker']));
    await exited(run([lib, ...options, ...q, '--out', join(root, `polite-${workers}`)]));
    for (const w of ws) w.kill('SIGTERM');
    await Promise.all(ws.map(exited));
    await redis.stop();
  }
  return web.stop();
}

const exited = (c: ChildProcess): Promise<number | null> =>
  new Promise((res) => (c.exitCode !== null ? res(c.exitCode) : c.once('exit', res)));

async function main(): Promise<void> {
  const lib = join(root, 'lib');
  mkdirSync(lib);
  writeLibrary(
    lib,
    Array.from({ length: HOSTS }, (_, i) => hostName(i)),
  );
  const queueLib = join(root, 'queue-lib');
  mkdirSync(queueLib);
  writeLibrary(
    queueLib,
    Array.from({ length: QUEUE_HOSTS }, (_, i) => hostName(i)),
  );
  const web = spawn(
    process.execPath,
    ['--import', 'tsx', resolve(import.meta.dirname, 'local-web-process.ts')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const first = await createInterface({ input: web.stdout! })[Symbol.asyncIterator]().next();
  const { cliArgs } = JSON.parse(String(first.value)) as { cliArgs: string[] };
  const options = [
    '--per-host-delay',
    '0',
    '--rate',
    '0',
    '--timeout',
    '10000',
    '--concurrency',
    '64',
    ...cliArgs,
  ];

  let webCpu = cpuMsOf(web.pid);
  let t = Date.now();
  const embedded = run([lib, ...options, '--out', join(root, 'embedded')]);
  await exited(embedded);
  const embeddedSeconds = (Date.now() - t) / 1000;
  const webCpuEmbedded = cpuMsOf(web.pid) - webCpu;
  webCpu = cpuMsOf(web.pid);

  const redis = await startRedis();
  const q = ['--queue', redis.url, '--queue-name', 'bench'];
  const workers = Array.from({ length: WORKERS }, () =>
    run([queueLib, ...options, ...q, '--worker']),
  );
  t = Date.now();
  const coordinator = run([queueLib, ...options, ...q, '--out', join(root, 'queued')]);
  await exited(coordinator);
  const queuedSeconds = (Date.now() - t) / 1000;
  const webCpuQueued = cpuMsOf(web.pid) - webCpu;
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
    .map((l) => JSON.parse(l) as { role: string; maxRssKb: number; cpuMs: number });
  const cpu = (role: string): number =>
    rss.filter((r) => r.role === role).reduce((a, r) => a + r.cpuMs, 0);
  const perUrl = (ms: number, n: number): string => `${(ms / n).toFixed(2)} ms`;
  const peak = (role: string): string =>
    `${(Math.max(...rss.filter((r) => r.role === role).map((r) => r.maxRssKb)) / 1024).toFixed(0)} MB`;
  console.log(
    `sweep bench: ${HOSTS} hosts embedded, ${QUEUE_HOSTS} queued (one ruleset and one URL each), local web in its own process`,
  );
  console.log(
    `  embedded:              ${count('embedded')} results in ${embeddedSeconds.toFixed(1)} s = ${(count('embedded') / embeddedSeconds).toFixed(0)} URLs/s, peak RSS ${peak('embedded')}`,
  );
  console.log(
    `    CPU per URL: sweeper ${perUrl(cpu('embedded'), count('embedded'))}, local web ${perUrl(webCpuEmbedded, count('embedded'))}`,
  );
  console.log(
    `  1 coordinator + ${WORKERS} workers: ${count('queued')} results in ${queuedSeconds.toFixed(1)} s = ${(count('queued') / queuedSeconds).toFixed(0)} URLs/s, peak RSS coordinator ${peak('coordinator')}, worker ${peak('worker')}`,
  );
  console.log(
    `    CPU per URL: coordinator ${perUrl(cpu('coordinator'), count('queued'))}, workers ${perUrl(cpu('worker'), count('queued'))}, local web ${perUrl(webCpuQueued, count('queued'))}`,
  );
  const polite = (label: string, s: WebStats): void =>
    console.log(
      `  ${label}: most connections one host had open at once ${s.maxOpenPerHost} (limit ${POLITE_PER_HOST}), gaps between two requests to one host: shortest ${s.minGapMs.toFixed(0)} ms, 5th percentile ${s.gapP5Ms.toFixed(0)} ms, median ${s.gapP50Ms.toFixed(0)} ms (delay ${POLITE_DELAY_MS}), most connections opened per host ${s.maxOpenedPerHost}`,
    );
  console.log(
    `politeness: ${POLITE_HOSTS} hosts x ${POLITE_URLS} URLs, --per-host ${POLITE_PER_HOST} --per-host-delay ${POLITE_DELAY_MS}, counted at the server`,
  );
  polite('embedded (1 process)', await politeness(0));
  polite('1 coordinator + 1 worker', await politeness(1));
  polite(`1 coordinator + ${WORKERS} workers`, await politeness(WORKERS));
  console.log(
    `  load average at the end: ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${(await import('node:os')).cpus().length} CPUs`,
  );
}

await main();
