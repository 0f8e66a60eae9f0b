import { createEngine, type Engine, type Ruleset } from '@httpsify/engine';
import { rulesetCoverage } from '@httpsify/engine/authoring';
import { parseRulesetXml } from '@httpsify/engine/parse';
import {
  archiveKind,
  decodeUtf8,
  LIBRARY_LIMITS,
  LibraryRefused,
  NotUtf8,
  readArchive,
} from '@httpsify/engine/library';
import {
  isBundle,
  isRulesetDirectory,
  listRulesetFiles,
  readRegularFile,
} from '@httpsify/engine/node';
import type { SweepJob } from './verdicts.js';

/** default_off values the sweep writes; only rulesets it turned off does it turn back on. */
export const SWEEP_OFF_PREFIX = 'sweep failed: ';

export const jobKey = (ruleset: string, file: string, url: string): string =>
  `ruleset|${file !== '' ? file : ruleset}|${url}`;

/** Whether the sweep tests a ruleset: on ones, and the ones an earlier sweep turned off. */
export function swept(ruleset: Ruleset, includeDefaultOff: boolean): boolean {
  return (
    ruleset.defaultOff === undefined ||
    includeDefaultOff ||
    ruleset.defaultOff.startsWith(SWEEP_OFF_PREFIX)
  );
}

/** A rulesets file (bundle, XML) given by path, through the rulesets' door; errors name it. */
export function readRulesetsFile(path: string): Buffer {
  try {
    return readRegularFile(path, LIBRARY_LIMITS.totalBytes);
  } catch (err) {
    throw new Error(`cannot read rulesets from ${path}: ${(err as Error).message}`);
  }
}

/**
 * The rulesets of a library one at a time, so a sweep never holds them all: a directory's files
 * are parsed as they come, a bundle's rulesets decoded by id. An archive (.zip, .tar, .tar.gz,
 * told by its bytes) goes through the library reader every verb shares, within LIBRARY_LIMITS.
 * Files are read through the rulesets' door (regular files, bounded, strict UTF-8); a file of a
 * directory or archive that cannot be used is reported and left out, a path given that cannot
 * be read, or an archive past the library's limits, is an error naming it.
 */
export async function* libraryRulesets(
  paths: readonly string[],
  onBad: (message: string) => void,
): AsyncGenerator<Ruleset> {
  const parseOne = (bytes: Uint8Array, file: string): Ruleset | null => {
    let xml: string;
    try {
      xml = decodeUtf8(bytes, { keepBom: true });
    } catch (err) {
      if (!(err instanceof NotUtf8)) throw err;
      onBad(`${file}:${err.line}:1: ${err.message}`);
      return null;
    }
    const parsed = parseRulesetXml(xml, file);
    for (const d of parsed.diagnostics)
      if (d.severity === 'error') onBad(`${d.file}:${d.line}:${d.column}: ${d.message}`);
    return parsed.ruleset;
  };
  for (const path of paths) {
    if (isRulesetDirectory(path)) {
      for (const file of listRulesetFiles(path)) {
        let bytes: Buffer;
        try {
          bytes = readRegularFile(file, LIBRARY_LIMITS.fileBytes);
        } catch (err) {
          onBad(`${file}: cannot read: ${(err as Error).message}`);
          continue;
        }
        const r = parseOne(bytes, file);
        if (r !== null) yield r;
      }
    } else {
      const bytes = readRulesetsFile(path);
      if (isBundle(bytes)) {
        const { loadBundle } = await import('@httpsify/engine');
        const engine = loadBundle(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        for (let id = 0; id < engine.rulesetCount; id++) yield engine.ruleset(id);
      } else if (archiveKind(bytes) !== null) {
        yield* archiveRulesets(path, bytes, onBad);
      } else {
        const r = parseOne(bytes, path);
        if (r !== null) yield r;
      }
    }
  }
}

/**
 * An archive's rulesets, read as `rewrite --rules` and `check` read it (one reader, one set of
 * limits): an entry past them is reported by archive and entry and left out, an archive past
 * them is an error naming it.
 */
function* archiveRulesets(
  path: string,
  bytes: Uint8Array,
  onBad: (message: string) => void,
): Generator<Ruleset> {
  let contents;
  try {
    contents = readArchive(bytes, LIBRARY_LIMITS);
  } catch (err) {
    if (err instanceof LibraryRefused) throw new Error(`${path}: ${err.message}`);
    throw err;
  }
  for (const p of contents.problems)
    onBad(`${path}/${p.file}:${Math.max(1, p.line)}:1: ${p.message}`);
  const entries = [...contents.files].sort((a, b) =>
    a.path.normalize('NFC') < b.path.normalize('NFC') ? -1 : 1,
  );
  for (const f of entries) {
    const parsed = parseRulesetXml(f.text, `${path}/${f.path}`);
    for (const d of parsed.diagnostics)
      if (d.severity === 'error') onBad(`${d.file}:${d.line}:${d.column}: ${d.message}`);
    if (parsed.ruleset !== null) yield parsed.ruleset;
  }
}

/**
 * A ruleset's test URLs (explicit, and implied by its plain targets; the ones an exclusion owns
 * left out), each with what this ruleset alone rewrites it to: the collection fetch-test uses.
 * fetch-test compiles an engine per ruleset for the rewrite (~30 ms each, too slow for a
 * library); here the library's engine explains each URL, and only when another ruleset decides
 * first, or this one is off, does a ruleset get its own engine.
 */
export function rulesetTests(
  ruleset: Ruleset,
  all: Engine,
): { url: string; rewritten: string | null; problem?: string }[] {
  let own: Engine | null = null;
  const out: { url: string; rewritten: string | null; problem?: string }[] = [];
  for (const test of rulesetCoverage(ruleset, all).tests) {
    if (test.owner?.kind === 'exclusion') continue;
    const step = all.explain(test.url).candidates.find((s) => s.ruleset === ruleset.name);
    if (step !== undefined && step.outcome === 'rewrote' && step.result !== undefined) {
      out.push({ url: test.url, rewritten: step.result });
      continue;
    }
    if (step === undefined || step.outcome === 'not-reached' || step.outcome === 'inactive') {
      if (own === null) {
        own = createEngine([ruleset]);
        own.setActive(ruleset.name, true);
      }
      const outcome = own.rewriteWithRuleset(test.url);
      if (outcome.rewritten !== null) {
        out.push({ url: test.url, rewritten: outcome.rewritten });
        continue;
      }
      out.push({
        url: test.url,
        rewritten: null,
        problem: outcome.error ?? 'no rule of this ruleset rewrites this URL',
      });
      continue;
    }
    out.push({
      url: test.url,
      rewritten: null,
      problem:
        step.outcome === 'refused'
          ? 'a pattern of this ruleset was refused as unsafe'
          : 'no rule of this ruleset rewrites this URL',
    });
  }
  return out;
}

/** The sweep's jobs: each swept ruleset's test URLs (explicit and implied by plain targets). */
export async function* rulesetJobs(
  paths: readonly string[],
  all: Engine,
  options: { includeDefaultOff: boolean; onBad: (message: string) => void },
): AsyncGenerator<SweepJob> {
  for await (const ruleset of libraryRulesets(paths, options.onBad)) {
    if (!swept(ruleset, options.includeDefaultOff)) continue;
    const file = ruleset.loc?.file ?? '';
    for (const test of rulesetTests(ruleset, all)) {
      const job: SweepJob = {
        key: jobKey(ruleset.name, file, test.url),
        kind: 'ruleset',
        ruleset: ruleset.name,
        file,
        url: test.url,
        rewritten: test.rewritten,
      };
      if (test.problem !== undefined) job.problem = test.problem;
      yield job;
    }
  }
}
