/* global process */
// Preloaded into each bench process: on exit, appends its peak resident memory to a file.
import { appendFileSync } from 'node:fs';

const file = process.env.SWEEP_BENCH_RSS;
if (file) {
  const role = process.argv.includes('--worker')
    ? 'worker'
    : process.argv.includes('--queue')
      ? 'coordinator'
      : 'embedded';
  process.on('exit', () =>
    appendFileSync(
      file,
      `${JSON.stringify({ role, pid: process.pid, maxRssKb: process.resourceUsage().maxRSS, cpuMs: (process.resourceUsage().userCPUTime + process.resourceUsage().systemCPUTime) / 1000 })}\n`,
    ),
  );
}
