import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corpusRulesDir } from '../../engine/test/support/corpus.js';
import { runCheck } from '../src/commands/check.js';

const bin = resolve(__dirname, '../dist/bin.js');

describe('httpsify check', () => {
  it('prints file:line:col findings and exits 1 on errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-check-'));
    const file = join(dir, 'Bad.xml');
    writeFileSync(file, '<ruleset name="Bad">\n\t<target host="Example.com" />\n\t<rule from="^http://example\\.com/" to="https:" />\n</ruleset>\n');
    const run = spawnSync('node', [bin, 'check', file], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`${file}:2:`);
    expect(run.stdout).toMatch(/error target-case: target "Example\.com" has upper-case letters/);
    expect(run.stdout).toMatch(/error to-https-colon/);
    expect(run.stderr).toMatch(/1 file: \d+ errors?, \d+ warnings? \(public suffix list: npm tldts@\d+\.\d+\.\d+/);
    const json = spawnSync('node', [bin, 'check', '--format', 'json', dir], { encoding: 'utf8' });
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ files: 1, counts: { 'target-case': 1, 'to-https-colon': 1 } });
  });
  it('exits 0 and says so for a clean file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-check-'));
    writeFileSync(join(dir, 'Good.xml'), '<ruleset name="Good">\n\t<target host="example.com" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n');
    const run = spawnSync('node', [bin, 'check', dir, '--format', 'json'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ files: 1, errors: 0, warnings: 0, diagnostics: [] });
  });
  it('names a missing path', () => {
    const run = spawnSync('node', [bin, 'check', '/nonexistent/rules'], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('/nonexistent/rules: no such file or directory');
  });
  it('finds the known problems of the 2018 corpus', () => {
    const report = runCheck([corpusRulesDir()]);
    expect(report.files).toBe(24264);
    const c = report.counts;
    // prior-ruleset-tooling.md §5: 44 rules with a from that is neither ^http: nor ^http://…,
    // 148 hosts in two rulesets, 3 duplicated names, 1 middle wildcard, no parse errors.
    expect(c['from-prefix']).toBe(44);
    expect(c['duplicate-target']).toBe(2 * 148);
    expect(c['duplicate-name']).toBe(6);
    expect(c['target-middle-wildcard']).toBe(1);
    expect(c['xml-syntax']).toBeUndefined();
    expect(c['exclusion-unanchored']).toBe(117);
    const names = (code: string) => new Set(report.diagnostics.filter((d) => d.code === code).map((d) => d.file.split('/').pop()));
    expect(names('duplicate-name')).toEqual(
      new Set(['Copenhagenmarathon.dk.xml', 'Copenhagenmarathon.dk-falsemixed.xml', 'EZTV.xml', 'eztv.ag.xml', 'Quantcast.xml', 'QuantCount.xml']),
    );
    expect(names('dead-rule').has('Motorola.xml')).toBe(true);
    expect(names('to-literal-dollar')).toEqual(new Set(['University_of_Mainz.xml']));
    expect(names('to-missing-group').has('DEMO.xml')).toBe(true);
    expect(c['target-non-ascii']).toBe(2);
  }, 120_000);
});
