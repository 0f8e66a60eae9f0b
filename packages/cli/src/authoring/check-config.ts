import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import ignore from 'ignore';
import type { Diagnostic } from '@httpsify/engine';
import { FINDING_CODES, UNLOADABLE_CODES } from './finding-codes.js';
import { expandRulesetPaths } from './ruleset-files.js';

/**
 * `httpsify.config.json`, read by `check` and `test` (as ESLint's config file):
 *
 *     { "rules": { "<code>": "off" | "warn" | "error" }, "ignores": ["<pattern>", …] }
 *
 * Checked strictly when it is read: an unknown key, an unknown code or a wrong value stops the
 * command (exit 2) with the file and the JSON path of the mistake, since a setting that is
 * silently skipped would let CI pass on a config that does not say what its author thinks.
 */
export const DEFAULT_CONFIG = 'httpsify.config.json';

export type RuleSetting = 'off' | 'warn' | 'error';

export interface CheckConfig {
  /** The file it was read from, as given. */
  file: string;
  rules: ReadonlyMap<string, RuleSetting>;
  ignores: readonly string[];
  /** Whether a ruleset file is ignored: its path relative to the config's directory matches. */
  isIgnored(file: string): boolean;
}

const SETTINGS: readonly string[] = ['off', 'warn', 'error'];

const UNLOADABLE_MESSAGE =
  'a ruleset with this error does not load at all, so it stays an error ' +
  "(the baseline or an httpsify-ignore comment accepts one file's finding)";

/** `$.rules`, `$.rules["unescaped-dot"]`, `$.ignores[2]`: a JSONPath to the key. */
function jsonPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

/**
 * The path of the first key given twice in one object of `text` (valid JSON), or null.
 * JSON.parse keeps the last of them without a word: one of two settings would be dropped.
 */
function duplicateKey(text: string): string | null {
  type Frame = { path: string } & (
    { keys: Set<string>; key: string; expectKey: boolean } | { index: number }
  );
  const stack: Frame[] = [];
  // Strings and punctuation are all it takes; numbers, true, false and null fall through.
  for (const [token] of text.matchAll(/"(?:[^"\\]|\\.)*"|[{}[\],:]/g)) {
    const top = stack.at(-1);
    if (token === '{' || token === '[') {
      const path =
        top === undefined
          ? '$'
          : 'keys' in top
            ? jsonPath(top.path, top.key)
            : jsonPath(top.path, top.index);
      stack.push(
        token === '{' ? { path, keys: new Set(), key: '', expectKey: true } : { path, index: 0 },
      );
    } else if (token === '}' || token === ']') stack.pop();
    else if (top === undefined) continue;
    else if (token === ',') {
      if ('keys' in top) top.expectKey = true;
      else top.index++;
    } else if (token === ':') {
      if ('keys' in top) top.expectKey = false;
    } else if ('keys' in top && top.expectKey) {
      const key = JSON.parse(token) as string;
      if (top.keys.has(key)) return jsonPath(top.path, key);
      top.keys.add(key);
      top.key = key;
    }
  }
  return null;
}

/** The nearest known code, for "did you mean": a typo is one to three edits away. */
function nearestCode(code: string): string | null {
  let best: string | null = null;
  let bestDistance = 4;
  for (const known of FINDING_CODES) {
    const d = editDistance(code, known);
    if (d < bestDistance) [best, bestDistance] = [known, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(
        (row[j] as number) + 1,
        (next[j - 1] as number) + 1,
        (row[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[b.length] as number;
}

/** Parses and checks a config file's text; a mistake is an Error naming `file` and the JSON path. */
export function parseCheckConfig(text: string, file: string): CheckConfig {
  const fail = (path: string, what: string): never => {
    throw new Error(`${file}: ${path}: ${what}`);
  };
  let data: unknown;
  try {
    // An editor's byte order mark is not a mistake worth stopping for.
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new Error(`${file}: not valid JSON: ${(err as Error).message}`);
  }
  const twice = duplicateKey(text);
  if (twice !== null) fail(twice, 'given twice (JSON keeps only the last one)');
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(data)) return fail('$', 'expected an object: { "rules": {…}, "ignores": […] }');
  for (const key of Object.keys(data)) {
    if (key !== 'rules' && key !== 'ignores')
      fail(jsonPath('$', key), 'unknown key (expected "rules" or "ignores")');
  }
  const raw = data as { rules?: unknown; ignores?: unknown };

  const rules = new Map<string, RuleSetting>();
  if (raw.rules !== undefined) {
    if (!isObject(raw.rules))
      fail('$.rules', 'expected an object of "<code>": "off" | "warn" | "error"');
    for (const [code, value] of Object.entries(raw.rules as Record<string, unknown>)) {
      const path = jsonPath('$.rules', code);
      if (!FINDING_CODES.has(code)) {
        const near = nearestCode(code);
        const hint = near === null ? '' : ` (did you mean "${near}"?)`;
        fail(path, `unknown finding code${hint}; docs/writing-rulesets.md lists them`);
      }
      if (typeof value !== 'string' || !SETTINGS.includes(value)) {
        fail(path, `expected "off", "warn" or "error", not ${JSON.stringify(value)}`);
      }
      if (UNLOADABLE_CODES.has(code) && value !== 'error') fail(path, UNLOADABLE_MESSAGE);
      rules.set(code, value as RuleSetting);
    }
  }

  const ignores: string[] = [];
  if (raw.ignores !== undefined) {
    if (!Array.isArray(raw.ignores))
      fail('$.ignores', 'expected an array of patterns, e.g. ["legacy/", "*-falsemixed.xml"]');
    (raw.ignores as unknown[]).forEach((pattern, i) => {
      const path = jsonPath('$.ignores', i);
      if (typeof pattern !== 'string' || pattern.trim() === '') {
        return fail(
          path,
          `expected a pattern (a non-empty string), not ${JSON.stringify(pattern)}`,
        );
      }
      // Relative to the config's directory, as in .gitignore: "./x" and "../x" never match.
      if (/^\.\.?\//.test(pattern)) {
        const why = `patterns are relative to the directory of ${file}`;
        fail(
          path,
          `"${pattern}": ${why}; write it without "./" (and nothing outside it can be ignored)`,
        );
      }
      ignores.push(pattern);
    });
  }

  const matcher = ignore().add(ignores);
  const base = dirname(resolve(file));
  return {
    file,
    rules,
    ignores,
    isIgnored(path: string): boolean {
      const rel = relative(base, resolve(path));
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return false;
      return matcher.ignores(rel.split(sep).join('/'));
    },
  };
}

/**
 * The config `check` and `test` use: `--config FILE` (which must exist), `--no-config` (none), or
 * `httpsify.config.json` in the current directory when there is one.
 */
export function loadCheckConfig(option: string | false | undefined): CheckConfig | null {
  if (option === false) return null;
  const file = option ?? DEFAULT_CONFIG;
  if (option === undefined && !existsSync(file)) return null;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'a directory'
          : (err as Error).message;
    throw new Error(`${file}: cannot read the config: ${why}`);
  }
  return parseCheckConfig(text, file);
}

/**
 * The findings as the config's `rules` set them: "off" drops a code, "warn" and "error" set its
 * severity. Applied before counts, the baseline, --max-warnings and the exit status.
 */
export function applyRuleSettings(
  diagnostics: readonly Diagnostic[],
  config: CheckConfig | null,
): Diagnostic[] {
  if (config === null || config.rules.size === 0) return [...diagnostics];
  const out: Diagnostic[] = [];
  for (const d of diagnostics) {
    const setting = config.rules.get(d.code);
    if (setting === undefined) out.push(d);
    else if (setting !== 'off')
      out.push({ ...d, severity: setting === 'warn' ? 'warning' : 'error' });
  }
  return out;
}

/** The ruleset files of a run, less those the config ignores, and how many it ignored. */
export interface SelectedFiles {
  files: string[];
  /** The `--changed` files that are not ignored (resolved), or null without `--changed`. */
  changed: Set<string> | null;
  ignored: number;
}

/**
 * Expands `paths` as `check` and `test` take them, adds changed files outside them (checked
 * against them), and leaves out what the config ignores: an ignored file is neither checked nor
 * seen by the checks across files. A directory whose every ruleset is ignored is an error, as a
 * directory without any is: "0 files: 0 errors" would pass a CI job that checks nothing.
 */
export function selectRulesetFiles(
  paths: readonly string[],
  changed: readonly string[] | undefined,
  config: CheckConfig | null,
): SelectedFiles {
  const files: string[] = [];
  const known = new Set<string>();
  const ignored = new Set<string>();
  const isIgnored = (file: string): boolean => {
    if (config?.isIgnored(file) !== true) return false;
    ignored.add(resolve(file));
    return true;
  };
  for (const path of paths) {
    const found = expandRulesetPaths([path]);
    for (const f of found) known.add(resolve(f));
    const kept = found.filter((f) => !isIgnored(f));
    // A file named on its own expands to itself; a directory or an archive to its rulesets.
    const named = found.length === 1 && found[0] === path;
    if (config !== null && kept.length === 0 && !named) {
      throw new Error(`${path}: every ruleset there is ignored by ${config.file}`);
    }
    files.push(...kept);
  }
  // A changed file outside the given directories is still checked (against them).
  for (const f of changed ?? []) if (!known.has(resolve(f)) && !isIgnored(f)) files.push(f);
  const inScope =
    changed === undefined
      ? null
      : new Set(changed.map((f) => resolve(f)).filter((f) => !ignored.has(f)));
  return { files, changed: inScope, ignored: ignored.size };
}
