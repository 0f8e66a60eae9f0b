import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { compileRulesetRegex, type RulesetRegex } from '@httpsify/engine/parse';
import { describeFsError } from './document.js';
import { UsageError } from './usage-error.js';

/** Read from the working directory unless `--ignore-file` names another (lychee's `.lycheeignore`). */
export const DEFAULT_IGNORE_FILE = '.httpsifyignore';

/** A regex that leaves matching URLs alone, and where it was written: `--exclude` or `file:line`. */
export interface ExcludePattern {
  source: string;
  origin: string;
  regex: RulesetRegex;
}

/**
 * Compiles one pattern through the engine's regex door (docs/regex-guard.md): a pattern that
 * backtracks catastrophically runs in linear time on re2js, and one that can run neither way is
 * refused, so a hostile `.httpsifyignore` in a pull request cannot stall CI.
 */
export function compileExclude(source: string, origin: string): ExcludePattern {
  // As `--enable "NAME": …` elsewhere; a file's line reads `file:line: "regex": …`.
  const named = `${origin}${origin.startsWith('--') ? ' ' : ': '}${JSON.stringify(source)}`;
  // An empty pattern matches every URL: most likely an unset variable (`--exclude "$X"`), and
  // it would turn the check off without a word.
  if (source === '')
    throw new UsageError(
      `${named}: an empty pattern would leave every link alone; write '.' if that is meant`,
    );
  const compiled = compileRulesetRegex(source);
  if (compiled.ok) return { source, origin, regex: compiled.regex };
  throw new UsageError(
    `${named}: ${compiled.refused ? `refused, it could stall the run: ${compiled.reason}` : compiled.reason}`,
  );
}

/** The patterns of an ignore file: one regex a line; blank lines and lines starting with `#` are skipped. */
export function parseIgnoreFile(text: string, shownAs: string): ExcludePattern[] {
  const patterns: ExcludePattern[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r\n|\r|\n/)
    .forEach((line, i) => {
      // URLs hold no spaces, so surrounding whitespace is never part of a pattern.
      const source = line.trim();
      if (source !== '' && !source.startsWith('#'))
        patterns.push(compileExclude(source, `${shownAs}:${i + 1}`));
    });
  return patterns;
}

/**
 * Every pattern in force: `--exclude` ones, then the ignore file's: `ignoreFile` when named
 * (it must exist), else `.httpsifyignore` in `cwd` when there is one; null reads none.
 */
export function loadExcludes(
  exclude: readonly string[],
  ignoreFile: string | null | undefined,
  cwd: string,
): ExcludePattern[] {
  const patterns = exclude.map((source) => compileExclude(source, '--exclude'));
  if (ignoreFile === null) return patterns;
  const path = ignoreFile !== undefined ? resolve(cwd, ignoreFile) : join(cwd, DEFAULT_IGNORE_FILE);
  const shownAs = ignoreFile ?? DEFAULT_IGNORE_FILE;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    // Having no .httpsifyignore is the usual case; a file named on purpose must be there.
    if (ignoreFile === undefined && (err as NodeJS.ErrnoException).code === 'ENOENT')
      return patterns;
    throw new UsageError(`${shownAs}: ${describeFsError(err)}`);
  }
  return [...patterns, ...parseIgnoreFile(text, shownAs)];
}

/** The first pattern matching `url` (searched anywhere in it, as lychee does), if any. */
export function matchingExclude(
  patterns: readonly ExcludePattern[],
  url: string,
): ExcludePattern | undefined {
  return patterns.find((p) => p.regex.test(url));
}
