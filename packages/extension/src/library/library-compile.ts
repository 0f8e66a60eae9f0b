import { compileBundle, type Ruleset } from '@httpsify/engine';
import { parseRulesetXml, refusedPatterns } from '@httpsify/engine/parse';
import type { FileProblem, LibraryFile } from './archive-entries.js';

/** At most this many problems are kept (a broken archive of 50,000 files must not fill storage). */
export const MAX_PROBLEMS = 500;

export interface LibraryProgress {
  stage: 'read' | 'parse' | 'compile' | 'store';
  done: number;
  total: number;
}

export interface CompiledLibrary {
  bundle: Uint8Array;
  fileCount: number;
  rulesetCount: number;
  problems: FileProblem[];
  /** Problems beyond MAX_PROBLEMS, counted only. */
  moreProblems: number;
  /** The rulesets in the bundle (the preview judges them; a narrower import recompiles a subset). */
  rulesets: Ruleset[];
}

/**
 * Parses every file with the engine's XML parser and judges every pattern with the regex door
 * up front: a file that does not parse, or a ruleset with a pattern the door refuses, is left
 * out with its file, line and reason, and the rest is compiled into one bundle (ordered by
 * file name, as the reference build did). Yields to the event loop between batches so progress
 * reaches the page and the background keeps answering.
 */
export async function compileLibrary(
  files: readonly LibraryFile[],
  onProgress: (p: LibraryProgress) => void,
  timestamp?: number,
): Promise<CompiledLibrary> {
  const problems: FileProblem[] = [];
  let moreProblems = 0;
  const report = (p: FileProblem) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
    else moreProblems++;
  };
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const rulesets: Ruleset[] = [];
  const BATCH = 200;
  for (let i = 0; i < sorted.length; i++) {
    const f = sorted[i] as LibraryFile;
    const parsed = parseRulesetXml(f.text, f.path);
    const errors = parsed.diagnostics.filter((d) => d.severity === 'error');
    if (parsed.ruleset === null || errors.length > 0) {
      for (const d of errors.length > 0 ? errors : parsed.diagnostics)
        report({ file: f.path, line: d.line, message: d.message });
      if (parsed.diagnostics.length === 0)
        report({ file: f.path, line: 0, message: 'no <ruleset> in this file' });
    } else {
      const refused = refusedPatterns(parsed.ruleset);
      if (refused.length > 0) {
        for (const r of refused)
          report({
            file: f.path,
            line: r.loc?.line ?? 0,
            message: `${r.what} cannot be run safely (${r.reason}); this ruleset is left out`,
          });
      } else {
        rulesets.push(parsed.ruleset);
      }
    }
    if ((i + 1) % BATCH === 0 || i + 1 === sorted.length) {
      onProgress({ stage: 'parse', done: i + 1, total: sorted.length });
      await new Promise((r) => setTimeout(r, 0));
    }
  }
  onProgress({ stage: 'compile', done: 0, total: rulesets.length });
  const bundle = compileBundle(rulesets, timestamp === undefined ? {} : { timestamp });
  onProgress({ stage: 'compile', done: rulesets.length, total: rulesets.length });
  return {
    bundle,
    fileCount: files.length,
    rulesetCount: rulesets.length,
    problems,
    moreProblems,
    rulesets,
  };
}
