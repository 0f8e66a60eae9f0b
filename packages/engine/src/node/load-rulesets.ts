import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { MAGIC } from '../bundle/format.js';
import { Engine, type EngineOptions } from '../match/engine.js';
import type { Diagnostic, Ruleset } from '../model/ruleset.js';
import { parseRulesetXml } from '../parse/xml-ruleset.js';
import { compileBundle } from '../bundle/write.js';
import { checkRulesetRegexes } from '../regex/ruleset-regexes.js';
import { archiveKind, readArchive } from '../library/archive.js';
import {
  EntryCollector,
  LIBRARY_LIMITS,
  LibraryRefused,
  type Limits,
} from '../library/archive-entries.js';
import { decodeUtf8, NotUtf8 } from '../library/utf8.js';
import { FileTooLarge, readRegularFile } from './read-file.js';

export type LoadProgress = (step: 'read' | 'compile', done: number, total: number) => void;

/** A file from disk is never our own packaged build: its regex verdicts are never trusted. */
export interface LoadOptions extends Omit<EngineOptions, 'trustBundledRegexVerdicts'> {
  /**
   * Judge every regex now (`compile`, `publish`): rulesets with a refused pattern are left out
   * with an `unsafe-regex` error. Without it (`rewrite`), the engine judges each pattern when it
   * first runs it and reports refusals through Engine.takeRegexRefusals.
   */
  checkRegexes?: boolean;
  /** Recorded in the bundle header when the rulesets are compiled here. */
  timestamp?: number;
  /** Bounds on one library (a folder, an archive); default LIBRARY_LIMITS, as the extension's import. */
  limits?: Limits;
  /**
   * For a progress display: `read` after each file of a folder or entry of an archive is parsed
   * (`done` of `total` in that folder or archive; each path starts again at 1), then `compile`
   * once, as the rulesets that loaded (`total`) are compiled into one bundle.
   */
  onProgress?: LoadProgress;
}

export interface LoadedRulesets {
  engine: Engine;
  /** The compiled form the engine runs on (the file's bytes when a single bundle was given). */
  bundle: Uint8Array;
  /** Parsed rulesets that loaded (empty when the input was a single compiled bundle). */
  rulesets: Ruleset[];
  diagnostics: Diagnostic[];
}

/** Directory of the rulesets bundled with httpsify (packages/engine/rulesets). */
export function defaultRulesetsDir(): string {
  // Found from the package root, not from this file: the code runs from src, dist or the
  // Node build's chunks (dist/node-bundle), each at its own depth.
  return resolve(
    dirname(createRequire(import.meta.url).resolve('@httpsify/engine/package.json')),
    'rulesets',
  );
}

/**
 * Unix time of the bundled default rulesets (rulesets/TIMESTAMP, bumped whenever they change).
 * An update channel that replaces the defaults must not install anything older.
 */
export function defaultRulesetsTimestamp(): number {
  const file = join(defaultRulesetsDir(), 'TIMESTAMP');
  const text = readFileSync(file, 'utf8').trim();
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value))
    throw new Error(`${file}: expected unix seconds, found ${JSON.stringify(text)}`);
  return value;
}

export function isBundle(bytes: Uint8Array): boolean {
  if (bytes.length < MAGIC.length) return false;
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC.charCodeAt(i)) return false;
  return true;
}

/** The `*.xml` files of a directory in the order the reference build used (NFC file name order). */
export function listRulesetFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.xml'))
    .map((f) => ({ f, key: f.normalize('NFC') }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ f }) => join(dir, f));
}

/** A diagnostic for a file that could not be read or used at all. */
const readError = (file: string, message: string, line = 1): Diagnostic => ({
  severity: 'error',
  code: 'read-error',
  message,
  file,
  line,
  column: 1,
});

/** Reads one `*.xml` file of a folder through the one door (read-file.ts), within the folder's limits. */
function readXmlFile(
  file: string,
  rulesets: Ruleset[],
  diagnostics: Diagnostic[],
  collector: EntryCollector,
): void {
  let bytes: Uint8Array | null = null;
  let size: number;
  try {
    bytes = readRegularFile(file, collector.limits.fileBytes);
    size = bytes.length;
  } catch (err) {
    if (!(err instanceof FileTooLarge)) {
      diagnostics.push(readError(file, `cannot read: ${(err as Error).message}`));
      return;
    }
    // Left to the collector, which reports it as an archive's oversized entry.
    size = err.size;
  }
  addXml(file, bytes, size, rulesets, diagnostics, collector);
}

/**
 * Counts a file's bytes against the library limits (files, bytes), as an archive entry is,
 * then parses them. Counted as read, not as stat said, so a file cannot grow past the limits.
 */
function addXml(
  file: string,
  bytes: Uint8Array | null,
  size: number,
  rulesets: Ruleset[],
  diagnostics: Diagnostic[],
  collector: EntryCollector,
): void {
  let xml: string;
  try {
    if (
      collector.admit(
        basename(file).endsWith('.xml') ? basename(file) : `${basename(file)}.xml`,
        size,
      ) === null ||
      bytes === null
    ) {
      const problem = collector.contents.problems.pop();
      diagnostics.push(readError(file, problem?.message ?? 'skipped'));
      return;
    }
    // The BOM is kept, as before: the parser skips it.
    xml = decodeUtf8(bytes, { keepBom: true });
  } catch (err) {
    if (err instanceof LibraryRefused) throw new Error(`cannot read rulesets: ${err.message}`);
    if (err instanceof NotUtf8) {
      diagnostics.push(readError(file, err.message, err.line));
      return;
    }
    throw err;
  }
  const parsed = parseRulesetXml(xml, file);
  diagnostics.push(...parsed.diagnostics);
  if (parsed.ruleset !== null) rulesets.push(parsed.ruleset);
}

/**
 * The rulesets of a .tar, .tar.gz or .zip, read by the same reader and within the same limits as
 * the extension's library import (@httpsify/engine/library). Each is located as
 * `ARCHIVE/PATH/IN/ARCHIVE.xml`; entries that cannot be used are reported, the rest load.
 */
function readArchiveFile(
  file: string,
  bytes: Uint8Array,
  rulesets: Ruleset[],
  diagnostics: Diagnostic[],
  limits: Limits,
  onProgress?: LoadProgress,
): void {
  let contents;
  try {
    contents = readArchive(bytes, limits);
  } catch (err) {
    if (err instanceof LibraryRefused) throw new Error(`${file}: ${err.message}`);
    throw err;
  }
  for (const p of contents.problems) {
    diagnostics.push({
      severity: 'error',
      code: 'read-error',
      message: p.message,
      file: `${file}/${p.file}`,
      line: Math.max(1, p.line),
      column: 1,
    });
  }
  const entries = contents.files
    .map((f) => ({ f, key: f.path.normalize('NFC') }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const [i, { f }] of entries.entries()) {
    const parsed = parseRulesetXml(f.text, `${file}/${f.path}`);
    diagnostics.push(...parsed.diagnostics);
    if (parsed.ruleset !== null) rulesets.push(parsed.ruleset);
    onProgress?.('read', i + 1, entries.length);
  }
}

/**
 * Whether a path given as rulesets is a directory (else a file: XML, bundle or archive); a path
 * that cannot be read is an error that names it.
 */
export function isRulesetDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file or directory' : (err as Error).message;
    throw new Error(`cannot read rulesets from ${path}: ${why}`);
  }
}

/**
 * Reads rulesets from directories of `*.xml`, single XML files, compiled bundles and archives
 * (.tar, .tar.gz, .zip: see readArchiveFile), in the order given. Broken files are reported in `diagnostics` and left out; the rest load.
 * A single bundle is used as it is (zero-copy); anything else is parsed and compiled.
 */
export function loadRulesets(paths: readonly string[], options: LoadOptions = {}): LoadedRulesets {
  const rulesets: Ruleset[] = [];
  const diagnostics: Diagnostic[] = [];
  const bundles: { file: string; bytes: Uint8Array }[] = [];
  const limits = options.limits ?? LIBRARY_LIMITS;
  for (const path of paths) {
    if (isRulesetDirectory(path)) {
      // One folder is one library: the same limits as one archive.
      const collector = new EntryCollector(limits);
      const files = listRulesetFiles(path);
      for (const [i, file] of files.entries()) {
        readXmlFile(file, rulesets, diagnostics, collector);
        options.onProgress?.('read', i + 1, files.length);
      }
      continue;
    }
    let bytes: Buffer;
    try {
      // A compiled bundle of the whole corpus is a few MB; anything past the library's bound is not rulesets.
      bytes = readRegularFile(path, limits.totalBytes);
    } catch (err) {
      throw new Error(`cannot read rulesets from ${path}: ${(err as Error).message}`);
    }
    if (isBundle(bytes))
      bundles.push({
        file: path,
        bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      });
    else if (archiveKind(bytes) !== null)
      readArchiveFile(path, bytes, rulesets, diagnostics, limits, options.onProgress);
    else addXml(path, bytes, bytes.length, rulesets, diagnostics, new EntryCollector(limits));
  }
  if (bundles.length === 1 && rulesets.length === 0 && diagnostics.length === 0) {
    const only = bundles[0] as { file: string; bytes: Uint8Array };
    const engine = openBundle(only.file, only.bytes, options);
    if (options.checkRegexes !== true)
      return { engine, bundle: only.bytes, rulesets: [], diagnostics };
    const decoded = Array.from({ length: engine.rulesetCount }, (_, id) =>
      withFile(engine.ruleset(id), only.file),
    );
    const checked = checkRulesetRegexes(decoded);
    if (checked.diagnostics.length === 0)
      return { engine, bundle: only.bytes, rulesets: [], diagnostics };
  }
  const all = [...rulesets];
  for (const { file, bytes } of bundles) {
    const engine = openBundle(file, bytes, options);
    for (let id = 0; id < engine.rulesetCount; id++) all.push(withFile(engine.ruleset(id), file));
  }
  let kept = all;
  if (options.checkRegexes === true) {
    const checked = checkRulesetRegexes(all);
    diagnostics.push(...checked.diagnostics);
    kept = checked.rulesets;
  }
  options.onProgress?.('compile', 0, kept.length);
  const bundle = compileBundle(
    kept,
    options.timestamp === undefined ? {} : { timestamp: options.timestamp },
  );
  const parsedKept = kept.filter((rs) => rulesets.includes(rs));
  // Compiled here, in this process: nothing to verify.
  return {
    engine: new Engine(bundle, { ...options, verify: 'trusted', trustBundledRegexVerdicts: false }),
    bundle,
    rulesets: parsedKept,
    diagnostics,
  };
}

/** A ruleset decoded from a bundle, located at the bundle file for diagnostics. */
function withFile(ruleset: Ruleset, file: string): Ruleset {
  return { ...ruleset, loc: { file, line: 1, column: 1 } };
}

function openBundle(file: string, bytes: Uint8Array, options: LoadOptions): Engine {
  try {
    // Whoever wrote the file could call any regex safe: its patterns are judged here.
    return new Engine(bytes, { ...options, trustBundledRegexVerdicts: false });
  } catch (err) {
    throw new Error(`${basename(file)}: ${(err as Error).message}`);
  }
}
