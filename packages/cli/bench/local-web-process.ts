// The tests' local web as a process of its own, so the bench measures the sweeper alone: prints
// the sweep options that reach it as one JSON line, then serves until killed; on SIGTERM it
// prints what it saw per host (connections open at once, shortest gap between requests) as a
// second JSON line.
import { startLocalWeb } from '../test/support/local-web.js';

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
};

const web = await startLocalWeb({ certCache: 2000 });
process.stdout.write(`${JSON.stringify({ cliArgs: web.cliArgs })}\n`);
process.on('SIGTERM', () => {
  process.stderr.write(
    `local web served ${web.served.http} http and ${web.served.https} https requests\n`,
  );
  const { peakOpen, minGapMs, opened } = web.connections;
  const stats = {
    hosts: peakOpen.size,
    maxOpenPerHost: Math.max(0, ...peakOpen.values()),
    minGapMs: Math.min(Infinity, ...minGapMs.values()),
    maxOpenedPerHost: Math.max(0, ...opened.values()),
    // Arrival gaps include each request's own connection set-up (a TLS handshake under load):
    // the low percentiles say more than the one shortest gap.
    gapP5Ms: percentile(
      web.connections.gaps.map((g) => g.ms),
      0.05,
    ),
    gapP50Ms: percentile(
      web.connections.gaps.map((g) => g.ms),
      0.5,
    ),
  };
  process.stdout.write(`${JSON.stringify(stats)}\n`, () => process.exit(0));
});
