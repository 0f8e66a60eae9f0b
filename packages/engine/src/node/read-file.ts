import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { mb } from '../library/archive-entries.js';

/**
 * The one door through which rulesets, bundles and channel files are read from disk. A path
 * is hostile: it may name (or link to) /dev/zero, a FIFO or a directory, whose stat size says
 * nothing, or a file that grows after it was measured. So only a regular file is read (checked
 * on the open descriptor, after symlinks, so it cannot be swapped in between), and never more
 * than the caller's bound, whatever stat said. Messages give the reason only: callers name
 * the file in their own words.
 */
export class FileRefused extends Error {}

/** The file holds more than the caller's bound. `size` is what it held when it was refused. */
export class FileTooLarge extends FileRefused {
  constructor(
    readonly size: number,
    readonly maxBytes: number,
  ) {
    super(`more than ${maxBytes >= 1024 * 1024 ? mb(maxBytes) : `${maxBytes} bytes`}`);
  }
}

// Opening a FIFO for reading waits for a writer; non-blocking, the open returns at once and the
// check below refuses it. Regular files ignore the flag. (Windows has no FIFOs and no flag.)
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** A descriptor of `file` opened for reading, if it is a regular file; the caller closes it. */
export function openRegularFile(file: string): { fd: number; size: number } {
  const fd = openSync(file, OPEN_FLAGS);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new FileRefused('not a regular file');
    return { fd, size: stat.size };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** The bytes of regular file `file`, at most `maxBytes` of them (else FileTooLarge). */
export function readRegularFile(file: string, maxBytes: number): Buffer {
  const { fd, size } = openRegularFile(file);
  try {
    if (size > maxBytes) throw new FileTooLarge(size, maxBytes);
    // One byte past the bound tells a file that grew after fstat from one that ends there.
    let buf = Buffer.allocUnsafe(size + 1);
    let length = 0;
    for (;;) {
      if (length === buf.length) {
        if (length > maxBytes) throw new FileTooLarge(length, maxBytes);
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1));
        buf.copy(bigger, 0, 0, length);
        buf = bigger;
      }
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > maxBytes) throw new FileTooLarge(length, maxBytes);
    return buf.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}
