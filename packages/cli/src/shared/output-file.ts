import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { writeFileAtomic } from '@httpsify/engine/node';

/**
 * The one door for files a command writes (`compile -o`, `dnr -o`, `keygen --out`): the
 * place is checked before any work starts, so a typo costs nothing and leaves nothing behind,
 * and a failure while writing is told in plain words, never as errno text with a temporary
 * file's name.
 */

/**
 * Throws a plain error when `path` cannot be written: its directory is missing, or it is a
 * directory. `given` is the option and value as the user wrote them, e.g. `-o rules.bundle`.
 */
export function checkOutputPath(path: string, given: string): void {
  const dir = dirname(resolve(path));
  const parent = statSync(dir, { throwIfNoEntry: false });
  if (parent === undefined) throw new Error(`${given}: the directory ${dirname(path)} does not exist (create it first)`);
  if (!parent.isDirectory()) throw new Error(`${given}: ${dirname(path)} is not a directory`);
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory() === true) throw new Error(`${given}: ${path} is a directory; give the name of a file to write`);
}

/** The plain words for a failed write of `path`. */
export function outputFileError(path: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? `the directory ${dirname(path)} does not exist`
      : code === 'EISDIR'
        ? 'is a directory'
        : code === 'ENOTDIR'
          ? 'a part of the path is not a directory'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : code === 'ENOSPC'
              ? 'the disk is full'
              : code === 'EROFS'
                ? 'read-only file system'
                : code === 'EEXIST'
                  ? 'already exists'
                  : (err as Error).message;
  return new Error(`cannot write ${path}: ${why}`);
}

/** Writes `path` atomically (a failed run leaves the old file, never half of one); errors in plain words. */
export async function writeOutputFile(path: string, data: Uint8Array | string): Promise<void> {
  try {
    await writeFileAtomic(path, data);
  } catch (err) {
    throw outputFileError(path, err);
  }
}
