import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { count } from '../src/shared/plural.js';
import { runCliSync, startCli } from './support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'httpsify-exit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('exit statuses: 0 done, 1 problems found, 2 could not run', () => {
  it('sweep with no loadable ruleset exits 2, having fetched nothing', () => {
    const broken = join(dir, 'broken.xml');
    writeFileSync(broken, '<ruleset name="Broken">\n');
    const r = runCliSync(['sweep', broken, '--out', join(dir, 'sweep-out')]);
    expect(r.stderr).toContain(`${broken}:2:1: malformed XML`);
    expect(r.stdout).toContain('swept 0 URLs of 0 rulesets');
    expect(r.status).toBe(2);
  });

  it('a usage error exits 2 whether commander or a command finds it', () => {
    const unknownOption = runCliSync(['rewrite', '--bogus']);
    expect(unknownOption.status).toBe(2);
    expect(unknownOption.stderr).toContain("unknown option '--bogus'");
    const badChoice = runCliSync(['rewrite', '--format', 'xml', 'http://example.com/']);
    expect(badChoice.status).toBe(2);
    expect(badChoice.stderr).toContain("argument 'xml' is invalid");
    expect(runCliSync(['no-such-command']).status).toBe(2);
    // No path is the current directory (the repository root here): no *.xml there.
    const noRulesets = runCliSync(['check']);
    expect([noRulesets.status, noRulesets.stderr]).toEqual([
      2,
      'httpsify: .: no *.xml rulesets there\n',
    ]);
    // Our own check of the same kind of mistake.
    const ownCheck = runCliSync(['check', '--format', 'xml', dir]);
    expect(ownCheck.status).toBe(2);
    expect(ownCheck.stderr).toContain('--format must be text, json or sarif');
    expect(runCliSync(['--help']).status).toBe(0);
    expect(runCliSync(['--version'])).toMatchObject({ status: 0, stdout: '0.1.0\n' });
  });

  it('rewrite fails when no ruleset could be loaded (empty directory, garbage file)', () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const fromEmpty = runCliSync(['rewrite', '--rules', empty, 'http://example.com/']);
    expect(fromEmpty).toMatchObject({ status: 2, stdout: '' });
    expect(fromEmpty.stderr).toBe(
      `httpsify: no ruleset could be loaded from ${empty}: no *.xml rulesets there\n`,
    );
    const garbage = join(dir, 'garbage.xml');
    writeFileSync(garbage, 'not a ruleset\n');
    const fromGarbage = runCliSync(['rewrite', '--rules', garbage, 'http://example.com/']);
    expect(fromGarbage).toMatchObject({ status: 2, stdout: '' });
    expect(fromGarbage.stderr).toMatch(new RegExp(`^${garbage}:\\d+:\\d+: error xml-syntax`));
    expect(fromGarbage.stderr).toContain(
      `httpsify: no ruleset could be loaded from ${garbage} (errors above)`,
    );
    // compile shares the loader: no empty bundle.
    expect(runCliSync(['compile', '--rules', empty, '-o', join(dir, 'x.bundle')]).status).toBe(2);
  });

  it('check and test say that a bundle is not ruleset XML', () => {
    const xml = join(dir, 'Good.xml');
    writeFileSync(
      xml,
      '<ruleset name="Good">\n\t<target host="example.com" />\n\t<rule from="^http:" to="https:" />\n\t<test url="http://example.com/" />\n</ruleset>\n',
    );
    const bundle = join(dir, 'good.bundle');
    expect(runCliSync(['compile', '--rules', xml, '-o', bundle]).status).toBe(0);
    for (const command of ['check', 'test']) {
      const r = runCliSync([command, bundle]);
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(
        `httpsify: ${bundle}: a compiled bundle, not ruleset XML: give the *.xml rulesets it was compiled from\n`,
      );
      expect(r.stdout).not.toContain('malformed XML');
    }
  });

  it('rewrite stops quietly when the reader closes the pipe (| head -1)', async () => {
    // Far more output than a pipe buffers, so writes continue after the reader has gone.
    const urls = Array.from({ length: 100_000 }, (_, i) => `http://example.com/${i}`).join('\n');
    const child = startCli(['rewrite']);
    child.proc.stdin.end(urls);
    // Checked on its first chunk of output, before any more is read.
    await child.until(() => child.stdout() !== '');
    const first = child.stdout();
    child.proc.stdout.destroy();
    const { status, stderr } = await child.exited;
    expect(first.startsWith('http://example.com/0\n')).toBe(true);
    expect(stderr).toBe('');
    expect(status).toBe(0);
  });
});

describe('counts in messages', () => {
  it('agree in number', () => {
    expect([
      count(0, 'ruleset'),
      count(1, 'ruleset'),
      count(2, 'ruleset'),
      count(1, 'match', 'matches'),
      count(3, 'match', 'matches'),
    ]).toEqual(['0 rulesets', '1 ruleset', '2 rulesets', '1 match', '3 matches']);
  });
  it('compile and test say "1 ruleset" and "1 test" (the target itself)', () => {
    const xml = join(dir, 'One.xml');
    writeFileSync(
      xml,
      '<ruleset name="One">\n\t<target host="example.org" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
    );
    expect(runCliSync(['compile', '--rules', xml, '-o', join(dir, 'one.bundle')]).stderr).toMatch(
      /: 1 ruleset, \d+ bytes/,
    );
    expect(runCliSync(['test', xml]).stdout).toContain('1 ruleset, 1 test: 1 ok, 0 with problems');
  });
});
