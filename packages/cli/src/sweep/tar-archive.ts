import { closeSync, createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { openRegularFile } from '@httpsify/engine/node';

/** A regular file of a tar archive, as its bytes (the caller decodes them). */
export interface TarEntry {
  name: string;
  bytes: Buffer;
}

const BLOCK = 512;
/** A ruleset file larger than this is not a ruleset; refuse it instead of buffering it. */
const MAX_ENTRY_BYTES = 64 * 1024 * 1024;

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const nul = raw.indexOf(0);
  return raw.subarray(0, nul < 0 ? length : nul).toString('utf8');
}

/**
 * Reads a (optionally gzipped) ustar/GNU tar archive entry by entry, holding one entry at a
 * time. PAX and GNU long-name records name the entry that follows them.
 */
export async function* readTarEntries(path: string): AsyncGenerator<TarEntry> {
  // Through the rulesets' door: a FIFO or device named *.tar is refused, not waited on.
  let fd: number;
  try {
    fd = openRegularFile(path).fd;
  } catch (err) {
    throw new Error(`${path}: cannot read: ${(err as Error).message}`);
  }
  let input: Readable;
  try {
    input = createReadStream(path, { fd });
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  if (/(\.gz|\.tgz)$/i.test(path)) input = input.pipe(createGunzip());
  let pending: Buffer = Buffer.alloc(0);
  let longName: string | null = null;
  const chunks = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const take = async (n: number): Promise<Buffer | null> => {
    while (pending.length < n) {
      const next = await chunks.next();
      if (next.done === true) return null;
      pending = pending.length === 0 ? next.value : Buffer.concat([pending, next.value]);
    }
    const out = pending.subarray(0, n);
    pending = pending.subarray(n);
    return out;
  };
  for (;;) {
    const header = await take(BLOCK);
    if (header === null || header.every((b) => b === 0)) return;
    const size = parseInt(field(header, 124, 12).trim() || '0', 8);
    if (!Number.isFinite(size) || size < 0 || size > MAX_ENTRY_BYTES) throw new Error(`${path}: a tar entry has an unusable size field`);
    const type = String.fromCharCode(header[156] ?? 0);
    const prefix = field(header, 345, 155);
    const body = await take(Math.ceil(size / BLOCK) * BLOCK);
    if (body === null) throw new Error(`${path}: the archive ends inside an entry`);
    const data = Buffer.from(body.subarray(0, size));
    if (type === 'L') {
      longName = field(data, 0, data.length);
      continue;
    }
    if (type === 'x') {
      const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'));
      if (m !== null) longName = m[1] ?? null;
      continue;
    }
    const name = longName ?? (prefix !== '' ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    longName = null;
    if (type === '0' || type === '\0') yield { name, bytes: data };
  }
}
