import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { isBundle, listRulesetFiles } from '@httpsify/engine/node';

/**
 * Expands command-line paths (directories of `*.xml` or single files) into files, in file-name
 * order per directory. A directory without any `*.xml` is an error, as it is for `--rules`.
 */
export function expandRulesetPaths(paths: readonly string[]): string[] {
  const files: string[] = [];
  for (const path of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new Error(`${path}: ${code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`);
    }
    if (!isDir) {
      files.push(path);
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
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new Error(`${file}: cannot read: ${(err as Error).message}`);
  }
  // Bundles keep no tests, comments or source positions: authors' checks need the XML.
  if (isBundle(bytes)) throw new Error(`${file}: a compiled bundle, not ruleset XML: give the *.xml rulesets it was compiled from`);
  return { text: bytes.toString('utf8'), sha256: createHash('sha256').update(bytes).digest('hex') };
}
