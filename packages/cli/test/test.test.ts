import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliSync } from './support/run-cli.js';

describe('httpsify test', () => {
  it('prints per-ruleset summaries and totals, exits 1 on coverage errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-test-'));
    writeFileSync(
      join(dir, 'A.xml'),
      '<ruleset name="A">\n\t<target host="*.example.com" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
    );
    writeFileSync(
      join(dir, 'B.xml'),
      '<ruleset name="B">\n\t<target host="example.org" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
    );
    const run = runCliSync(['test', dir]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`${join(dir, 'A.xml')}:2:`);
    expect(run.stdout).toMatch(
      /error target-coverage: wildcard target "\*\.example\.com" has 0 tests on hosts it covers, needs 3/,
    );
    expect(run.stdout).toMatch(/FAIL A \(.*A\.xml\): 0 tests, 2 problems/);
    expect(run.stdout).toMatch(/error rule-coverage: rule from "\^http:" has 0 tests, needs 1/);
    expect(run.stdout).toMatch(/ok {3}B \(.*B\.xml\): 1 test, 0 problems/);
    expect(run.stdout).toContain('2 rulesets, 1 test: 1 ok, 1 with problems');
  });
  it('--changed tests only the changed files, still against every ruleset of the directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-test-'));
    writeFileSync(
      join(dir, 'A.xml'),
      '<ruleset name="A">\n\t<target host="www.example.com" />\n\t<exclusion pattern="^http://www\\.example\\.com/x" />\n\t<rule from="^http:" to="https:" />\n\t<test url="http://www.example.com/x" />\n</ruleset>\n',
    );
    writeFileSync(
      join(dir, 'B.xml'),
      '<ruleset name="B">\n\t<target host="*.example.com" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
    );
    const run = runCliSync(['test', dir, '--changed', join(dir, 'A.xml')]);
    expect(run.stdout).toMatch(
      /A\.xml:5:2: warning excluded-still-rewritten: test url http:\/\/www\.example\.com\/x is excluded here, but ruleset "B" still rewrites it/,
    );
    expect(run.stdout).not.toContain('B.xml');
    expect(run.stdout).toContain('1 ruleset, 2 tests: 0 ok, 1 with problems');
  });
});
