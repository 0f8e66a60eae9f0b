import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHTML } from 'entities';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/run-cli.js';

let work: string;
let rulesArgs: string[];

/** The report as GitHub renders a job summary (GFM): each table row as the text of its cells. */
function tableRows(markdown: string): string[][] {
  const html = micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] });
  return [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map(([, row]) =>
    [...(row as string).matchAll(/<t[hd]>([\s\S]*?)<\/t[hd]>/g)].map(([, cell]) =>
      decodeHTML((cell as string).replace(/<[^>]*>/g, '')),
    ),
  );
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'httpsify-links-md-'));
  // A ruleset name with Markdown in it must stay text in its cell.
  writeFileSync(
    join(work, 'Docs.xml'),
    '<ruleset name="Docs | *mirror*">\n\t<target host="docs.test" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
  );
  rulesArgs = ['--rules', join(work, 'Docs.xml')];
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('--format markdown', () => {
  it('a GFM table (file:line, URL, upgrade, ruleset) that renders cell for cell, whatever the URL and path hold', async () => {
    const dir = join(work, 'table');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'we|ird.md'),
      '# Doc\n\n[pipe](<http://docs.test/a|b`c>)\n<http://docs.test/x>\n<!-- httpsify-ignore-next-line -->\nhttp://docs.test/left-alone\n',
    );
    const r = await runCli(
      ['links', 'check', '--format', 'markdown', ...rulesArgs, 'we|ird.md', 'missing.md'],
      { cwd: dir },
    );
    expect(r.status).toBe(2);
    expect(r.stdout.split('\n')[0]).toBe('### httpsify links check');
    expect(tableRows(r.stdout)).toEqual([
      ['File:line', 'URL', 'Upgrade', 'Ruleset'],
      ['we|ird.md:3', 'http://docs.test/a|b`c', 'https://docs.test/a|b`c', 'Docs | *mirror*'],
      ['we|ird.md:4', 'http://docs.test/x', 'https://docs.test/x', 'Docs | *mirror*'],
    ]);
    // URLs and paths are code, not links or emphasis.
    expect(r.stdout).not.toMatch(/<a |<em>/);
    expect(r.stdout).toContain(
      '\n1 file(s) scanned; 2 link(s) can be upgraded; 1 link(s) excluded\n',
    );
    expect(r.stdout).toContain('Not checked:\n\n- `missing.md`: no such file or directory\n');
  });

  it('fix says what was upgraded; no findings say so without a table', async () => {
    const dir = join(work, 'fix');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a.txt'), 'see http://docs.test/a\n');
    const fix = await runCli(['links', 'fix', '--format', 'markdown', ...rulesArgs, 'a.txt'], {
      cwd: dir,
    });
    expect(fix.status).toBe(0);
    expect(fix.stdout).toMatch(/^### httpsify links fix\n\n\| File:line \|/);
    expect(tableRows(fix.stdout)[1]).toEqual([
      'a.txt:1',
      'http://docs.test/a',
      'https://docs.test/a',
      'Docs | *mirror*',
    ]);
    expect(fix.stdout).toContain('\n1 file(s) scanned; 1 link(s) upgraded in 1 file(s)\n');
    const again = await runCli(['links', 'check', '--format', 'markdown', ...rulesArgs, 'a.txt'], {
      cwd: dir,
    });
    expect(again.status).toBe(0);
    expect(again.stdout).toBe(
      '### httpsify links check\n\nNo link can be upgraded.\n\n1 file(s) scanned; 0 link(s) can be upgraded\n',
    );
  });

  it('keeps a job summary small: 1,000 rows at most, the rest counted', async () => {
    const dir = join(work, 'many');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'many.txt'),
      Array.from({ length: 1001 }, (_, i) => `http://docs.test/${i}`).join('\n'),
    );
    const r = await runCli(['links', 'check', '--format', 'markdown', ...rulesArgs, 'many.txt'], {
      cwd: dir,
    });
    expect(tableRows(r.stdout)).toHaveLength(1 + 1000);
    expect(r.stdout).toContain('…and 1 more: see `--format text` or `--format sarif`.');
    expect(r.stdout).toContain('1001 link(s) can be upgraded');
  });
});
