/** The .zip reader: our own central-directory reader, with fflate's streaming inflate. */
import { fflateModule } from './fflate-module.js';
import { type EntryCollector, LIBRARY_LIMITS, LibraryRefused } from './archive-entries.js';

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
  if (count === 0xffff || at === 0xffffffff || cdSize === 0xffffffff)
    throw new LibraryRefused('the .zip file uses zip64: too large for one library');
  if (at + cdSize > eocd)
    throw new LibraryRefused('the .zip file is damaged (central directory out of bounds)');
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 46 > eocd || u32(bytes, at) !== 0x02014b50)
      throw new LibraryRefused('the .zip file is damaged (bad central directory)');
    const flags = u16(bytes, at + 8);
    const method = u16(bytes, at + 10);
    const compressed = u32(bytes, at + 20);
    const size = u32(bytes, at + 24);
    const nameLength = u16(bytes, at + 28);
    const next = at + 46 + nameLength + u16(bytes, at + 30) + u16(bytes, at + 32);
    const local = u32(bytes, at + 42);
    const rawName = bytes.subarray(at + 46, at + 46 + nameLength);
    const name =
      (flags & 0x800) !== 0 ? new TextDecoder().decode(rawName) : String.fromCharCode(...rawName);
    at = next;
    if (name.endsWith('/')) continue;
    const path = collector.admit(name, size);
    if (path === null) continue;
    if (local + 30 > bytes.length || u32(bytes, local) !== 0x04034b50)
      throw new LibraryRefused(`the .zip file is damaged (${name}: bad local header)`);
    const start = local + 30 + u16(bytes, local + 26) + u16(bytes, local + 28);
    const end = start + compressed;
    if (end > bytes.length)
      throw new LibraryRefused(`the .zip file is damaged (${name} runs past the end of the file)`);
    entries.push({ name, path, method, flags, compressed, size, start: local, end });
  }
  const byStart = [...entries].sort((a, b) => a.start - b.start);
  for (let i = 1; i < byStart.length; i++) {
    const prev = byStart[i - 1] as ZipEntry;
    const entry = byStart[i] as ZipEntry;
    if (entry.start < prev.end)
      throw new LibraryRefused(
        `the .zip file is not a plain archive: ${prev.name} and ${entry.name} share their data (a zip bomb?)`,
      );
  }
  return entries;
}

/**
 * Reads a zip with work bounded by real bytes and time, not by what it declares: only admitted
 * entries are inflated, each streamed and stopped as soon as it produces more than its declared
 * size (so the total stays within what `admit` counted), and the whole read stops at the
 * time limit.
 */
export function readZip(bytes: Uint8Array, collector: EntryCollector): void {
  const deadline = Date.now() + (collector.limits.timeMs ?? LIBRARY_LIMITS.timeMs);
  const overTime = (): void => {
    if (Date.now() > deadline)
      throw new LibraryRefused(
        `reading the .zip file took longer than ${Math.round((collector.limits.timeMs ?? LIBRARY_LIMITS.timeMs) / 1000)} s`,
      );
  };
  for (const entry of zipEntries(bytes, collector)) {
    overTime();
    const dataStart =
      entry.start + 30 + u16(bytes, entry.start + 26) + u16(bytes, entry.start + 28);
    const data = bytes.subarray(dataStart, dataStart + entry.compressed);
    if ((entry.flags & 1) !== 0) {
      collector.contents.problems.push({
        file: entry.path,
        line: 0,
        message: 'encrypted; skipped',
      });
      continue;
    }
    if (entry.method === 0) {
      if (entry.compressed !== entry.size)
        throw new LibraryRefused(
          `the .zip file is damaged (${entry.name}: stored size differs from its declared size)`,
        );
      collector.add(entry.path, data.slice());
      continue;
    }
    if (entry.method !== 8) {
      collector.contents.problems.push({
        file: entry.path,
        line: 0,
        message: `compressed with method ${entry.method}, which is not supported; skipped`,
      });
      continue;
    }
    const out = new Uint8Array(entry.size);
    let produced = 0;
    let ended = false;
    const inflate = new (fflateModule().Inflate)((chunk, final) => {
      if (produced + chunk.length > entry.size)
        throw new LibraryRefused(
          `the .zip file is damaged or hostile: ${entry.name} expands past the ${entry.size} bytes it declares`,
        );
      out.set(chunk, produced);
      produced += chunk.length;
      if (final) ended = true;
    });
    const STEP = 16 * 1024;
    try {
      for (let off = 0; off < data.length && !ended; off += STEP) {
        inflate.push(
          data.subarray(off, Math.min(data.length, off + STEP)),
          off + STEP >= data.length,
        );
        overTime();
      }
    } catch (e) {
      if (e instanceof LibraryRefused) throw e;
      throw new LibraryRefused(
        `the .zip file is damaged (${entry.name}: ${e instanceof Error ? e.message : String(e)})`,
      );
    }
    if (!ended || produced !== entry.size)
      throw new LibraryRefused(`the .zip file is damaged (${entry.name} is cut short)`);
    collector.add(entry.path, out);
  }
}
