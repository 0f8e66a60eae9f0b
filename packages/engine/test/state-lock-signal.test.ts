import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const nodeEntry = pathToFileURL(resolve(__dirname, '../dist/node/index.js')).href;

/** A process that takes the lock, says so, and works until a signal ends it. */
function lockHolder(stateDir: string, signal: NodeJS.Signals) {
  const script = `
    const { withStateLock } = await import(${JSON.stringify(nodeEntry)});
    await withStateLock(${JSON.stringify(stateDir)}, () => {
      process.stdout.write('locked\\n');
      return new Promise(() => setInterval(() => {}, 1000));
    });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise<{ signal: NodeJS.Signals | null; lockWhileHeld: boolean }>((done) => {
    let lockWhileHeld = false;
    child.stdout.on('data', () => {
      lockWhileHeld = existsSync(join(stateDir, 'lock'));
      child.kill(signal);
    });
    child.on('exit', (_code, sig) => done({ signal: sig, lockWhileHeld }));
  });
}

describe('the state lock and signals', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} while the lock is held removes it, and the process still ends by ${signal}`, async () => {
      const stateDir = mkdtempSync(join(tmpdir(), 'httpsify-lock-signal-'));
      const ended = await lockHolder(stateDir, signal);
      expect(ended).toEqual({ signal, lockWhileHeld: true });
      expect(existsSync(join(stateDir, 'lock'))).toBe(false);
    });
  }
});
