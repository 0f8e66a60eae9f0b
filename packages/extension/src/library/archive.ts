import { Gunzip, Inflate } from 'fflate';

/**
 * Reading a ruleset library the user picked: a folder's files, a .zip, a .tar or a .tar.gz.
 * Every byte is hostile: sizes are checked against limits before and while anything is
 * expanded, names may not climb out of the library (`..`, absolute paths), and only `.xml`
 * files are kept (others are counted, not read). Problems with one entry are reported with
 * its name and the rest goes on; only a limit or a damaged container stops the whole read.
 */

export interface Limits {
  /** Everything expanded, XML or not. */
  totalBytes: number;
  /** Entries of any kind. */
  files: number;
  /** One ruleset file (the largest of the 2018 corpus is under 100 KB). */
  fileBytes: number;
  /** Time one archive may take to read, whatever it declares. */
  timeMs?: number;
}

export const LIBRARY_LIMITS: Required<Limits> = {
  totalBytes: 64 * 1024 * 1024,
  files: 50_000,
  fileBytes: 2 * 1024 * 1024,
  timeMs: 60_000,
};

export interface LibraryFile {
  path: string;
  text: string;
}

export interface FileProblem {
  file: string;
  line: number;
  message: string;
}

export interface ArchiveContents {
  files: LibraryFile[];
  /** Entries that are not `.xml` files (directories apart). */
  skipped: number;
  problems: FileProblem[];
}

/** The whole read stops: a limit was passed or the container itself is damaged. */
export class LibraryRefused extends Error {}

const mb = (n: number) => `${Math.round(n / (1024 * 1024))} MB`;

/** Collects entries under the limits; shared by archives and folders. */
export class EntryCollector {
  readonly contents: ArchiveContents = { files: [], skipped: 0, problems: [] };
  private total = 0;
  private count = 0;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  constructor(readonly limits: Limits = LIBRARY_LIMITS) {}

  /** Counts an entry against the limits before its bytes are expanded. Returns whether to read it. */
  admit(rawPath: string, declaredSize: number): string | null {
    this.count++;
    if (this.count > this.limits.files) throw new LibraryRefused(`more than ${this.limits.files.toLocaleString('en')} files: too many for one library`);
    if (declaredSize < 0 || !Number.isFinite(declaredSize)) throw new LibraryRefused(`${rawPath}: the archive gives an impossible size`);
    this.total += declaredSize;
    if (this.total > this.limits.totalBytes) throw new LibraryRefused(`more than ${mb(this.limits.totalBytes)} once unpacked: too large for one library`);
    const path = safePath(rawPath);
    if (path === null) {
      this.contents.problems.push({ file: rawPath, line: 0, message: 'the name leads outside the library (".." or an absolute path); skipped' });
      return null;
    }
    if (!path.toLowerCase().endsWith('.xml')) {
      this.contents.skipped++;
      return null;
    }
    if (declaredSize > this.limits.fileBytes) {
      this.contents.problems.push({ file: path, line: 0, message: `larger than ${mb(this.limits.fileBytes)}: not a ruleset; skipped` });
      return null;
    }
    return path;
  }

  /** An entry that is not a file (a link, a device): counted, never read. */
  skip(): void {
    this.count++;
    if (this.count > this.limits.files) throw new LibraryRefused(`more than ${this.limits.files.toLocaleString('en')} files: too many for one library`);
    this.contents.skipped++;
  }

  /** Keeps an admitted entry's bytes as text. */
  add(path: string, bytes: Uint8Array): void {
    try {
      this.contents.files.push({ path, text: this.decoder.decode(bytes) });
    } catch {
      this.contents.problems.push({ file: path, line: 0, message: 'not UTF-8 text; skipped' });
    }
  }
}

/** A relative path with `/` separators, or null when it is absolute or climbs with `..`. */
export function safePath(raw: string): string | null {
  const p = raw.replace(/\\/g, '/');
  if (p.startsWith('/') || /^[a-zA-Z]:/.test(p) || p.includes('\0')) return null;
  const parts = p.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.length === 0 || parts.some((s) => s === '..')) return null;
  return parts.join('/');
}

export type ArchiveKind = 'zip' | 'gzip' | 'tar';

export function archiveKind(bytes: Uint8Array): ArchiveKind | null {
  if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) return 'zip';
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
      if (archiveKind(tar) !== 'tar') throw new LibraryRefused('the .gz file does not hold a tar archive');
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
  const stream = new Gunzip((chunk, final) => {
    size += chunk.length;
    if (size > max) throw new LibraryRefused(`more than ${mb(max)} once unpacked: too large for one library`);
    chunks.push(chunk);
    if (final) ended = true;
  });
  const STEP = 64 * 1024;
  try {
    for (let off = 0; off < bytes.length; off += STEP) stream.push(bytes.subarray(off, Math.min(bytes.length, off + STEP)), off + STEP >= bytes.length);
  } catch (e) {
    if (e instanceof LibraryRefused) throw e;
    throw new LibraryRefused(`the .gz file is damaged (${e instanceof Error ? e.message : String(e)})`);
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

const u16 = (b: Uint8Array, at: number): number => (b[at] as number) | ((b[at + 1] as number) << 8);
const u32 = (b: Uint8Array, at: number): number => (u16(b, at) | (u16(b, at + 2) << 16)) >>> 0;

interface ZipEntry {
  name: string;
  path: string;
  method: number;
  flags: number;
  compressed: number;
  size: number;
  /** Where its compressed data lies in the archive. */
  start: number;
  end: number;
}

/**
 * The entries of a zip's central directory, each admitted by `collector` (declared sizes are
 * only a first check). Refuses entries whose data overlap: a real archive stores each entry's
 * data once, while a zip bomb points many entries at the same compressed bytes.
 */
function zipEntries(bytes: Uint8Array, collector: EntryCollector): ZipEntry[] {
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (u32(bytes, i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new LibraryRefused('the .zip file is damaged (no end of central directory)');
  const count = u16(bytes, eocd + 10);
  const cdSize = u32(bytes, eocd + 12);
  let at = u32(bytes, eocd + 16);
  if (count === 0xffff || at === 0xffffffff || cdSize === 0xffffffff) throw new LibraryRefused('the .zip file uses zip64: too large for one library');
  if (at + cdSize > eocd) throw new LibraryRefused('the .zip file is damaged (central directory out of bounds)');
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 46 > eocd || u32(bytes, at) !== 0x02014b50) throw new LibraryRefused('the .zip file is damaged (bad central directory)');
    const flags = u16(bytes, at + 8);
    const method = u16(bytes, at + 10);
    const compressed = u32(bytes, at + 20);
    const size = u32(bytes, at + 24);
    const nameLength = u16(bytes, at + 28);
    const next = at + 46 + nameLength + u16(bytes, at + 30) + u16(bytes, at + 32);
    const local = u32(bytes, at + 42);
    const rawName = bytes.subarray(at + 46, at + 46 + nameLength);
    const name = (flags & 0x800) !== 0 ? new TextDecoder().decode(rawName) : String.fromCharCode(...rawName);
    at = next;
    if (name.endsWith('/')) continue;
    const path = collector.admit(name, size);
    if (path === null) continue;
    if (local + 30 > bytes.length || u32(bytes, local) !== 0x04034b50) throw new LibraryRefused(`the .zip file is damaged (${name}: bad local header)`);
    const start = local + 30 + u16(bytes, local + 26) + u16(bytes, local + 28);
    const end = start + compressed;
    if (end > bytes.length) throw new LibraryRefused(`the .zip file is damaged (${name} runs past the end of the file)`);
    entries.push({ name, path, method, flags, compressed, size, start: local, end });
  }
  const byStart = [...entries].sort((a, b) => a.start - b.start);
  for (let i = 1; i < byStart.length; i++) {
    const prev = byStart[i - 1] as ZipEntry;
    const entry = byStart[i] as ZipEntry;
    if (entry.start < prev.end) throw new LibraryRefused(`the .zip file is not a plain archive: ${prev.name} and ${entry.name} share their data (a zip bomb?)`);
  }
  return entries;
}

/**
 * Reads a zip with work bounded by real bytes and time, not by what it declares: only admitted
 * entries are inflated, each streamed and stopped as soon as it produces more than its declared
 * size (so the total stays within what `admit` counted), and the whole read stops at the
 * time limit.
 */
function readZip(bytes: Uint8Array, collector: EntryCollector): void {
  const deadline = Date.now() + (collector.limits.timeMs ?? LIBRARY_LIMITS.timeMs);
  const overTime = (): void => {
    if (Date.now() > deadline)
      throw new LibraryRefused(`reading the .zip file took longer than ${Math.round((collector.limits.timeMs ?? LIBRARY_LIMITS.timeMs) / 1000)} s`);
  };
  for (const entry of zipEntries(bytes, collector)) {
    overTime();
    const dataStart = entry.start + 30 + u16(bytes, entry.start + 26) + u16(bytes, entry.start + 28);
    const data = bytes.subarray(dataStart, dataStart + entry.compressed);
    if ((entry.flags & 1) !== 0) {
      collector.contents.problems.push({ file: entry.path, line: 0, message: 'encrypted; skipped' });
      continue;
    }
    if (entry.method === 0) {
      if (entry.compressed !== entry.size) throw new LibraryRefused(`the .zip file is damaged (${entry.name}: stored size differs from its declared size)`);
      collector.add(entry.path, data.slice());
      continue;
    }
    if (entry.method !== 8) {
      collector.contents.problems.push({ file: entry.path, line: 0, message: `compressed with method ${entry.method}, which is not supported; skipped` });
      continue;
    }
    const out = new Uint8Array(entry.size);
    let produced = 0;
    let ended = false;
    const inflate = new Inflate((chunk, final) => {
      if (produced + chunk.length > entry.size)
        throw new LibraryRefused(`the .zip file is damaged or hostile: ${entry.name} expands past the ${entry.size} bytes it declares`);
      out.set(chunk, produced);
      produced += chunk.length;
      if (final) ended = true;
    });
    const STEP = 16 * 1024;
    try {
      for (let off = 0; off < data.length && !ended; off += STEP) {
        inflate.push(data.subarray(off, Math.min(data.length, off + STEP)), off + STEP >= data.length);
        overTime();
      }
    } catch (e) {
      if (e instanceof LibraryRefused) throw e;
      throw new LibraryRefused(`the .zip file is damaged (${entry.name}: ${e instanceof Error ? e.message : String(e)})`);
    }
    if (!ended || produced !== entry.size) throw new LibraryRefused(`the .zip file is damaged (${entry.name} is cut short)`);
    collector.add(entry.path, out);
  }
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
  if (((bytes[start] as number) & 0x80) !== 0) throw new LibraryRefused(`the tar archive gives a ${what} in binary form, too large for a ruleset library`);
  const text = ascii(bytes, start, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new LibraryRefused(`the tar archive is damaged (a ${what} is not a number)`);
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
    if (sum !== stored) throw new LibraryRefused(`the tar archive is damaged (bad header at byte ${off})`);
    const size = octal(header, 124, 12, 'size');
    const type = String.fromCharCode(header[156] as number);
    const prefix = ascii(header, 345, 155);
    const name = (prefix === '' ? '' : `${prefix}/`) + ascii(header, 0, 100);
    const dataStart = off + 512;
    const isFile = type === '0' || type === '\0' || type === '7';
    // Counted against the limits first, so a huge declared size is refused as too large.
    const path = isFile ? collector.admit(name, size) : null;
    if (dataStart + size > bytes.length) throw new LibraryRefused(`the tar archive is cut short (${name} declares a size of ${size}, more than is left)`);
    if (isFile) {
      if (path !== null) collector.add(path, bytes.subarray(dataStart, dataStart + size));
    } else if (type !== '5' && type !== 'x' && type !== 'g' && type !== 'L' && type !== 'K') {
      // Links, devices, fifos: never followed.
      collector.skip();
    }
    off = dataStart + Math.ceil(size / 512) * 512;
  }
}
