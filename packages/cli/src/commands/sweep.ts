import type { Command } from '../shared/commander.js';
import { defaultRulesetsDir } from '@httpsify/engine/node';
import { collect } from '../shared/rules-option.js';
import { parseConnectTo, type SweepRequestOptions } from '../sweep/polite-settings.js';
import { sweepText, sweepWorkersLine } from '../formats/text/sweep.js';
import { raiseExitCode } from '../shared/emit-report.js';
import {
  prepareSweep,
  runSweep,
  type SweepOptions,
  type SweepOutcome,
} from '../sweep/run-sweep.js';

export { runSweep } from '../sweep/run-sweep.js';

interface SweepCliOptions {
  out: string;
  fresh?: boolean;
  discover?: string;
  previous?: string;
  write?: boolean;
  confirmAfter: string;
  concurrency: string;
  perHost: string;
  perHostDelay: string;
  rate: string;
  timeout: string;
  maxBody: string;
  resolve?: string[];
  ca?: string[];
  connectTo?: string[];
  includeDefaultOff?: boolean;
  queue?: string;
  queueName: string;
  worker?: boolean;
  lockMs: string;
  allowPrivate?: boolean;
}

function wholeNumber(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n < min)
    throw new Error(`${name} must be a number of at least ${min}, not "${value}"`);
  return n;
}

export function registerSweep(program: Command): void {
  program
    .command('sweep')
    .description(
      'sweep a whole ruleset library against the web (health per URL and ruleset), or find hosts worth a ruleset (--discover)',
    )
    .argument(
      '[library...]',
      'ruleset directories, XML files, bundles or .tar(.gz) archives (default: the bundled rulesets)',
    )
    .option(
      '--out <dir>',
      'results.jsonl (the journal a restarted sweep resumes), summary.json and report.html go here',
      'sweep-results',
    )
    .option('--fresh', 'start over instead of resuming the results in --out')
    .option(
      '--discover <hosts-file>',
      'instead of health: find hosts of this list (one per line, CSV rank,host, or URLs) no ruleset covers whose HTTPS serves the same; write rulesets for them to OUT/rulesets',
    )
    .option(
      '--previous <summary.json>',
      "an earlier sweep's summary: the report shows what changed, --write needs it as confirmation",
    )
    .option(
      '--write',
      'turn off rulesets failing in this sweep and in --previous (default_off="sweep failed: ..."); turn back on the ones it turned off that work in both',
    )
    .option(
      '--confirm-after <hours>',
      'with --write: how long before this sweep --previous must have finished',
      '24',
    )
    .option('--concurrency <n>', 'URLs swept at once', '32')
    .option('--per-host <n>', 'connections to one host at once', '2')
    .option('--per-host-delay <ms>', 'time between two requests to the same host', '500')
    .option('--rate <n>', 'requests started per second over all hosts (0: no cap)', '50')
    .option('--timeout <ms>', 'time limit per request (connect, TLS, headers and body)', '10000')
    .option(
      '--max-body <bytes>',
      'bytes of each body read (the rest is not downloaded)',
      String(256 * 1024),
    )
    .option(
      '--resolve <host:ip>',
      'connect to IP for HOST instead of resolving it; HOST may be *.domain or * (repeatable)',
      collect,
    )
    .option(
      '--connect-to <port:port>',
      'connect to the second port when a URL names the first (a local test web or a proxy; repeatable)',
      collect,
    )
    .option('--ca <file>', 'also trust the CA certificates in this PEM file (repeatable)', collect)
    .option(
      '--allow-private',
      'also fetch loopback, private and link-local addresses (refused by default, also after DNS and redirects): a local test web',
    )
    .option('--include-default-off', 'also sweep rulesets that are off by default')
    .option(
      '--queue <redis-url>',
      'run through BullMQ on Redis: this process coordinates (or, with --worker, sweeps jobs)',
    )
    .option(
      '--queue-name <name>',
      'the queue (and Redis keys) of this sweep; coordinator and workers must agree',
      'httpsify-sweep',
    )
    .option('--worker', 'with --queue: be a worker; runs until stopped (Ctrl-C / SIGTERM)')
    .option(
      '--lock-ms <ms>',
      "with --queue: a killed worker's job is delivered again after this long",
      '30000',
    )
    .action(async (paths: string[], opts: SweepCliOptions) => {
      const library = paths.length > 0 ? paths : [defaultRulesetsDir()];
      const request: SweepRequestOptions = {
        timeoutMs: wholeNumber('--timeout', opts.timeout, 1),
        maxBodyBytes: wholeNumber('--max-body', opts.maxBody, 1024),
        resolve: opts.resolve ?? [],
        caFiles: opts.ca ?? [],
        connectPorts: parseConnectTo(opts.connectTo ?? []),
        perHostConnections: wholeNumber('--per-host', opts.perHost, 1),
        perHostDelayMs: wholeNumber('--per-host-delay', opts.perHostDelay, 0),
        globalRate: wholeNumber('--rate', opts.rate, 0),
        allowPrivate: opts.allowPrivate === true,
      };
      const onBad = (m: string): void => void process.stderr.write(`httpsify: ${m}\n`);
      const options: SweepOptions = {
        paths: library,
        outDir: opts.out,
        fresh: opts.fresh === true,
        concurrency: wholeNumber('--concurrency', opts.concurrency, 1),
        request,
        includeDefaultOff: opts.includeDefaultOff === true,
        write: opts.write === true,
        confirmAfterMs: wholeNumber('--confirm-after', opts.confirmAfter, 0) * 3_600_000,
        progress: process.stderr,
        onBad,
        ...(opts.discover !== undefined ? { discover: opts.discover } : {}),
        ...(opts.previous !== undefined ? { previous: opts.previous } : {}),
      };
      if (opts.worker === true && opts.queue === undefined)
        throw new Error('--worker needs --queue redis://HOST:PORT');
      if (opts.queue !== undefined) {
        const { checkQueueName } = await queueModule(() => import('../sweep/queue/redis-keys.js'));
        const queueName = checkQueueName(opts.queueName);
        const lockMs = wholeNumber('--lock-ms', opts.lockMs, 1000);
        if (opts.worker === true) {
          const { startWorker } = await queueModule(() => import('../sweep/queue/worker.js'));
          const { connect } = await queueModule(() => import('../sweep/queue/redis-keys.js'));
          const { agreeOnPoliteness, sharedHostLimits } = await queueModule(
            () => import('../sweep/queue/host-leases.js'),
          );
          // Per-host limits held across all workers on this Redis (leases renewed while alive),
          // the same for all of them (a worker with other settings is refused here).
          const leaseRedis = await connect(opts.queue);
          let agreed: { close(): void };
          try {
            agreed = await agreeOnPoliteness(leaseRedis, queueName, request);
          } catch (err) {
            leaseRedis.disconnect();
            throw err;
          }
          const shared = sharedHostLimits(leaseRedis, queueName, request, { leaseMs: 15_000 });
          const setup = await prepareSweep({ ...options, request: { ...request, shared } });
          const worker = await startWorker({
            queueUrl: opts.queue,
            queueName,
            concurrency: options.concurrency,
            lockMs,
            check: setup.check,
            log: onBad,
          });
          process.stderr.write(`sweep worker ${worker.id} ready on queue ${queueName}\n`);
          await new Promise<void>((resolve) => {
            const stop = (): void => resolve();
            process.once('SIGINT', stop);
            process.once('SIGTERM', stop);
          });
          await worker.close();
          setup.close();
          shared.close();
          agreed.close();
          leaseRedis.disconnect();
          process.stderr.write(
            `sweep worker ${worker.id} stopped after storing ${worker.stored()} results\n`,
          );
          return;
        }
        const { runCoordinator } = await queueModule(() => import('../sweep/queue/coordinator.js'));
        const outcome = await runCoordinator({
          ...options,
          queueUrl: opts.queue,
          queueName,
          log: onBad,
        });
        process.stdout.write(`${sweepText(outcome)}\n${sweepWorkersLine(outcome.perWorker)}\n`);
        raiseExitCode(
          sweepExitCode(outcome, { discover: opts.discover !== undefined, queue: true }),
        );
        return;
      }
      const outcome = await runSweep(options);
      process.stdout.write(`${sweepText(outcome)}\n`);
      const code = sweepExitCode(outcome, { discover: opts.discover !== undefined, queue: false });
      // Nothing could be swept (no ruleset loaded, errors above): could not run, as the README says.
      if (code === 2)
        process.stderr.write(
          `httpsify: no ruleset could be loaded from ${library.join(', ')}: nothing was swept\n`,
        );
      raiseExitCode(code);
    });
}

/**
 * A health sweep exits 1 when a ruleset fails; the embedded one exits 2 when nothing could be
 * swept (no ruleset loaded: could not run, as the README says). Discovery has no failures.
 */
function sweepExitCode(
  outcome: SweepOutcome,
  how: { discover: boolean; queue: boolean },
): 0 | 1 | 2 {
  if (how.discover) return 0;
  if (outcome.summary.rulesets.length === 0 && !how.queue) return 2;
  return outcome.summary.byHealth.failing > 0 ? 1 : 0;
}

/** The packages `sweep --queue` needs, as the CLI's optional peer dependencies pin them. */
const QUEUE_PACKAGES = 'bullmq@6.7.6 ioredis@6.0.0';

/**
 * Loads a module of the queue stack. BullMQ and ioredis are optional: only `sweep --queue` needs
 * them, so a plain install of @httpsify/cli leaves them out; when they are missing, say which to install.
 */
async function queueModule<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (
      (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') &&
      /bullmq|ioredis/.test(e.message)
    )
      throw new Error(
        `sweep --queue needs BullMQ and ioredis, which are not installed: npm install ${QUEUE_PACKAGES}`,
      );
    throw err;
  }
}
