import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliSync } from './support/run-cli.js';

const NOTICE =
  'httpsify: note: check --fix now writes the fixes to the files, as ESLint does; --fix-dry-run prints the diff only\n';
// Dot: the unescaped dots are fixable (escape-dot), the $1 without a group (to-missing-group,
// an error) is not. Fine: only its dot (a warning) to fix, then clean.
const DOT =
  '<ruleset name="Dot">\n\t<target host="www.example.net" />\n\t<rule from="^http://www.example.net/" to="https://www.example.net/$1" />\n</ruleset>\n';
const DOT_FIXED = DOT.replace('^http://www.example.net/', '^http://www\\.example\\.net/');
const FINE =
  '<ruleset name="Fine">\n\t<target host="example.org" />\n\t<target host="www.example.org" />\n' +
  '\t<rule from="^http://example.org/" to="https://www.example.org/" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n';
const FINE_FIXED = FINE.replace('^http://example.org/', '^http://example\\.org/');

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-fix-'));
  mkdirSync(join(dir, 'rules'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'rules', name), text);
  return dir;
}
const read = (dir: string, name: string) => readFileSync(join(dir, 'rules', name), 'utf8');

describe('check --fix writes, as ESLint', () => {
  it('writes the fixes, says once that --fix now writes, then reports what is left with its exit status', () => {
    const dir = project({ 'Dot.xml': DOT, 'Fine.xml': FINE });
    const fixed = runCliSync(['check', 'rules', '--fix'], { cwd: dir });
    expect([read(dir, 'Dot.xml'), read(dir, 'Fine.xml')]).toEqual([DOT_FIXED, FINE_FIXED]);
    // The unfixable error is left: printed, counted, exit 1. No diff on stdout.
    expect(fixed.stdout).toBe(
      'rules/Dot.xml:3:2: error to-missing-group: to "https://www.example.net/$1" uses $1 but from has 0 capturing groups; JavaScript inserts "$1" literally\n',
    );
    expect(fixed.status).toBe(1);
    const stderr = fixed.stderr.split('\n');
    expect(stderr[0]).toBe(NOTICE.trimEnd());
    expect(fixed.stderr.split(NOTICE).length).toBe(2);
    expect(stderr[1]).toBe('2 files: 2 fixes in 2 files, written');
    expect(stderr[2]).toMatch(/^2 files: 1 error, 0 warnings, 0 info in /);
    // Nothing left to fix, nothing left to report: exit 0 (the notice again: on every run).
    const fine = project({ 'Fine.xml': FINE });
    const clean = runCliSync(['check', 'rules', '--fix'], { cwd: fine });
    expect([clean.status, clean.stdout, read(fine, 'Fine.xml')]).toEqual([0, '', FINE_FIXED]);
    expect(clean.stderr.startsWith(NOTICE)).toBe(true);
  });

  it('--fix --write, the old spelling, still writes, without the notice', () => {
    const dir = project({ 'Fine.xml': FINE });
    const written = runCliSync(['check', 'rules', '--fix', '--write'], { cwd: dir });
    expect([written.status, written.stdout, read(dir, 'Fine.xml')]).toEqual([0, '', FINE_FIXED]);
    expect(written.stderr).toMatch(/^1 file: 1 fix in 1 file, written\n1 file: 0 errors/);
  });

  it('reports what is left in every format, to -o too; json says what was fixed', () => {
    const dir = project({ 'Dot.xml': DOT });
    const sarif = runCliSync(['check', 'rules', '--fix', '-f', 'sarif', '-o', 'out/check.sarif'], {
      cwd: dir,
    });
    expect([sarif.status, sarif.stdout, read(dir, 'Dot.xml')]).toEqual([1, '', DOT_FIXED]);
    const log = JSON.parse(readFileSync(join(dir, 'out', 'check.sarif'), 'utf8'));
    expect(log.runs[0].results.map((r: { ruleId: string }) => r.ruleId)).toEqual([
      'to-missing-group',
    ]);
    const again = project({ 'Dot.xml': DOT });
    const json = JSON.parse(
      runCliSync(['check', 'rules', '--fix', '-f', 'json'], { cwd: again }).stdout,
    );
    expect(json).toMatchObject({ errors: 1, warnings: 0, counts: { 'to-missing-group': 1 } });
    expect(json.fixes).toEqual({
      files: 1,
      changed: [
        {
          file: 'rules/Dot.xml',
          fixes: [
            { code: 'escape-dot', line: 3, message: expect.stringContaining('escape the "."') },
          ],
          diff: expect.stringContaining('+++ b/rules/Dot.xml'),
        },
      ],
      rejected: 0,
      pending: 0,
    });
  });

  it('--fix-dry-run prints the diff only, as plain --fix did, to -o too; exit 1 while fixes are pending', () => {
    const dir = project({ 'Dot.xml': DOT, 'Fine.xml': FINE });
    const dry = runCliSync(['check', 'rules', '--fix-dry-run'], { cwd: dir });
    expect([dry.status, read(dir, 'Dot.xml'), read(dir, 'Fine.xml')]).toEqual([1, DOT, FINE]);
    expect(dry.stdout).toMatch(
      /^=+\n--- a\/rules\/Dot\.xml\n\+\+\+ b\/rules\/Dot\.xml\n@@ -1,4 \+1,4 @@\n/,
    );
    expect(dry.stdout).toContain('+++ b/rules/Fine.xml\n');
    expect(dry.stderr).toBe('2 files: 2 fixes in 2 files (--fix writes them)\n');
    const toFile = runCliSync(['check', 'rules', '--fix-dry-run', '-o', 'fix.patch'], { cwd: dir });
    expect([toFile.status, toFile.stdout, readFileSync(join(dir, 'fix.patch'), 'utf8')]).toEqual([
      1,
      '',
      dry.stdout,
    ]);
    // The patch is what --fix writes.
    expect(spawnSync('git', ['apply', 'fix.patch'], { cwd: dir }).status).toBe(0);
    expect([read(dir, 'Dot.xml'), read(dir, 'Fine.xml')]).toEqual([DOT_FIXED, FINE_FIXED]);
    const done = runCliSync(['check', 'rules', '--fix-dry-run'], { cwd: dir });
    expect([done.status, done.stdout]).toEqual([0, '']);
  });

  it('contradictory fix options are usage errors, and nothing is written', () => {
    const dir = project({ 'Fine.xml': FINE });
    const cases: [string[], string][] = [
      [
        ['--fix', '--fix-dry-run'],
        '--fix writes the fixes and --fix-dry-run only prints them: give one of the two',
      ],
      [
        ['--fix-dry-run', '--write'],
        '--fix-dry-run writes nothing: leave out --write (or use --fix, which writes)',
      ],
      [['--write'], '--write applies fixes: use it with --fix'],
      [
        ['--fix', '--write-baseline'],
        '--write-baseline records the findings as they are: run it apart from --fix',
      ],
      [
        ['--fix-dry-run', '-f', 'sarif'],
        '--fix-dry-run prints a diff (or json), not SARIF: leave out --format sarif',
      ],
    ];
    for (const [options, message] of cases) {
      const r = runCliSync(['check', 'rules', ...options], { cwd: dir });
      expect([r.status, r.stdout, r.stderr]).toEqual([2, '', `httpsify: ${message}\n`]);
    }
    expect(read(dir, 'Fine.xml')).toBe(FINE);
    expect(readdirSync(dir)).toEqual(['rules']);
  });
});
