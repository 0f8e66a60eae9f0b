import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { CORPUS_RULESETS, workTimeout } from '../../../engine/test/support/work-timeout.js';

/**
 * The one way the tests run the built `httpsify`: the committed launcher npm links as the bin,
 * which loads dist/ (so `npm run build` must have run, as `npm test` does).
 */
export const CLI_BIN = resolve(import.meta.dirname, '../../bin/httpsify.js');

/**
 * The default bound against a hang: one pass over the corpus, the longest work a single run
 * does (vitest's default test timeout too). A test whose failure mode is a hang passes its own.
 */
const ONE_CORPUS_PASS = workTimeout(CORPUS_RULESETS, 10);

export interface CliOptions {
  cwd?: string;
  /** Added to this process's environment; `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** Node's own options, given before the launcher (e.g. `--import` of a preload). */
  nodeArgs?: string[];
  /**
   * What the child reads: text or bytes then end of input, a stream piped in, or an open file
   * descriptor. Left out: an empty stdin, ended at once (a live one is `startCli`'s).
   */
  stdin?: string | Buffer | Readable | number;
  /** Milliseconds before the child gets SIGKILL, which no handler can turn into a status. */
  timeout?: number;
}

export interface CliRun {
  /** The exit status, or null when a signal ended the child. */
  status: number | null;
  signal: NodeJS.Signals | null;
  /** Killed by the `timeout` bound. */
  timedOut: boolean;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
  stderrBytes: Buffer;
}

interface Spawned {
  cwd: string | undefined;
  env: NodeJS.ProcessEnv;
}

function command(args: string[], options: CliOptions): [string, string[], Spawned] {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(options.env ?? {}))
    if (value === undefined) delete env[name];
    else env[name] = value;
  return [
    process.execPath,
    [...(options.nodeArgs ?? []), CLI_BIN, ...args],
    { cwd: options.cwd, env },
  ];
}

/** Runs `httpsify args` to its end, blocking: for tests that need no server in this process. */
export function runCliSync(args: string[], options: CliOptions = {}): CliRun {
  if (typeof options.stdin === 'object' && !Buffer.isBuffer(options.stdin))
    throw new TypeError('runCliSync cannot pipe a stream: use runCli');
  const [file, argv, spawnOptions] = command(args, options);
  const fd = typeof options.stdin === 'number' ? options.stdin : 'pipe';
  const r = spawnSync(file, argv, {
    ...spawnOptions,
    input: typeof options.stdin === 'number' ? undefined : (options.stdin ?? ''),
    stdio: [fd, 'pipe', 'pipe'],
    timeout: options.timeout ?? ONE_CORPUS_PASS,
    killSignal: 'SIGKILL',
    maxBuffer: 1 << 28,
  });
  if (r.error && (r.error as NodeJS.ErrnoException).code !== 'ETIMEDOUT') throw r.error;
  return {
    status: r.status,
    signal: r.signal,
    timedOut: (r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT',
    stdout: r.stdout.toString('utf8'),
    stderr: r.stderr.toString('utf8'),
    stdoutBytes: r.stdout,
    stderrBytes: r.stderr,
  };
}

/** Runs `httpsify args` to its end without blocking this process (its servers keep answering). */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  const child = startCli(args, options);
  const input = options.stdin;
  if (input === undefined || typeof input === 'string' || Buffer.isBuffer(input))
    child.proc.stdin.end(input);
  else if (typeof input !== 'number') input.pipe(child.proc.stdin);
  return child.exited;
}

/** A running `httpsify` to talk to: its stdin stays open until the test ends it. */
export interface CliChild {
  proc: ChildProcessWithoutNullStreams;
  /** What it has printed so far. */
  stdout(): string;
  stderr(): string;
  /** Both streams, in the order their chunks arrived (for a failure message). */
  output(): string;
  /**
   * Resolves as soon as `check` holds: tried on every chunk of output and every 20 ms, bounded
   * only by the test's timeout. Rejects, with the output, if the child ends before it holds.
   */
  until(check: () => boolean): Promise<void>;
  exited: Promise<CliRun>;
}

const running = new Set<ChildProcessWithoutNullStreams>();

/** Starts `httpsify args` with a live stdin, or the file descriptor `options.stdin` names. */
export function startCli(args: string[], options: CliOptions = {}): CliChild {
  const [file, argv, spawnOptions] = command(args, options);
  const stdinFd = typeof options.stdin === 'number' ? options.stdin : 'pipe';
  const proc = spawn(file, argv, {
    ...spawnOptions,
    stdio: [stdinFd, 'pipe', 'pipe'],
  }) as ChildProcessWithoutNullStreams;
  running.add(proc);
  const chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  const text = { stdout: '', stderr: '', output: '' };
  const waiting = new Set<() => void>();
  const wake = (): void => {
    for (const w of waiting) w();
  };
  for (const name of ['stdout', 'stderr'] as const) {
    const decoder = new StringDecoder('utf8');
    proc[name].on('data', (b: Buffer) => {
      chunks[name].push(b);
      const s = decoder.write(b);
      text[name] += s;
      text.output += s;
      wake();
    });
  }
  // A child that ends, or is killed, before reading all its input closes the pipe under a
  // write: expected, and any other failure to write is still the test's.
  proc.stdin?.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill('SIGKILL');
  }, options.timeout ?? ONE_CORPUS_PASS);
  let ended = false;
  const exited = new Promise<CliRun>((done, fail) => {
    proc.on('error', fail);
    proc.on('close', (status, signal) => {
      clearTimeout(timer);
      running.delete(proc);
      ended = true;
      wake();
      const stdoutBytes = Buffer.concat(chunks.stdout);
      const stderrBytes = Buffer.concat(chunks.stderr);
      done({
        status,
        signal,
        timedOut,
        stdout: stdoutBytes.toString('utf8'),
        stderr: stderrBytes.toString('utf8'),
        stdoutBytes,
        stderrBytes,
      });
    });
  });
  const until = (check: () => boolean): Promise<void> =>
    new Promise((done, fail) => {
      const poll = setInterval(() => attempt(), 20);
      const attempt = (): void => {
        let holds: boolean;
        try {
          holds = check();
        } catch (e) {
          finish();
          fail(e);
          return;
        }
        if (holds) {
          finish();
          done();
        } else if (ended) {
          finish();
          fail(new Error(`httpsify ${args.join(' ')} ended first; its output:\n${text.output}`));
        }
      };
      const finish = (): void => {
        clearInterval(poll);
        waiting.delete(attempt);
      };
      waiting.add(attempt);
      attempt();
    });
  return {
    proc,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    output: () => text.output,
    until,
    exited,
  };
}

/** Kills with SIGKILL every child still running (a test's `afterAll`), and waits for them. */
export async function killRunningClis(): Promise<void> {
  const left = [...running];
  await Promise.all(
    left.map((p) => new Promise((done) => (p.once('close', done), p.kill('SIGKILL')))),
  );
}
