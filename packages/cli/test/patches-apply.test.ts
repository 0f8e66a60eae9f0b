import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliSync } from './support/run-cli.js';

const rules = resolve(__dirname, '../../engine/rulesets');
const BOM = '\uFEFF';

/** The patch applies with real `git apply` and `patch -p1`, and gives the bytes the writing mode gives. */
function expectPatchApplies(dir: string, patch: string, file: string, written: Buffer): void {
  expect(patch).toMatch(/^@@ /m);
  writeFileSync(join(dir, 'fix.patch'), patch);
  const git = spawnSync('git', ['apply', '--check', 'fix.patch'], { cwd: dir, encoding: 'utf8' });
  expect(git.stderr).toBe('');
  expect(git.status).toBe(0);
  const dry = spawnSync('patch', ['-p1', '--dry-run', '-i', 'fix.patch'], {
    cwd: dir,
    encoding: 'utf8',
  });
  expect([dry.status, dry.stdout]).toEqual([0, `checking file ${file}\n`]);
  expect(spawnSync('git', ['apply', 'fix.patch'], { cwd: dir }).status).toBe(0);
  expect(readFileSync(join(dir, file))).toEqual(written);
}

describe('patches that git apply and patch -p1 accept', () => {
  it('links fix --diff keeps a UTF-8 BOM and CR LF line ends', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-links-patch-'));
    writeFileSync(
      join(dir, 'doc.md'),
      `${BOM}# Title\r\n\r\nsee [a](http://www.eff.org/x)\r\nend\r\n`,
    );
    const diff = runCliSync(['links', 'fix', '--diff', '--rules', rules, 'doc.md'], { cwd: dir });
    const fixedCopy = mkdtempSync(join(tmpdir(), 'httpsify-links-written-'));
    cpSync(join(dir, 'doc.md'), join(fixedCopy, 'doc.md'));
    expect(
      runCliSync(['links', 'fix', '--rules', rules, 'doc.md'], { cwd: fixedCopy }).status,
    ).toBe(0);
    const written = readFileSync(join(fixedCopy, 'doc.md'));
    expect(written.toString('utf8')).toBe(
      `${BOM}# Title\r\n\r\nsee [a](https://www.eff.org/x)\r\nend\r\n`,
    );
    expectPatchApplies(dir, diff.stdout, 'doc.md', written);
  });

  it('check --fix-dry-run diffs have context lines, and keep a BOM and CR LF', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-check-patch-'));
    const xml = `${BOM}<ruleset name="T">\r\n\t<target host="example.com" />\r\n\t<rule from="^http://example\\.com/" to="https://example.com/" />\r\n\t<securecookie host=".*" name=".+" />\r\n</ruleset>\r\n`;
    writeFileSync(join(dir, 'T.xml'), xml);
    const diff = runCliSync(['check', '--fix-dry-run', 'T.xml'], { cwd: dir });
    expect(diff.stdout).toContain('\n \t<target host="example.com" />\r\n');
    const fixedCopy = mkdtempSync(join(tmpdir(), 'httpsify-check-written-'));
    writeFileSync(join(fixedCopy, 'T.xml'), xml);
    expect(runCliSync(['check', '--fix', '--write', 'T.xml'], { cwd: fixedCopy }).stderr).toContain(
      'written',
    );
    const written = readFileSync(join(fixedCopy, 'T.xml'));
    expect(written.toString('utf8').startsWith(`${BOM}<ruleset name="T">\r\n`)).toBe(true);
    expectPatchApplies(dir, diff.stdout, 'T.xml', written);
  });
});
