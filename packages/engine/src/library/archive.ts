import { fflateModule } from './fflate-module.js';
import {
  EntryCollector,
  type ArchiveContents,
  LIBRARY_LIMITS,
  LibraryRefused,
  type Limits,
  mb,
} from './archive-entries.js';
import { readZip } from './archive-zip.js';

/**
 * Reads an archive of rulesets within limits (archive-entries.ts says what every entry passes):
 * which kind it is, gzip and tar here, zip in archive-zip.ts.
 */

export type ArchiveKind = 'zip' | 'gzip' | 'tar';

export function archiveKind(bytes: Uint8Array): ArchiveKind | null {
  if (
    bytes.length >= 4 &&
    bytes[0] === 0x50 &&
    bytes[1] === 0x4b &&
    bytes[2] === 0x03 &&
    bytes[3] === 0x04
  )
    return 'zip';
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes.length >= 512 && ascii(bytes, 257, 5) === 'ustar') return 'tar';
  return null;
}

/** Reads a .zip, .tar or .tar.gz whole, within `limits`; throws LibraryRefused for the whole archive. */
export function readArchive(bytes: Uint8Array, limits: Limits = LIBRARY_LIMITS): ArchiveContents {
  const collector = new EntryCollector(limits);
  switch (archiveKind(bytes)) {
    case 'zip':
      readZip(bytes, collector);
      break;
    case 'gzip': {
      const tar = gunzipBounded(bytes, limits.totalBytes + 1024 * 1024);
      if (archiveKind(tar) !== 'tar')
        throw new LibraryRefused('the .gz file does not hold a tar archive');
      readTar(tar, collector);
      break;
    }
    case 'tar':
      readTar(bytes, collector);
      break;
    default:
      throw new LibraryRefused('not a .zip, .tar or .tar.gz archive');
  }
  return collector.contents;
}

/** Gunzip that stops as soon as the output passes `max` bytes (a gzip bomb never fills memory). */
export function gunzipBounded(bytes: Uint8Array, max: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let ended = false;
  const stream = new (fflateModule().Gunzip)((chunk, final) => {
    size += chunk.length;
    if (size > max)
      throw new LibraryRefused(`more than ${mb(max)} once unpacked: too large for one library`);
    chunks.push(chunk);
    if (final) ended = true;
  });
  const STEP = 64 * 1024;
  try {
    for (let off = 0; off < bytes.length; off += STEP)
      stream.push(
        bytes.subarray(off, Math.min(bytes.length, off + STEP)),
        off + STEP >= bytes.length,
      );
  } catch (e) {
    if (e instanceof LibraryRefused) throw e;
    throw new LibraryRefused(
      `the .gz file is damaged (${e instanceof Error ? e.message : String(e)})`,
    );
  }
  if (!ended) throw new LibraryRefused('the .gz file is cut short');
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function ascii(bytes: Uint8Array, start: number, length: number): string {
  let s = '';
  for (let i = start; i < start + length && i < bytes.length; i++) {
    if (bytes[i] === 0) break;
    s += String.fromCharCode(bytes[i] as number);
  }
  return s;
}

function octal(bytes: Uint8Array, start: number, length: number, what: string): number {
  if (((bytes[start] as number) & 0x80) !== 0)
    throw new LibraryRefused(
      `the tar archive gives a ${what} in binary form, too large for a ruleset library`,
    );
  const text = ascii(bytes, start, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text))
    throw new LibraryRefused(`the tar archive is damaged (a ${what} is not a number)`);
  return parseInt(text, 8);
}

/**
 * ustar/pax/GNU tar: 512-byte headers, each followed by its data rounded up to 512 bytes; two
 * zero blocks end it. Pax and GNU long-name records are skipped (their entries keep the ustar name).
 */
export function readTar(bytes: Uint8Array, collector: EntryCollector): void {
  let off = 0;
  for (;;) {
    if (off + 512 > bytes.length) {
      if (off === bytes.length) return; // Ends without the zero blocks: accepted, as tar does.
      throw new LibraryRefused('the tar archive is cut short');
    }
    const header = bytes.subarray(off, off + 512);
    if (header.every((b) => b === 0)) return;
    const stored = octal(header, 148, 8, 'checksum');
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : (header[i] as number);
    if (sum !== stored)
      throw new LibraryRefused(`the tar archive is damaged (bad header at byte ${off})`);
    const size = octal(header, 124, 12, 'size');
    const type = String.fromCharCode(header[156] as number);
    const prefix = ascii(header, 345, 155);
    const name = (prefix === '' ? '' : `${prefix}/`) + ascii(header, 0, 100);
    const dataStart = off + 512;
    const isFile = type === '0' || type === '\0' || type === '7';
    // Counted against the limits first, so a huge declared size is refused as too large.
    const path = isFile ? collector.admit(name, size) : null;
    if (dataStart + size > bytes.length)
      throw new LibraryRefused(
        `the tar archive is cut short (${name} declares a size of ${size}, more than is left)`,
      );
    if (isFile) {
      if (path !== null) collector.add(path, bytes.subarray(dataStart, dataStart + size));
    } else if (type !== '5' && type !== 'x' && type !== 'g' && type !== 'L' && type !== 'K') {
      // Links, devices, fifos: never followed.
      collector.skip();
    }
    off = dataStart + Math.ceil(size / 512) * 512;
  }
}
