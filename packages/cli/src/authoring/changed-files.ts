import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

function git(cwd: string, args: string[]): string {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error !== undefined) throw new Error(`git ${args.join(' ')}: ${run.error.message}`);
  if (run.status !== 0)
    throw new Error(
      `${cwd}: git ${args.join(' ')} failed: ${run.stderr.trim() || `exit ${run.status}`}`,
    );
  return run.stdout;
}

/**
 * The `*.xml` files of `dir` that differ from revision `rev` (added, copied, modified or
 * renamed, in the index or the work tree), plus new files git does not track yet. Deleted files
 * are left out: there is nothing to check in them.
 */
export function changedSince(dir: string, rev: string): string[] {
  if (!/^[\w./@^~{}:-]+$/.test(rev) || rev.startsWith('-'))
    throw new Error(`--changed-since: "${rev}" is not a git revision`);
  // Outside a work tree, or with a name git does not know, git's own words name neither the
  // option nor the fix.
  const inside = spawnSync('git', ['rev-parse', '--is-inside-work-tree'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (inside.error !== undefined)
    throw new Error(`--changed-since needs git: ${inside.error.message}`);
  if (inside.status !== 0 || inside.stdout.trim() !== 'true')
    throw new Error(
      `--changed-since compares with git, and ${dir} is not in a git work tree: give the files with --changed instead`,
    );
  const known = spawnSync('git', ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (known.status !== 0)
    throw new Error(`--changed-since: no commit "${rev}" in the repository of ${dir}`);
  const split = (out: string): string[] =>
    out.split('\0').filter((f) => f.endsWith('.xml') && !f.includes('/'));
  const changed = split(
    git(dir, ['diff', '--name-only', '--relative', '--diff-filter=ACMR', '-z', rev, '--', '.']),
  );
  const untracked = split(
    git(dir, ['ls-files', '--others', '--exclude-standard', '-z', '--', '.']),
  );
  return [...new Set([...changed, ...untracked])].sort().map((f) => join(dir, f));
}
