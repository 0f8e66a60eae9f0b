import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRulesets } from '@httpsify/engine/node';
import { runLinks } from '../src/links/run-links.js';
import { workTimeout } from '../../engine/test/support/work-timeout.js';
import { runCli } from './support/run-cli.js';

let work: string;
let rulesArgs: string[];

/** A fresh directory under the test's work directory holding `files` (name -> text). */
function project(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'httpsify-links-ignore-'));
  writeFileSync(
    join(work, 'Docs.xml'),
    '<ruleset name="Docs">\n\t<target host="docs.test" />\n\t<target host="*.docs.test" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
  );
  rulesArgs = ['--rules', join(work, 'Docs.xml')];
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

const README = [
  '# Project',
  '',
  'Docs: [guide](http://docs.test/guide).',
  'Legacy mirror, plain HTTP on purpose: <http://legacy.docs.test/files/>.',
  'Also http://legacy.docs.test/other in text.',
  '',
].join('\n');

describe('--exclude', () => {
  it('leaves matching URLs alone in check and fix, and counts them in text and JSON', async () => {
    const dir = project('exclude', { 'README.md': README });
    const args = ['--exclude', '^http://legacy\\.docs\\.test/', ...rulesArgs, 'README.md'];
    const check = await runCli(['links', 'check', ...args], { cwd: dir });
    expect(check.stderr).toBe('');
    expect(check.stdout).toBe(
      'README.md:3:15: http://docs.test/guide -> https://docs.test/guide (ruleset Docs)\n1 file(s) scanned; 1 link(s) can be upgraded; 2 link(s) excluded\n',
    );
    expect(check.status).toBe(1);

    const json = await runCli(['links', 'check', '--format', 'json', ...args], { cwd: dir });
    const report = JSON.parse(json.stdout) as {
      findings: { url: string }[];
      excluded: number;
      excludedLinks: unknown[];
    };
    expect(report.findings.map((f) => f.url)).toEqual(['http://docs.test/guide']);
    expect(report.excluded).toBe(2);
    expect(report.excludedLinks).toEqual([
      {
        file: 'README.md',
        line: 4,
        column: 40,
        url: 'http://legacy.docs.test/files/',
        context: 'markdown-autolink',
        rule: '^http://legacy\\.docs\\.test/',
        origin: '--exclude',
      },
      {
        file: 'README.md',
        line: 5,
        column: 6,
        url: 'http://legacy.docs.test/other',
        context: 'markdown-bare-url',
        rule: '^http://legacy\\.docs\\.test/',
        origin: '--exclude',
      },
    ]);

    const fix = await runCli(['links', 'fix', ...args], { cwd: dir });
    expect(fix.status).toBe(0);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe(
      README.replace('http://docs.test/guide', 'https://docs.test/guide'),
    );
    // The CI case: with the one deliberate link excluded, the check passes.
    const again = await runCli(['links', 'check', ...args], { cwd: dir });
    expect(again.stdout).toBe('1 file(s) scanned; 0 link(s) can be upgraded; 2 link(s) excluded\n');
    expect(again.status).toBe(0);
  });

  it('is repeatable, and tests the URL as the document writes it, unanchored', async () => {
    const dir = project('exclude-many', {
      'a.txt': 'http://A.docs.test/x http://b.docs.test/y http://c.docs.test/z\n',
    });
    // `A` as written (not normalised to `a`), matched in the middle of the URL.
    const r = await runCli(
      ['links', 'check', '--exclude', 'A\\.docs', '--exclude', 'b\\.docs', ...rulesArgs, 'a.txt'],
      { cwd: dir },
    );
    expect(r.stdout).toBe(
      'a.txt:1:43: http://c.docs.test/z -> https://c.docs.test/z (ruleset Docs)\n1 file(s) scanned; 1 link(s) can be upgraded; 2 link(s) excluded\n',
    );
    const lower = await runCli(['links', 'check', '--exclude', 'a\\.docs', ...rulesArgs, 'a.txt'], {
      cwd: dir,
    });
    expect(lower.stdout).toContain('http://A.docs.test/x -> https://A.docs.test/x');
  });

  it('an invalid or empty regex is a usage error (exit 2) naming it, before any file is read', async () => {
    const dir = project('exclude-bad', { 'a.txt': 'http://docs.test/x\n' });
    const bad = await runCli(
      [
        'links',
        'check',
        '--exclude',
        'docs\\.test',
        '--exclude',
        '(unclosed',
        ...rulesArgs,
        'a.txt',
      ],
      { cwd: dir },
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(
      /^httpsify links: --exclude "\(unclosed": Invalid regular expression: .*Unterminated group\n$/,
    );
    expect(bad.stdout).toBe('');
    const empty = await runCli(['links', 'fix', '--exclude', '', ...rulesArgs, 'a.txt'], {
      cwd: dir,
    });
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain('--exclude "": an empty pattern would leave every link alone');
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('http://docs.test/x\n');
  });

  it('a catastrophically backtracking regex runs in linear time; one that cannot is refused', async () => {
    // On V8's RegExp, `(a|aa)+$` against 100 a's and a b takes longer than the universe has had.
    const dir = project('exclude-redos', {
      'a.txt': `http://docs.test/${'a'.repeat(100)}b and http://docs.test/${'a'.repeat(100)}\n`,
    });
    const r = await runCli(
      ['links', 'check', '--exclude', '^http://docs\\.test/(a|aa)+$', ...rulesArgs, 'a.txt'],
      { cwd: dir, timeout: workTimeout(1, 1_000) },
    );
    expect(r.timedOut).toBe(false);
    expect(r.stdout).toContain(`http://docs.test/${'a'.repeat(100)}b -> https://`);
    expect(r.stdout).toContain('1 link(s) can be upgraded; 1 link(s) excluded');
    expect(r.status).toBe(1);
    // A backreference has no linear-time matcher and no proof: refused, with the reason.
    const refused = await runCli(
      ['links', 'check', '--exclude', '(\\w+)\\1+$', ...rulesArgs, 'a.txt'],
      { cwd: dir, timeout: workTimeout(1, 1_000) },
    );
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(
      /--exclude "\(\\\\w\+\)\\\\1\+\$": refused, it could stall the run: .*backreference/,
    );
  });
});

describe('ignore file', () => {
  // Read as patterns, the comments would be invalid (an open parenthesis) and the blank line empty.
  const IGNORE = [
    '# deliberate plain-HTTP links (legacy mirror',
    '',
    '  ^http://legacy\\.docs\\.test/  ',
    '  # (not a rule either',
    '',
  ].join('\r\n');

  it('.httpsifyignore in the working directory: one regex a line, comments and blank lines skipped', async () => {
    const dir = project('ignore-file', { 'README.md': README, '.httpsifyignore': IGNORE });
    const r = await runCli(['links', 'check', '--format', 'json', ...rulesArgs, 'README.md'], {
      cwd: dir,
    });
    const report = JSON.parse(r.stdout) as {
      findings: { url: string }[];
      excludedLinks: { origin: string; rule: string }[];
    };
    expect(report.findings.map((f) => f.url)).toEqual(['http://docs.test/guide']);
    expect(report.excludedLinks.map((e) => [e.origin, e.rule])).toEqual([
      ['.httpsifyignore:3', '^http://legacy\\.docs\\.test/'],
      ['.httpsifyignore:3', '^http://legacy\\.docs\\.test/'],
    ]);
    // Read from the working directory, not from the directories scanned.
    const elsewhere = await runCli(['links', 'check', ...rulesArgs, join(dir, 'README.md')], {
      cwd: work,
    });
    expect(elsewhere.stdout).toMatch(/3 link\(s\) can be upgraded\n$/);
  });

  it('--ignore-file names another, instead of .httpsifyignore; a missing one is a usage error', async () => {
    const dir = project('ignore-file-named', {
      'README.md': README,
      '.httpsifyignore': 'docs\\.test/guide\n',
      'ci/links-ignore': '^http://legacy\\.docs\\.test/files/\n',
    });
    const r = await runCli(
      ['links', 'check', '--ignore-file', 'ci/links-ignore', ...rulesArgs, 'README.md'],
      { cwd: dir },
    );
    expect(r.stdout).toBe(
      [
        'README.md:3:15: http://docs.test/guide -> https://docs.test/guide (ruleset Docs)',
        'README.md:5:6: http://legacy.docs.test/other -> https://legacy.docs.test/other (ruleset Docs)',
        '1 file(s) scanned; 2 link(s) can be upgraded; 1 link(s) excluded',
        '',
      ].join('\n'),
    );
    const missing = await runCli(
      ['links', 'check', '--ignore-file', 'nope', ...rulesArgs, 'README.md'],
      { cwd: dir },
    );
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe('httpsify links: nope: no such file or directory\n');
  });

  it('a bad line is a usage error naming file:line', async () => {
    const dir = project('ignore-file-bad', {
      'a.txt': 'http://docs.test/x\n',
      '.httpsifyignore': '# fine\nfine\\.test\n[z-a]\n',
    });
    const r = await runCli(['links', 'check', ...rulesArgs, 'a.txt'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^httpsify links: \.httpsifyignore:3: "\[z-a\]": Invalid regular expression: .*Range out of order/,
    );
  });

  it('runLinks takes the same rules from a real file', async () => {
    const dir = project('ignore-file-api', {
      'a.md': '[x](http://docs.test/x) [y](http://docs.test/y)\n',
      'rules.txt': 'docs\\.test/y$\n',
    });
    const { engine } = loadRulesets([join(work, 'Docs.xml')]);
    const report = await runLinks({
      paths: [join(dir, 'a.md')],
      mode: 'check',
      rewrite: (url) => ({ ...engine.rewriteWithRuleset(url), channel: null }),
      exclude: ['/x$'],
      ignoreFile: 'rules.txt',
      cwd: dir,
    });
    expect(report.findings).toEqual([]);
    expect(report.excluded.map((e) => [e.url, e.origin])).toEqual([
      ['http://docs.test/x', '--exclude'],
      ['http://docs.test/y', 'rules.txt:1'],
    ]);
  });
});

describe('inline markers', () => {
  const MD = [
    '# Links', // 1
    '<!-- httpsify-ignore-next-line: the mirror has no HTTPS -->', // 2
    'Mirror: [files](http://docs.test/mirror).', // 3
    'Guide: [guide](http://docs.test/guide).', // 4
    'Old: <http://docs.test/old> <!-- httpsify-ignore-line -->', // 5
    '', // 6
    '<!-- httpsify-ignore-start -->', // 7
    '| Archive | [a](http://docs.test/a) |', // 8
    '| --- | --- |', // 9
    '| http://docs.test/b | [c](http://docs.test/c) |', // 10
    '<!-- httpsify-ignore-end -->', // 11
    '', // 12
    // Written about, not used: in prose and in a code span they are not comments.
    'Write `<!-- httpsify-ignore-start -->` or httpsify-ignore-next-line to keep a link:', // 13
    'then [after](http://docs.test/after) and [more](http://docs.test/more) stay checked.', // 14
    '<!-- httpsify-ignore-next-lines is not a marker -->', // 15
    'And http://docs.test/plain too.', // 16
    '',
  ].join('\n');

  it('Markdown: next-line, line and start/end blocks in HTML comments; the same words elsewhere do nothing', async () => {
    const dir = project('inline-md', { 'doc.md': MD });
    const check = await runCli(['links', 'check', '--format', 'json', ...rulesArgs, 'doc.md'], {
      cwd: dir,
    });
    expect(check.stderr).toBe('');
    const report = JSON.parse(check.stdout) as {
      findings: { url: string; line: number }[];
      excluded: number;
      excludedLinks: Record<string, unknown>[];
    };
    expect(report.findings.map((f) => `${f.line} ${f.url}`)).toEqual([
      '4 http://docs.test/guide',
      '14 http://docs.test/after',
      '14 http://docs.test/more',
      '16 http://docs.test/plain',
    ]);
    expect(report.excluded).toBe(5);
    expect(
      report.excludedLinks.map((e) => `${e['line']} ${e['url']} ${e['rule']} ${e['origin']}`),
    ).toEqual([
      '3 http://docs.test/mirror httpsify-ignore-next-line doc.md:2',
      '5 http://docs.test/old httpsify-ignore-line doc.md:5',
      '8 http://docs.test/a httpsify-ignore-start doc.md:7',
      '10 http://docs.test/b httpsify-ignore-start doc.md:7',
      '10 http://docs.test/c httpsify-ignore-start doc.md:7',
    ]);
    const fix = await runCli(['links', 'fix', ...rulesArgs, 'doc.md'], { cwd: dir });
    expect(fix.stdout).toMatch(
      /\n1 file\(s\) scanned; 4 link\(s\) upgraded in 1 file\(s\); 5 link\(s\) excluded\n$/,
    );
    const fixed = readFileSync(join(dir, 'doc.md'), 'utf8');
    expect(fixed).toBe(
      MD.replace(/http:\/\/docs\.test\/(guide|after|more|plain)/g, 'https://docs.test/$1'),
    );
  });

  it('HTML: markers in comments, a comment over several lines ignores the line after its end', async () => {
    const html = [
      '<!doctype html><title>t</title>', // 1
      '<!--', // 2
      '  httpsify-ignore-next-line', // 3
      '  (the partner site has no HTTPS)', // 4
      '-->', // 5
      '<a href="http://docs.test/partner">partner</a>', // 6
      '<a href="http://docs.test/kept">kept</a>', // 7
      '<img src="http://docs.test/i.png"><!-- httpsify-ignore-line --><a href="http://docs.test/same-line">s</a>', // 8
      '<p>httpsify-ignore-line is text here: <a href="http://docs.test/text">t</a></p>', // 9
      '<script>// httpsify-ignore-next-line</script>', // 10
      '<a href="http://docs.test/after-script">a</a>', // 11
      '',
    ].join('\n');
    const dir = project('inline-html', { 'page.html': html });
    const r = await runCli(['links', 'check', '--format', 'json', ...rulesArgs, 'page.html'], {
      cwd: dir,
    });
    const report = JSON.parse(r.stdout) as {
      findings: { url: string }[];
      excludedLinks: { url: string; origin: string }[];
    };
    expect(report.findings.map((f) => f.url)).toEqual([
      'http://docs.test/kept',
      'http://docs.test/text',
      'http://docs.test/after-script',
    ]);
    expect(report.excludedLinks.map((e) => `${e.url} ${e.origin}`)).toEqual([
      'http://docs.test/partner page.html:3',
      'http://docs.test/i.png page.html:8',
      'http://docs.test/same-line page.html:8',
    ]);
  });

  it('other files: the marker anywhere on a line, in any comment syntax', async () => {
    const yml = [
      'mirror: http://docs.test/mirror  # httpsify-ignore-line', // 1
      '# httpsify-ignore-next-line', // 2
      'legacy: http://docs.test/legacy', // 3
      'docs: http://docs.test/docs', // 4
      '/* httpsify-ignore-start */', // 5
      'a: http://docs.test/a', // 6
      'b: http://docs.test/b', // 7
      '// httpsify-ignore-end', // 8
      'c: http://docs.test/c', // 9
      '',
    ].join('\n');
    const dir = project('inline-text', { 'config.yml': yml });
    const r = await runCli(['links', 'check', ...rulesArgs, 'config.yml'], { cwd: dir });
    expect(r.stdout).toBe(
      [
        'config.yml:4:7: http://docs.test/docs -> https://docs.test/docs (ruleset Docs)',
        'config.yml:9:4: http://docs.test/c -> https://docs.test/c (ruleset Docs)',
        '1 file(s) scanned; 2 link(s) can be upgraded; 4 link(s) excluded',
        '',
      ].join('\n'),
    );
  });

  it('an unclosed start runs to the end of the file and a stray end does nothing, each with a note', async () => {
    const dir = project('inline-unpaired', {
      'a.md': [
        '[a](http://docs.test/a)',
        '<!-- httpsify-ignore-end -->',
        '[b](http://docs.test/b)',
        '<!-- httpsify-ignore-start -->',
        '[c](http://docs.test/c)',
        '',
        '[d](http://docs.test/d)',
        '',
      ].join('\n'),
    });
    const r = await runCli(['links', 'check', ...rulesArgs, 'a.md'], { cwd: dir });
    expect(r.stderr).toBe(
      'httpsify: a.md:2: httpsify-ignore-end without an httpsify-ignore-start before it does nothing\n' +
        'httpsify: a.md:4: httpsify-ignore-start has no httpsify-ignore-end: links to the end of the file are left alone\n',
    );
    expect(r.stdout).toMatch(
      /a\.md:1:5: .*\na\.md:3:5: .*\n1 file\(s\) scanned; 2 link\(s\) can be upgraded; 2 link\(s\) excluded\n$/,
    );
  });
});

describe('a run that finds nothing to read', () => {
  it('is a usage error (exit 2) naming the paths, unless --no-error-on-unmatched-pattern', async () => {
    const dir = project('nothing-to-read', {});
    // Only files links cannot read, in a folder and below it.
    mkdirSync(join(dir, 'empty', 'deeper'), { recursive: true });
    writeFileSync(join(dir, 'empty', 'deeper', 'logo.png'), 'http://docs.test/x\n');
    const failed = await runCli(['links', 'check', ...rulesArgs, 'empty'], { cwd: dir });
    expect(failed.status).toBe(2);
    expect(failed.stderr).toBe(
      'httpsify links: no file to check in empty: links reads Markdown, HTML and text files (.md, .html, .txt and their kin); --no-error-on-unmatched-pattern accepts none\n',
    );
    expect(failed.stdout).toBe('');
    const allowed = await runCli(
      ['links', 'check', '--no-error-on-unmatched-pattern', ...rulesArgs, 'empty'],
      { cwd: dir },
    );
    expect(allowed.status).toBe(0);
    expect(allowed.stdout).toBe('0 file(s) scanned; 0 link(s) can be upgraded\n');
    // A folder with one document is not empty.
    writeFileSync(join(dir, 'empty', 'a.md'), 'plain\n');
    expect((await runCli(['links', 'check', ...rulesArgs, 'empty'], { cwd: dir })).status).toBe(0);
  });
});
