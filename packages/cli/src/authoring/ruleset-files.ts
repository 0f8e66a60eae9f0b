import { createHash } from 'node:crypto';
import { closeSync, readSync, statSync } from 'node:fs';
import {
  FileRefused,
  FileTooLarge,
  isBundle,
  listRulesetFiles,
  openRegularFile,
  readRegularFile,
} from '@httpsify/engine/node';
import {
  archiveKind,
  decodeUtf8,
  LIBRARY_LIMITS,
  LibraryRefused,
  NotUtf8,
  readArchive,
} from '@httpsify/engine/library';

/**
 * The rulesets of archives named on the command line, by the path they are shown under
 * (`ARCHIVE/PATH/IN/ARCHIVE.xml`): read once, by the library reader every verb shares, within
 * the extension's import limits.
 */
const fromArchives = new Map<string, string>();

/** Whether `file` starts like a .zip, .tar or .tar.gz (the first 512 bytes tell). */
function isArchive(file: string): boolean {
  const head = Buffer.alloc(512);
  let fd: number;
  try {
    // Through the rulesets' door: a FIFO or device is refused here, not waited on or read.
    fd = openRegularFile(file).fd;
  } catch (err) {
    throw new Error(`${file}: cannot read: ${(err as Error).message}`);
  }
  try {
    let read: number;
    try {
      read = readSync(fd, head, 0, head.length, 0);
    } catch (err) {
      // A regular file can still fail to read (EIO from /proc/self/mem): named like the others.
      throw new Error(`${file}: cannot read: ${(err as Error).message}`);
    }
    return archiveKind(head.subarray(0, read)) !== null;
  } finally {
    closeSync(fd);
  }
}

/** The `*.xml` entries of an archive, as shown paths; problems with entries are errors here. */
function expandArchive(file: string): string[] {
  let contents;
  try {
    contents = readArchive(readRegularFile(file, LIBRARY_LIMITS.totalBytes));
  } catch (err) {
    if (err instanceof FileTooLarge)
      throw new Error(`${file}: ${err.message}: too large for one library`);
    if (err instanceof LibraryRefused || err instanceof FileRefused)
      throw new Error(`${file}: ${err.message}`);
    throw err;
  }
  const problem = contents.problems[0];
  if (problem !== undefined) throw new Error(`${file}/${problem.file}: ${problem.message}`);
  const shown = contents.files
    .map((f) => ({ path: `${file}/${f.path}`, text: f.text }))
    .sort((a, b) => (a.path.normalize('NFC') < b.path.normalize('NFC') ? -1 : 1));
  if (shown.length === 0) throw new Error(`${file}: no *.xml rulesets in the archive`);
  for (const f of shown) fromArchives.set(f.path, f.text);
  return shown.map((f) => f.path);
}

/**
 * Expands command-line paths (directories of `*.xml`, archives of them, or single files) into
 * files, in file-name order per directory or archive. A directory without any `*.xml` is an error, as it is for `--rules`.
 */
export function expandRulesetPaths(paths: readonly string[]): string[] {
  const files: string[] = [];
  for (const path of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new Error(
        `${path}: ${code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`,
      );
    }
    if (!isDir) {
      files.push(...(isArchive(path) ? expandArchive(path) : [path]));
      continue;
    }
    const found = listRulesetFiles(path);
    // "0 files: 0 errors" would pass a CI job pointed at the wrong directory.
    if (found.length === 0) throw new Error(`${path}: no *.xml rulesets there`);
    files.push(...found);
  }
  return files;
}

/** Reads a ruleset file as UTF-8 text; errors name the file. A compiled bundle is refused by name. */
export function readRulesetFile(file: string): string {
  return readRulesetSource(file).text;
}

/** A ruleset file's text and the SHA-256 of its bytes (what a baseline entry is keyed by). */
export function readRulesetSource(file: string): { text: string; sha256: string } {
  const archived = fromArchives.get(file);
  if (archived !== undefined)
    return { text: archived, sha256: createHash('sha256').update(archived).digest('hex') };
  let bytes: Buffer;
  try {
    // The single-file bound of --rules: a whole bundle fits, so it is refused by name below.
    bytes = readRegularFile(file, LIBRARY_LIMITS.totalBytes);
  } catch (err) {
    throw new Error(`${file}: cannot read: ${(err as Error).message}`);
  }
  // Bundles keep no tests, comments or source positions: authors' checks need the XML.
  if (isBundle(bytes))
    throw new Error(
      `${file}: a compiled bundle, not ruleset XML: give the *.xml rulesets it was compiled from`,
    );
  let text: string;
  try {
    // The BOM stays: `check --fix` diffs show the file's lines as they are.
    text = decodeUtf8(bytes, { keepBom: true });
  } catch (err) {
    if (err instanceof NotUtf8) throw new Error(`${file}:${err.line}: ${err.message}`);
    throw err;
  }
  return { text, sha256: createHash('sha256').update(bytes).digest('hex') };
}
