/**
 * The one-shot figure: CPU time (user + sys) of a whole `httpsify rewrite URL` process beside a
 * whole `node -e ''`, run in turn (A B A B ...) so that drift in the machine's speed hits both.
 * CPU time of each finished child comes from the kernel's accounting of reaped children
 * (/proc/self/stat cutime + cstime), as `time` reports it. Linux only; elsewhere, null.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'httpsify.js');

export interface OneShotFigure {
  runs: number;
  /** Median CPU ms of `httpsify rewrite http://www.eff.org/`. */
  cliCpuMs: number;
  /** Median CPU ms of `node -e ''`. */
  nodeCpuMs: number;
  /** Median of the pairwise ratios cli / node: the figure (target <= 2). */
  ratio: number;
}

/** CPU ms of all reaped children of this process so far. */
function childrenCpuMs(ticksPerSecond: number): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3, so cutime (16) and cstime (17) are at 13 and 14 here.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / ticksPerSecond;
}

function cpuOf(args: string[], ticksPerSecond: number): number {
  const before = childrenCpuMs(ticksPerSecond);
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr.toString()}`);
  return childrenCpuMs(ticksPerSecond) - before;
}

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

export function oneShotFigure(runs = 21): OneShotFigure | null {
  if (!existsSync('/proc/self/stat')) return null;
  const ticksPerSecond =
    Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const cli = [bin, 'rewrite', 'http://www.eff.org/'];
  const node = ['-e', ''];
  cpuOf(cli, ticksPerSecond); // warm-up: the file cache
  cpuOf(node, ticksPerSecond);
  const a: number[] = [];
  const b: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < runs; i++) {
    a.push(cpuOf(cli, ticksPerSecond));
    b.push(cpuOf(node, ticksPerSecond));
    ratios.push((a[i] as number) / Math.max(b[i] as number, 1));
  }
  return { runs, cliCpuMs: median(a), nodeCpuMs: median(b), ratio: median(ratios) };
}

// Run alone (`npm run bench:one-shot`), it prints its figure.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const f = oneShotFigure();
  if (f === null) console.log('one-shot figure: needs /proc (Linux)');
  else
    console.log(
      `httpsify rewrite URL: CPU ${f.cliCpuMs.toFixed(0)} ms vs node -e '' ${f.nodeCpuMs.toFixed(0)} ms: ${f.ratio.toFixed(2)}x (median of ${f.runs} pairs; target <= 2x)`,
    );
}
