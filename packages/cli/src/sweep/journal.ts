import {
  closeSync,
  createReadStream,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
} from 'node:fs';
import { createInterface } from 'node:readline';
import { sweepResultLine } from '../formats/jsonl.js';
import type { SweepResult } from './verdicts.js';

/**
 * The JSONL results file is the sweep's journal. Each result is one line written with a single
 * write(2) on an O_APPEND descriptor, so a process killed at any moment leaves whole lines plus
 * at most one torn last line; reopening drops the torn line, and the keys of the whole lines
 * are the URLs already done. A URL is either in the file once or not at all.
 */
export class Journal {
  private constructor(
    private readonly fd: number,
    readonly done: Set<string>,
    readonly path: string,
  ) {}

  static async open(path: string, options: { fresh?: boolean } = {}): Promise<Journal> {
    const done = new Set<string>();
    if (existsSync(path) && options.fresh !== true) {
      for await (const result of readResults(path)) done.add(result.key);
    }
    const fd = openSync(path, options.fresh === true ? 'w' : 'a+');
    dropTornTail(fd);
    return new Journal(fd, done, path);
  }

  /** Records a result unless its key is already there; returns whether it was written. */
  append(result: SweepResult): boolean {
    if (this.done.has(result.key)) return false;
    writeSync(this.fd, `${sweepResultLine(result)}\n`);
    this.done.add(result.key);
    return true;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Cuts a last line that has no newline (a write the kill interrupted). */
function dropTornTail(fd: number): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const tail = Buffer.alloc(Math.min(size, 1 << 20));
  readSync(fd, tail, 0, tail.length, size - tail.length);
  if (tail[tail.length - 1] === 0x0a) return;
  const lastNewline = tail.lastIndexOf(0x0a);
  ftruncateSync(fd, lastNewline < 0 ? size - tail.length : size - tail.length + lastNewline + 1);
}

/** Streams the results of a JSONL file; a line that is not a whole result (torn tail) is skipped. */
export async function* readResults(path: string): AsyncGenerator<SweepResult> {
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (
      typeof value === 'object' &&
      value !== null &&
      typeof (value as SweepResult).key === 'string' &&
      typeof (value as SweepResult).verdict === 'string'
    ) {
      yield value as SweepResult;
    }
  }
}
