import { rmSync } from 'node:fs';
import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ChannelError } from '../channels/errors.js';

/**
 * One writer at a time in a state directory. Two `httpsify update` runs used to interleave: one
 * installed a newer bundle while the other, failing, wrote its older record back and deleted
 * the new bundle. The lock is a file created exclusively (`wx`) holding the owner's pid and
 * host. A lock whose owner process is gone on this host (killed) is stale and is broken; breaking
 * is itself serialised by a second exclusive file, so two waiters cannot both break the lock and
 * then remove each other's fresh one.
 */
const LOCK_FILE = 'lock';
const BREAK_FILE = 'lock.break';
/** A breaker that died while breaking leaves `lock.break`; after this long it is ignored. */
const BREAK_STALE_MS = 10_000;
/** A lock from another host (shared home directory) cannot be checked by pid; trust it this long. */
const FOREIGN_STALE_MS = 10 * 60_000;

interface LockOwner {
  pid: number;
  host: string;
  at: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function createExclusive(path: string, content: string): Promise<boolean> {
  try {
    const handle = await open(path, 'wx', 0o600);
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

async function readOwner(
  path: string,
): Promise<{ owner: LockOwner | null; text: string; mtimeMs: number } | null> {
  try {
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    let owner: LockOwner | null = null;
    try {
      const v = JSON.parse(text) as LockOwner;
      if (Number.isSafeInteger(v.pid) && typeof v.host === 'string') owner = v;
    } catch {
      // A lock file cut short by a crash between create and write: judged by its age.
    }
    return { owner, text, mtimeMs: info.mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function isStale(found: { owner: LockOwner | null; mtimeMs: number }, now: number): boolean {
  if (found.owner === null) return now - found.mtimeMs > BREAK_STALE_MS;
  if (found.owner.host === hostname()) return !alive(found.owner.pid);
  return now - found.mtimeMs > FOREIGN_STALE_MS;
}

async function breakIfStale(dir: string): Promise<void> {
  const lockPath = join(dir, LOCK_FILE);
  const breakPath = join(dir, BREAK_FILE);
  const found = await readOwner(lockPath);
  if (found === null || !isStale(found, Date.now())) return;
  if (!(await createExclusive(breakPath, String(process.pid)))) {
    const breaker = await stat(breakPath).catch(() => null);
    if (breaker !== null && Date.now() - breaker.mtimeMs > BREAK_STALE_MS)
      await rm(breakPath, { force: true });
    return;
  }
  try {
    // Still the same stale lock? Then nobody took it in between, and nobody else may break it now.
    const again = await readOwner(lockPath);
    if (again !== null && again.text === found.text && isStale(again, Date.now()))
      await rm(lockPath, { force: true });
  } finally {
    await rm(breakPath, { force: true });
  }
}

export interface StateLockOptions {
  /** How long to wait for another run to finish (default 30 s). */
  waitMs?: number;
}

/** Runs `task` holding the state directory's lock (waiting for another run, breaking a dead one's). */
export async function withStateLock<T>(
  stateDir: string,
  task: () => Promise<T>,
  options: StateLockOptions = {},
): Promise<T> {
  await mkdir(stateDir, { recursive: true });
  const lockPath = join(stateDir, LOCK_FILE);
  const me = JSON.stringify({
    pid: process.pid,
    host: hostname(),
    at: Math.floor(Date.now() / 1000),
  });
  const deadline = Date.now() + (options.waitMs ?? 30_000);
  for (let delay = 20; ; delay = Math.min(delay * 2, 500)) {
    if (await createExclusive(lockPath, me)) break;
    await breakIfStale(stateDir);
    if (Date.now() > deadline) {
      const found = await readOwner(lockPath);
      const who = found?.owner
        ? `process ${found.owner.pid} on ${found.owner.host}`
        : 'another process';
      throw new ChannelError(
        'locked',
        `${stateDir} is in use by ${who} (lock file ${lockPath}); try again when it has finished`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
  // Ctrl-C or a kill ends the process without running `finally`: the lock goes first, then the
  // signal does what it would have done (the next run clears the files the task left).
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const onSignal = (signal: NodeJS.Signals): void => {
    rmSync(lockPath, { force: true });
    for (const s of signals) process.off(s, onSignal);
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  for (const s of signals) process.on(s, onSignal);
  try {
    return await task();
  } finally {
    for (const s of signals) process.off(s, onSignal);
    await rm(lockPath, { force: true });
  }
}
