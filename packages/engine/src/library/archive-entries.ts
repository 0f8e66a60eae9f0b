/**
 * Reading a ruleset library the user picked: a folder's files, a .zip, a .tar or a .tar.gz.
 * Every byte is hostile: sizes are checked against limits before and while anything is
 * expanded, names may not climb out of the library (`..`, absolute paths), and only `.xml`
 * files are kept (others are counted, not read). Problems with one entry are reported with
 * its name and the rest goes on; only a limit or a damaged container stops the whole read.
 * This file holds the limits and the collector every entry passes; the containers are read by
 * archive.ts (tar, gzip) and archive-zip.ts.
 */
import { decodeUtf8, NotUtf8 } from './utf8.js';

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

/** Megabytes, for messages. */
export const mb = (n: number) => `${Math.round(n / (1024 * 1024))} MB`;

/** Collects entries under the limits; shared by archives and folders. */
export class EntryCollector {
  readonly contents: ArchiveContents = { files: [], skipped: 0, problems: [] };
  private total = 0;
  private count = 0;

  constructor(readonly limits: Limits = LIBRARY_LIMITS) {}

  /** Counts an entry against the limits before its bytes are expanded. Returns whether to read it. */
  admit(rawPath: string, declaredSize: number): string | null {
    this.count++;
    if (this.count > this.limits.files)
      throw new LibraryRefused(
        `more than ${this.limits.files.toLocaleString('en')} files: too many for one library`,
      );
    if (declaredSize < 0 || !Number.isFinite(declaredSize))
      throw new LibraryRefused(`${rawPath}: the archive gives an impossible size`);
    this.total += declaredSize;
    if (this.total > this.limits.totalBytes)
      throw new LibraryRefused(
        `more than ${mb(this.limits.totalBytes)} once unpacked: too large for one library`,
      );
    const path = safePath(rawPath);
    if (path === null) {
      this.contents.problems.push({
        file: rawPath,
        line: 0,
        message: 'the name leads outside the library (".." or an absolute path); skipped',
      });
      return null;
    }
    if (!path.toLowerCase().endsWith('.xml')) {
      this.contents.skipped++;
      return null;
    }
    if (declaredSize > this.limits.fileBytes) {
      this.contents.problems.push({
        file: path,
        line: 0,
        message: `larger than ${mb(this.limits.fileBytes)}: not a ruleset; skipped`,
      });
      return null;
    }
    return path;
  }

  /** An entry that is not a file (a link, a device): counted, never read. */
  skip(): void {
    this.count++;
    if (this.count > this.limits.files)
      throw new LibraryRefused(
        `more than ${this.limits.files.toLocaleString('en')} files: too many for one library`,
      );
    this.contents.skipped++;
  }

  /** Keeps an admitted entry's bytes as text. */
  add(path: string, bytes: Uint8Array): void {
    try {
      this.contents.files.push({ path, text: decodeUtf8(bytes) });
    } catch (err) {
      if (!(err instanceof NotUtf8)) throw err;
      this.contents.problems.push({
        file: path,
        line: err.line,
        message: 'not UTF-8 text; skipped',
      });
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
