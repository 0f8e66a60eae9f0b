import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { describeFsError, kindOf, type DocumentKind } from './document.js';

export interface FoundFile {
  path: string;
  kind: DocumentKind;
  /** Real path of the root it was found under (the named file or directory); it never leaves it. */
  root: string;
  /** Named on the command line itself, not found in a directory. */
  named: boolean;
}

/** Whether the real path `real` lies in (or is) the real path `root`. */
export function isWithin(real: string, root: string): boolean {
  return real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
}

export interface WalkProblem {
  path: string;
  message: string;
}

interface Matcher {
  base: string;
  rules: Ignore;
}

/**
 * The documents under `paths`: files named on the command line whatever their extension (plain
 * text unless .md/.html...), and under directories, recursively, the Markdown, HTML and text
 * files that .gitignore does not exclude (the .gitignore files from the repository root down, as
 * git reads them). `.git` is never entered. Symlinks are followed only while they stay inside
 * the directory named (a link leading out is reported as skipped: a pull request must not make
 * `check` read, or `fix` write, files elsewhere); a directory reached twice (a symlink loop, or
 * two links to one place) is walked once. Unreadable entries are problems, reported, never fatal.
 */
export function walkDocuments(paths: readonly string[]): {
  files: FoundFile[];
  problems: WalkProblem[];
} {
  const files: FoundFile[] = [];
  const problems: WalkProblem[] = [];
  const seenFiles = new Set<string>();
  const seenDirs = new Set<string>();
  const addFile = (path: string, kind: DocumentKind, root: string): void => {
    let real: string;
    try {
      real = realpathSync(path);
    } catch (err) {
      problems.push({ path, message: describeFsError(err) });
      return;
    }
    if (!isWithin(real, root)) {
      problems.push({
        path,
        message: `skipped: a symbolic link leading out of ${root} (to ${real})`,
      });
      return;
    }
    if (seenFiles.has(real)) return;
    seenFiles.add(real);
    files.push({ path, kind, root, named: real === root });
  };

  const walk = (dir: string, matchers: Matcher[], root: string): void => {
    let real: string;
    try {
      real = realpathSync(dir);
    } catch (err) {
      problems.push({ path: dir, message: describeFsError(err) });
      return;
    }
    if (!isWithin(real, root)) {
      problems.push({
        path: dir,
        message: `skipped: a symbolic link leading out of ${root} (to ${real})`,
      });
      return;
    }
    if (seenDirs.has(real)) {
      problems.push({
        path: dir,
        message: `skipped: ${real} was already walked (a symlink loop?)`,
      });
      return;
    }
    seenDirs.add(real);
    const own = readGitignore(dir, problems);
    const here = own === null ? matchers : [...matchers, { base: dir, rules: own }];
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch (err) {
      problems.push({ path: dir, message: `cannot list directory: ${describeFsError(err)}` });
      return;
    }
    for (const name of entries) {
      if (name === '.git') continue;
      const path = join(dir, name);
      let isDir: boolean;
      let isFile: boolean;
      try {
        const own = lstatSync(path);
        const stat = own.isSymbolicLink() ? statSync(path) : own;
        isDir = stat.isDirectory();
        isFile = stat.isFile();
      } catch (err) {
        problems.push({ path, message: describeFsError(err) });
        continue;
      }
      if (isIgnored(here, path, isDir)) continue;
      if (isDir) walk(path, here, root);
      else if (isFile) {
        const kind = kindOf(path);
        if (kind !== null) addFile(path, kind, root);
      }
    }
  };

  for (const path of paths) {
    let isDir: boolean;
    try {
      const stat = statSync(path);
      isDir = stat.isDirectory();
      if (!isDir && !stat.isFile()) {
        problems.push({ path, message: 'not a regular file or directory' });
        continue;
      }
    } catch (err) {
      problems.push({ path, message: describeFsError(err) });
      continue;
    }
    let root: string;
    try {
      root = realpathSync(path);
    } catch (err) {
      problems.push({ path, message: describeFsError(err) });
      continue;
    }
    if (isDir) walk(path, ancestorMatchers(path, problems), root);
    else addFile(path, kindOf(path) ?? 'text', root);
  }
  return { files, problems };
}

function readGitignore(dir: string, problems: WalkProblem[]): Ignore | null {
  const file = join(dir, '.gitignore');
  if (!existsSync(file)) return null;
  try {
    return ignore().add(readFileSync(file, 'utf8'));
  } catch (err) {
    problems.push({ path: file, message: `cannot read: ${describeFsError(err)}` });
    return null;
  }
}

/** The .gitignore files above `dir` up to its repository's root (none outside a repository). */
function ancestorMatchers(dir: string, problems: WalkProblem[]): Matcher[] {
  const start = resolve(dir);
  const chain: string[] = [];
  let root: string | null = null;
  for (let at = dirname(start); ; at = dirname(at)) {
    chain.push(at);
    if (existsSync(join(at, '.git'))) {
      root = at;
      break;
    }
    if (dirname(at) === at) break;
  }
  if (existsSync(join(start, '.git')) || root === null) return [];
  const matchers: Matcher[] = [];
  for (const at of chain.reverse()) {
    const rules = readGitignore(at, problems);
    if (rules !== null) matchers.push({ base: at, rules });
  }
  // A directory named on purpose is walked even if ignored (`links check dist/`); the
  // .gitignore files inside it still apply.
  return isIgnored(matchers, start, true) ? [] : matchers;
}

/** git's precedence: the deepest .gitignore with an opinion (a match or a `!` negation) decides. */
function isIgnored(matchers: readonly Matcher[], path: string, isDir: boolean): boolean {
  let ignored = false;
  for (const m of matchers) {
    const rel = relative(resolve(m.base), resolve(path)).split(sep).join('/');
    if (rel === '' || rel.startsWith('../')) continue;
    const verdict = m.rules.test(isDir ? `${rel}/` : rel);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}
