import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Diagnostic } from '@httpsify/engine';

/**
 * A baseline: the findings a repository has accepted, per file content. Findings are keyed by
 * the SHA-256 of the file's bytes, so editing a file drops its entry and the file is checked in
 * full again (as EFF's ruleset-whitelist.csv did). `check` and `test` keep separate sections of
 * the same file, so each can be rewritten without touching the other's.
 */
export const DEFAULT_BASELINE = 'httpsify-baseline.json';

export type BaselineSection = 'check' | 'test';

interface BaselineEntry {
  /** The file's path when the baseline was written: for people only, matching uses the hash. */
  file: string;
  /** `code@line:column`, one per finding (repeated when a code is found twice at one place). */
  findings: string[];
}

type BaselineData = { version: 1 } & Partial<
  Record<BaselineSection, Record<string, BaselineEntry>>
>;

const keyOf = (d: Diagnostic): string => `${d.code}@${d.line}:${d.column}`;

/**
 * Where the baseline is: a path given with --baseline as it is; the default name in the current
 * directory or, as linters find their configuration, in the nearest parent folder that has one,
 * up to the repository's root (a folder with .git). Not found: the current directory's name.
 */
export function findBaseline(path: string): string {
  if (path !== DEFAULT_BASELINE || existsSync(path)) return path;
  for (let dir = process.cwd(); ;) {
    const candidate = join(dir, DEFAULT_BASELINE);
    if (existsSync(candidate)) return relative(process.cwd(), candidate);
    const parent = dirname(dir);
    if (parent === dir || existsSync(join(dir, '.git'))) return path;
    dir = parent;
  }
}

/**
 * Whether a baseline entry is about a file this run covers: one of the files, or an `*.xml` in
 * one of the directories (not recursive) it was given. Entry paths are relative to the
 * baseline's folder.
 */
function coveredBy(
  baselinePath: string,
  scope: readonly string[],
  hashes: ReadonlyMap<string, string>,
): (hash: string, entry: BaselineEntry) => boolean {
  const base = dirname(resolve(baselinePath));
  const dirs = new Set(
    scope
      .filter((p) => statSync(p, { throwIfNoEntry: false })?.isDirectory() === true)
      .map((p) => resolve(p)),
  );
  const files = new Set([...scope, ...hashes.keys()].map((f) => resolve(f)));
  const current = new Set(hashes.values());
  return (hash, entry) => {
    const file = resolve(base, entry.file);
    return (
      current.has(hash) || files.has(file) || (dirs.has(dirname(file)) && file.endsWith('.xml'))
    );
  };
}

/** Reads a baseline; null when the file does not exist. A malformed one is an error naming it. */
export function readBaseline(path: string): BaselineData | null {
  if (!existsSync(path)) return null;
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path}: not a baseline file: ${(err as Error).message}`);
  }
  const fail = (what: string): never => {
    throw new Error(
      `${path}: not a baseline file: ${what} (write a new one with --write-baseline)`,
    );
  };
  if (typeof data !== 'object' || data === null || (data as { version?: unknown }).version !== 1)
    fail('expected {"version": 1, …}');
  for (const section of ['check', 'test'] as const) {
    const entries = (data as Record<string, unknown>)[section];
    if (entries === undefined) continue;
    if (typeof entries !== 'object' || entries === null) fail(`"${section}" is not an object`);
    for (const [hash, entry] of Object.entries(entries as Record<string, unknown>)) {
      if (!/^[0-9a-f]{64}$/.test(hash))
        fail(`"${section}" key "${hash}" is not a SHA-256 hex digest`);
      const e = entry as Partial<BaselineEntry> | null;
      if (
        typeof e !== 'object' ||
        e === null ||
        typeof e.file !== 'string' ||
        !Array.isArray(e.findings) ||
        !e.findings.every((f) => typeof f === 'string')
      ) {
        fail(`"${section}"."${hash}" must be {"file": string, "findings": [string…]}`);
      }
    }
  }
  return data as BaselineData;
}

export interface BaselineFilter {
  kept: Diagnostic[];
  /** Findings the baseline hid, and in how many files. */
  hidden: number;
  hiddenFiles: number;
  /**
   * Baseline entries about files this run covers whose hash matches none of them (edited or
   * removed since); entries of files outside the run are not counted.
   */
  stale: number;
}

/** Hides the findings that the baseline lists for the current content of their file. */
export function filterByBaseline(
  diagnostics: readonly Diagnostic[],
  hashes: ReadonlyMap<string, string>,
  baseline: BaselineData | null,
  section: BaselineSection,
  /** The baseline's path and the paths the run was given, for `stale`. */
  where: { baseline: string; scope: readonly string[] },
): BaselineFilter {
  const entries = baseline?.[section];
  if (entries === undefined) return { kept: [...diagnostics], hidden: 0, hiddenFiles: 0, stale: 0 };
  const remaining = new Map<string, Map<string, number>>();
  const kept: Diagnostic[] = [];
  const files = new Set<string>();
  let hidden = 0;
  for (const d of diagnostics) {
    const hash = hashes.get(d.file);
    const entry = hash === undefined ? undefined : entries[hash];
    if (entry === undefined) {
      kept.push(d);
      continue;
    }
    let left = remaining.get(d.file);
    if (left === undefined) {
      left = new Map();
      for (const f of entry.findings) left.set(f, (left.get(f) ?? 0) + 1);
      remaining.set(d.file, left);
    }
    const n = left.get(keyOf(d)) ?? 0;
    if (n > 0) {
      left.set(keyOf(d), n - 1);
      hidden++;
      files.add(d.file);
    } else {
      kept.push(d);
    }
  }
  const current = new Set(hashes.values());
  const covered = coveredBy(where.baseline, where.scope, hashes);
  const stale = Object.entries(entries).filter(
    ([h, entry]) => !current.has(h) && covered(h, entry),
  ).length;
  return { kept, hidden, hiddenFiles: files.size, stale };
}

/**
 * Writes the `section` of the baseline from the current findings, keeping the other section
 * as it was. Only files with findings get an entry. Only the entries of the files this run
 * covered are replaced: `scope` is the paths it was given (files, and directories of `*.xml`,
 * not recursive), and an entry whose file lies elsewhere (`check rules/sub` after a baseline
 * of `rules`) is kept as it was.
 */
export function writeBaseline(
  path: string,
  section: BaselineSection,
  diagnostics: readonly Diagnostic[],
  hashes: ReadonlyMap<string, string>,
  scope: readonly string[],
): { files: number; findings: number; kept: number } {
  const previous = readBaseline(path);
  const entries: Record<string, BaselineEntry> = {};
  const inScope = coveredBy(path, scope, hashes);
  for (const [hash, entry] of Object.entries(previous?.[section] ?? {}))
    if (!inScope(hash, entry)) entries[hash] = entry;
  const kept = Object.keys(entries).length;
  let findings = 0;
  const byFile = new Map<string, Diagnostic[]>();
  for (const d of diagnostics) {
    if (!hashes.has(d.file)) continue;
    const list = byFile.get(d.file) ?? [];
    list.push(d);
    byFile.set(d.file, list);
  }
  for (const file of [...byFile.keys()].sort()) {
    const hash = hashes.get(file) as string;
    const list = (byFile.get(file) as Diagnostic[]).map(keyOf).sort();
    if (entries[hash] !== undefined) continue; // byte-identical files share one entry
    // Relative to the baseline's folder, which may be a parent of the current one.
    entries[hash] = { file: relative(dirname(resolve(path)), resolve(file)), findings: list };
    findings += list.length;
  }
  const data: BaselineData = { version: 1, check: previous?.check, test: previous?.test };
  data[section] = Object.fromEntries(
    Object.entries(entries).sort(([, a], [, b]) =>
      a.file < b.file ? -1 : a.file > b.file ? 1 : 0,
    ),
  );
  // Temp file and rename: an interrupted write leaves the old baseline, never half of one.
  const temp = `${path}.tmp-${process.pid}`;
  writeFileSync(temp, `${JSON.stringify(data, null, 1)}\n`);
  renameSync(temp, path);
  return { files: Object.keys(entries).length - kept, findings, kept };
}
