import { mkdirSync, statSync } from 'node:fs';
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
  if (parent === undefined)
    throw new Error(`${given}: the directory ${dirname(path)} does not exist (create it first)`);
  if (!parent.isDirectory()) throw new Error(`${given}: ${dirname(path)} is not a directory`);
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory() === true)
    throw new Error(`${given}: ${path} is a directory; give the name of a file to write`);
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

/**
 * `-o, --output-file` of a report (`check`, `test`), checked before any work starts. As ESLint's,
 * missing directories are created (a CI job writes into a fresh `reports/`), but a directory,
 * or a file where a directory must be, is refused at once.
 */
export function checkReportPath(path: string, given: string): void {
  // ENOTDIR: a part of the path is a file; found below as the nearest part that exists.
  const stat = (p: string) => {
    try {
      return statSync(p, { throwIfNoEntry: false });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
      throw err;
    }
  };
  if (stat(path)?.isDirectory() === true)
    throw new Error(`${given}: ${path} is a directory; give the name of a file to write`);
  // The nearest part of the path that exists must be a directory for the rest to be created.
  let dir = dirname(resolve(path));
  let found = stat(dir);
  while (found === undefined && dirname(dir) !== dir) {
    dir = dirname(dir);
    found = stat(dir);
  }
  if (found !== undefined && !found.isDirectory())
    throw new Error(`${given}: ${dir} is not a directory`);
}

/** A report to `stream` (stdout), or to `outputFile` (its directories created) when one is given. */
export async function writeReport(
  text: string,
  outputFile: string | undefined,
  stream: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  if (outputFile === undefined) {
    stream.write(text);
    return;
  }
  try {
    mkdirSync(dirname(resolve(outputFile)), { recursive: true });
  } catch (err) {
    throw outputFileError(outputFile, err);
  }
  await writeOutputFile(outputFile, text);
}
