import {
  closeSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  realpathSync,
  writeSync,
} from 'node:fs';
import { createTwoFilesPatch } from 'diff';
import type { RequestSettings } from '../fetch-test/single-request.js';
import {
  DEFAULT_MAX_BYTES,
  DocumentError,
  encodeDocument,
  findUrls,
  readDocument,
  describeFsError,
  type LoadedDocument,
} from './document.js';
import { loadExcludes, matchingExclude, type ExcludePattern } from './exclude-patterns.js';
import { ignoredRanges, rangeAt, type IgnoredRange } from './inline-ignores.js';
import { MarkdownParser } from './markdown-parser.js';
import type { Occurrence } from './occurrence.js';
import { occurrencesFromTokens } from './scan-markdown.js';
import {
  applyFindings,
  lineStarts,
  planRewrites,
  position,
  type LinkFinding,
  type Rewriter,
} from './plan-rewrites.js';
import { UsageError } from './usage-error.js';
import { pairKey, verifyPairs } from './verify-links.js';
import { isWithin, walkDocuments } from './walk-files.js';

export { UsageError } from './usage-error.js';

export interface VerifySettings {
  settings: RequestSettings;
  concurrency: number;
  /** Called with the number of URL pairs to fetch, then once per pair done. */
  onStart?: (pairs: number) => void;
  onProgress?: () => void;
}

export interface LinksOptions {
  paths: readonly string[];
  mode: 'check' | 'fix';
  /** With `fix`: produce a unified diff instead of writing. */
  diff?: boolean;
  rewrite: Rewriter;
  upgradeAll?: boolean;
  verify?: VerifySettings | null;
  maxBytes?: number;
  /** Time one Markdown file may take to parse (default 60 s). */
  parseTimeoutMs?: number;
  /** `--exclude`: JavaScript regexes; a URL any of them matches (anywhere) is left alone. */
  exclude?: readonly string[];
  /** `--ignore-file`: more, one a line; default `.httpsifyignore` in `cwd` if present; null: none. */
  ignoreFile?: string | null;
  /** A run that finds no file to read passes (else a usage error, as in ESLint). */
  allowEmpty?: boolean;
  /** Where `.httpsifyignore` is looked for and `ignoreFile` resolved (default: the working directory). */
  cwd?: string;
}

/** A link left alone on purpose, counted so that a user sees the rule work. */
export interface ExcludedLink {
  file: string;
  line: number;
  column: number;
  url: string;
  context: string;
  /** The regex that matched, or the marker (`httpsify-ignore-next-line`...). */
  rule: string;
  /** Where the rule was written: `--exclude`, the ignore file's `path:line`, or the marker's `file:line`. */
  origin: string;
}

/** A file that could not be scanned or written: `error` for failures, `skipped` for files refused by design. */
export interface LinksProblem {
  path: string;
  severity: 'error' | 'skipped';
  message: string;
}

export interface LinksReport {
  scannedFiles: number;
  /** Every upgradable link; with --verify, `verified` says which are kept. */
  findings: LinkFinding[];
  /** Links that --exclude, the ignore file or a marker left alone: neither reported nor fixed. */
  excluded: ExcludedLink[];
  problems: LinksProblem[];
  /** Upgrades that could not be written in their place. */
  notes: string[];
  /** fix: files rewritten (or, with --diff, that would be). */
  changedFiles: string[];
  /** fix --diff: the unified diff of every changed file. */
  diff: string;
}

/** The findings `fix` applies and `check` fails on: all, or with --verify only the verified ones. */
export function applicable(report: { findings: readonly LinkFinding[] }): LinkFinding[] {
  return report.findings.filter((f) => f.verified !== false);
}

export async function runLinks(options: LinksOptions): Promise<LinksReport> {
  if (options.upgradeAll === true && (options.verify === undefined || options.verify === null)) {
    throw new UsageError(
      '--upgrade-all needs --verify: hosts no ruleset covers are only upgraded when both versions answer alike',
    );
  }
  // Before any file is read: a bad pattern is a usage error, not a finding in every file.
  const patterns = loadExcludes(
    options.exclude ?? [],
    options.ignoreFile,
    options.cwd ?? process.cwd(),
  );
  const walked = walkDocuments(options.paths);
  // As ESLint does: a path that holds nothing to read is a mistake in a CI job, not a pass.
  if (walked.files.length === 0 && walked.problems.length === 0 && options.allowEmpty !== true)
    throw new UsageError(
      `no file to check in ${options.paths.join(', ')}: links reads Markdown, HTML and text files (.md, .html, .txt and their kin); --no-error-on-unmatched-pattern accepts none`,
    );
  const problems: LinksProblem[] = walked.problems.map((p) => ({
    path: p.path,
    severity: p.message.startsWith('skipped') ? 'skipped' : 'error',
    message: p.message,
  }));
  const findings: LinkFinding[] = [];
  const excluded: ExcludedLink[] = [];
  const notes: string[] = [];
  const documents = new Map<string, LoadedDocument>();
  const roots = new Map(walked.files.map((f) => [f.path, f.root]));
  let scannedFiles = 0;
  const markdown = new MarkdownParser(options.parseTimeoutMs);
  for (const file of walked.files) {
    let doc: LoadedDocument;
    try {
      doc = readDocument(file.path, options.maxBytes ?? DEFAULT_MAX_BYTES);
    } catch (err) {
      if (!(err instanceof DocumentError)) throw err;
      // A file found in a folder is passed over; one named on the command line was asked for,
      // and a run that could not read it did not do what was asked (exit 2).
      const refused = /^(too large|binary|not valid UTF-8|UTF-16)/.test(err.message);
      const skipped = refused && !file.named;
      problems.push({
        path: file.path,
        severity: skipped ? 'skipped' : 'error',
        message: skipped
          ? `skipped: ${err.message}`
          : refused
            ? `cannot scan: ${err.message}`
            : err.message,
      });
      continue;
    }
    let planned;
    let left;
    let inline;
    try {
      const tokens = file.kind === 'markdown' ? await markdown.tokens(doc.text) : [];
      const occurrences =
        file.kind === 'markdown'
          ? occurrencesFromTokens(doc.text, tokens)
          : findUrls(file.kind, doc.text);
      inline = ignoredRanges(file.path, file.kind, doc.text, tokens);
      left = leaveAlone(file.path, doc.text, occurrences, patterns, inline.ranges);
      planned = planRewrites(
        file.path,
        doc.text,
        left.kept,
        options.rewrite,
        options.upgradeAll === true,
      );
    } catch (err) {
      // A parser failing on hostile input is this file's problem, not the run's.
      const message =
        err instanceof DocumentError
          ? `skipped: ${err.message}`
          : `cannot parse as ${file.kind}: ${(err as Error).message}`;
      problems.push({
        path: file.path,
        severity: err instanceof DocumentError ? 'skipped' : 'error',
        message,
      });
      continue;
    }
    scannedFiles++;
    excluded.push(...left.excluded);
    notes.push(...inline.notes, ...planned.notes);
    if (planned.findings.length === 0) continue;
    findings.push(...planned.findings);
    documents.set(file.path, doc);
  }

  if (options.verify !== undefined && options.verify !== null && findings.length > 0) {
    const unique = new Map<string, { url: string; rewritten: string }>();
    for (const f of findings)
      unique.set(pairKey(f.url, f.rewritten), { url: f.url, rewritten: f.rewritten });
    const pairs = [...unique.values()];
    options.verify.onStart?.(pairs.length);
    const verdicts = await verifyPairs(
      pairs,
      options.verify.settings,
      options.verify.concurrency,
      options.verify.onProgress,
    );
    for (const f of findings) {
      const verdict = verdicts.get(pairKey(f.url, f.rewritten));
      f.verified = verdict?.verified ?? false;
      f.reason = verdict?.reason ?? 'not fetched';
    }
  }

  const report: LinksReport = {
    scannedFiles,
    findings,
    excluded,
    problems,
    notes,
    changedFiles: [],
    diff: '',
  };
  if (options.mode === 'fix') fixDocuments(report, documents, roots, options.diff === true);
  return report;
}

/**
 * The occurrences no exclusion matches, and the ones left alone: by a marker in the file first
 * (the nearer, more specific rule), then by a pattern. Exclusions are applied before the
 * rulesets are asked, so an excluded link is counted whether or not a ruleset covers it (lychee
 * counts its excluded links the same way) and is never fetched by --verify.
 */
function leaveAlone(
  file: string,
  text: string,
  occurrences: readonly Occurrence[],
  patterns: readonly ExcludePattern[],
  ignored: readonly IgnoredRange[],
): { kept: Occurrence[]; excluded: ExcludedLink[] } {
  if (patterns.length === 0 && ignored.length === 0)
    return { kept: [...occurrences], excluded: [] };
  const kept: Occurrence[] = [];
  const excluded: ExcludedLink[] = [];
  let starts: number[] | null = null;
  for (const o of occurrences) {
    const range = rangeAt(ignored, o.start);
    const pattern = range === undefined ? matchingExclude(patterns, o.url) : undefined;
    if (range === undefined && pattern === undefined) {
      kept.push(o);
      continue;
    }
    starts ??= lineStarts(text);
    const { line, column } = position(starts, o.start);
    const [rule, origin] =
      range !== undefined
        ? [range.marker, `${file}:${range.line}`]
        : [pattern?.source ?? '', pattern?.origin ?? ''];
    excluded.push({ file, line, column, url: o.url, context: o.context, rule, origin });
  }
  return { kept, excluded };
}

/**
 * Replaces the contents of the file at real path `target` with `updated`, in place: the same
 * inode, so hard links, permissions and ownership stay as they were (a new file renamed over it
 * would split hard links and take our umask). Only if it still holds `before` byte for byte.
 */
function rewriteInPlace(target: string, before: Buffer, updated: Buffer): void {
  const fd = openSync(target, 'r+');
  try {
    const size = fstatSync(fd).size;
    const current = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, current, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    if (read !== size || !current.equals(before))
      throw new Error('it changed while being checked; run again');
    let written = 0;
    while (written < updated.length)
      written += writeSync(fd, updated, written, updated.length - written, written);
    ftruncateSync(fd, updated.length);
  } finally {
    closeSync(fd);
  }
}

function fixDocuments(
  report: LinksReport,
  documents: Map<string, LoadedDocument>,
  roots: Map<string, string>,
  diffOnly: boolean,
): void {
  const byFile = new Map<string, LinkFinding[]>();
  for (const f of applicable(report)) byFile.set(f.file, [...(byFile.get(f.file) ?? []), f]);
  const patches: string[] = [];
  for (const [file, findings] of byFile) {
    const doc = documents.get(file) as LoadedDocument;
    const updated = applyFindings(doc.text, findings);
    if (updated === doc.text) continue;
    if (diffOnly) {
      // git's a/ and b/ prefixes: `git apply` and `patch -p1` take the diff as it is.
      // The diff is of the bytes on disk: a UTF-8 BOM stays in the first line of both sides, or
      // `git apply` would find the first line changed and reject the whole patch.
      const bom = doc.bom ? '\uFEFF' : '';
      patches.push(
        createTwoFilesPatch(
          `a/${file}`,
          `b/${file}`,
          bom + doc.text,
          bom + updated,
          undefined,
          undefined,
          { context: 3 },
        ),
      );
      report.changedFiles.push(file);
      continue;
    }
    try {
      // Write through symlinks to the file itself, only inside the root it was found under (a
      // link swapped since the walk is caught here), and only if nobody changed it meanwhile.
      const target = realpathSync(file);
      const root = roots.get(file);
      if (root === undefined || !isWithin(target, root))
        throw new Error(`it now leads out of ${root ?? 'the paths given'} (to ${target})`);
      rewriteInPlace(target, encodeDocument(doc.text, doc.bom), encodeDocument(updated, doc.bom));
      report.changedFiles.push(file);
    } catch (err) {
      const message =
        err instanceof Error && (err as NodeJS.ErrnoException).code === undefined
          ? err.message
          : describeFsError(err);
      report.problems.push({ path: file, severity: 'error', message: `not rewritten: ${message}` });
    }
  }
  report.diff = patches.join('');
}
