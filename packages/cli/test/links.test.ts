import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  makeTestPki,
  startLocalServers,
  type LocalServers,
  type TestPki,
} from './support/fetch-test-servers.js';
import { startDualServer, type DualServer } from './support/dual-protocol-server.js';
import { runCli } from './support/run-cli.js';

const fixtures = resolvePath(__dirname, 'fixtures/links');
const DOCS = [
  ['guide.md', 'guide.expected.md'],
  ['page.html', 'page.expected.html'],
  ['notes.txt', 'notes.expected.txt'],
] as const;

let work: string;
let rulesArgs: string[];

/** A fresh directory holding copies of the fixture documents, optionally transformed. */
function copyDocs(
  name: string,
  transform: (text: string) => Buffer = (t) => Buffer.from(t, 'utf8'),
): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [doc] of DOCS)
    writeFileSync(join(dir, doc), transform(readFileSync(join(fixtures, doc), 'utf8')));
  return dir;
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'httpsify-links-'));
  writeFileSync(
    join(work, 'Docs.xml'),
    '<ruleset name="Docs">\n\t<target host="docs.test" />\n\t<target host="*.docs.test" />\n\t<exclusion pattern="^http://old\\.docs\\.test/" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
  );
  writeFileSync(
    join(work, 'Moved.xml'),
    '<ruleset name="Moved">\n\t<target host="old.docs.test" />\n\t<rule from="^http://old\\.docs\\.test/" to="https://new.docs.test/" />\n</ruleset>\n',
  );
  rulesArgs = ['--rules', join(work, 'Docs.xml'), '--rules', join(work, 'Moved.xml')];
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('links fix', () => {
  it('rewrites exactly the URLs a ruleset covers: every other byte is unchanged (Markdown, HTML, text)', async () => {
    const dir = copyDocs('plain');
    const r = await runCli(['links', 'fix', ...rulesArgs, dir], { cwd: work });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    for (const [doc, expected] of DOCS)
      expect(readFileSync(join(dir, doc), 'utf8'), doc).toBe(
        readFileSync(join(fixtures, expected), 'utf8'),
      );
    expect(r.stdout).toMatch(/3 file\(s\) scanned; 38 link\(s\) upgraded in 3 file\(s\)/);
  });

  it('keeps CRLF line endings and a UTF-8 BOM, and is idempotent', async () => {
    const crlfBom = (text: string): Buffer =>
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(text.replace(/\n/g, '\r\n'), 'utf8'),
      ]);
    const dir = copyDocs('crlf', crlfBom);
    const first = await runCli(['links', 'fix', ...rulesArgs, dir], { cwd: work });
    expect(first.status).toBe(0);
    for (const [doc, expected] of DOCS)
      expect(
        readFileSync(join(dir, doc)).equals(
          crlfBom(readFileSync(join(fixtures, expected), 'utf8')),
        ),
        doc,
      ).toBe(true);
    const snapshot = DOCS.map(([doc]) => readFileSync(join(dir, doc)));
    const second = await runCli(['links', 'fix', ...rulesArgs, dir], { cwd: work });
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(/0 link\(s\) upgraded in 0 file\(s\)/);
    DOCS.forEach(([doc], i) =>
      expect(readFileSync(join(dir, doc)).equals(snapshot[i] as Buffer), doc).toBe(true),
    );
    const check = await runCli(['links', 'check', ...rulesArgs, dir], { cwd: work });
    expect(check.status).toBe(0);
  });

  it('--diff prints a unified diff that git apply takes, writes nothing and exits 1', async () => {
    const dir = copyDocs('diff');
    const r = await runCli(['links', 'fix', '--diff', ...rulesArgs, 'notes.txt'], { cwd: dir });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('\n--- a/notes.txt\n+++ b/notes.txt\n');
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe(
      readFileSync(join(fixtures, 'notes.txt'), 'utf8'),
    );
    const lines = r.stdout.split('\n');
    expect(lines).toContain('-"http://docs.test/quoted" and http://old.docs.test/page.');
    expect(lines).toContain('+"https://docs.test/quoted" and https://new.docs.test/page.');
    expect(lines).toContain(' Not covered: http://elsewhere.test/x');
    expect(r.stdout).not.toContain('-Not covered');
    expect(r.stderr).toMatch(
      /notes\.txt:4:31: http:\/\/old\.docs\.test\/page -> https:\/\/new\.docs\.test\/page \(ruleset Moved\)/,
    );
    // git apply (default -p1) applies it as written, giving what fix writes.
    const git = spawnSync('git', ['apply', '-'], { cwd: dir, input: r.stdout, encoding: 'utf8' });
    expect([git.status, git.stderr]).toEqual([0, '']);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe(
      readFileSync(join(fixtures, 'notes.expected.txt'), 'utf8'),
    );
    const clean = await runCli(['links', 'fix', '--diff', ...rulesArgs, 'notes.txt'], { cwd: dir });
    expect([clean.status, clean.stdout]).toEqual([0, '']);
  });
});

describe('links check', () => {
  it('exits 1 and reports file:line:col, old and new URL and ruleset', async () => {
    const dir = copyDocs('check');
    const r = await runCli(['links', 'check', ...rulesArgs, dir], { cwd: work });
    expect(r.status).toBe(1);
    const lines = r.stdout.split('\n');
    expect(lines).toContain(
      `${join(dir, 'guide.md')}:9:12: http://old.docs.test/page -> https://new.docs.test/page (ruleset Moved)`,
    );
    expect(lines).toContain(
      `${join(dir, 'guide.md')}:7:14: http://docs.test/a_b&c -> https://docs.test/a_b&c (ruleset Docs)`,
    );
    expect(lines).toContain(
      `${join(dir, 'page.html')}:17:80: http://img.docs.test/a@2x.png -> https://img.docs.test/a@2x.png (ruleset Docs)`,
    );
    // Code blocks, inline code, titles, HTML text and comments are not links.
    expect(r.stdout).not.toMatch(
      /fenced|indented|inline-code|title|in-code|in-comment|in-script|link-text|cell-code|html-code/,
    );
    // Files are not touched by check.
    for (const [doc] of DOCS)
      expect(readFileSync(join(dir, doc), 'utf8')).toBe(readFileSync(join(fixtures, doc), 'utf8'));
  });

  it('takes the ruleset options of rewrite: the bundled rulesets by default, --disable, --enable', async () => {
    const dir = join(work, 'defaults');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'wiki.md'), 'See [Example](http://en.wikipedia.org/wiki/Example).\n');
    const bundled = await runCli(['links', 'check', '--no-channels', join(dir, 'wiki.md')], {
      cwd: work,
    });
    expect(bundled.stdout).toContain(
      'wiki.md:1:15: http://en.wikipedia.org/wiki/Example -> https://en.wikipedia.org/wiki/Example (ruleset Wikipedia)',
    );
    expect(bundled.status).toBe(1);
    const notes = copyDocs('toggles');
    const disabled = await runCli(
      ['links', 'check', ...rulesArgs, '--disable', 'Docs', join(notes, 'notes.txt')],
      { cwd: work },
    );
    expect(disabled.stdout).toBe(
      `${join(notes, 'notes.txt')}:4:31: http://old.docs.test/page -> https://new.docs.test/page (ruleset Moved)\n1 file(s) scanned; 1 link(s) can be upgraded\n`,
    );
    const unknown = await runCli(
      ['links', 'check', ...rulesArgs, '--enable', 'Nope', join(notes, 'notes.txt')],
      { cwd: work },
    );
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('--enable "Nope": no loaded ruleset has that name');
  });

  it('--format json lists each finding with its position, context and ruleset', async () => {
    const dir = copyDocs('json');
    const r = await runCli(
      ['links', 'check', '--format', 'json', ...rulesArgs, join(dir, 'page.html')],
      { cwd: work },
    );
    expect(r.status).toBe(1);
    const report = JSON.parse(r.stdout) as {
      findings: Record<string, unknown>[];
      scannedFiles: number;
    };
    expect(report.scannedFiles).toBe(1);
    expect(report.findings).toHaveLength(16);
    expect(report.findings[0]).toEqual({
      file: join(dir, 'page.html'),
      line: 6,
      column: 32,
      endLine: 6,
      endColumn: 58,
      context: 'html-attribute:href',
      url: 'http://docs.test/style.css',
      rewritten: 'https://docs.test/style.css',
      ruleset: 'Docs',
      channel: null,
      status: 'upgradable',
    });
    expect(report.findings.map((f) => f['context'])).toContain('html-attribute:srcset');
  });

  it('--format sarif gives a SARIF 2.1.0 log with regions relative to the working directory and fixes', async () => {
    const dir = copyDocs('sarif');
    const r = await runCli(['links', 'check', '--format', 'sarif', ...rulesArgs, 'guide.md'], {
      cwd: dir,
    });
    expect(r.status).toBe(1);
    const log = JSON.parse(r.stdout);
    expect(log.version).toBe('2.1.0');
    expect(log.$schema).toMatch(/sarif-2\.1\.0/);
    const run0 = log.runs[0];
    expect(run0.tool.driver.name).toBe('httpsify');
    const ruleIds = run0.tool.driver.rules.map((rule: { id: string }) => rule.id);
    expect(run0.results).toHaveLength(15);
    for (const result of run0.results) {
      expect(ruleIds[result.ruleIndex]).toBe(result.ruleId);
      expect(['warning', 'note']).toContain(result.level);
      expect(typeof result.message.text).toBe('string');
      const loc = result.locations[0].physicalLocation;
      expect(loc.artifactLocation).toEqual({ uri: 'guide.md', uriBaseId: '%SRCROOT%' });
      expect(loc.region.startLine).toBeGreaterThan(0);
      expect(loc.region.startColumn).toBeGreaterThan(0);
    }
    const moved = run0.results.find(
      (x: { properties: { url: string } }) => x.properties.url === 'http://old.docs.test/page',
    );
    expect(moved.locations[0].physicalLocation.region).toEqual({
      startLine: 9,
      startColumn: 12,
      endLine: 9,
      endColumn: 37,
    });
    expect(moved.fixes[0].artifactChanges[0].replacements[0].insertedContent.text).toBe(
      'https://new.docs.test/page',
    );
    expect(run0.originalUriBaseIds['%SRCROOT%'].uri).toMatch(/^file:\/\/.*\/$/);
  });

  it('walks directories honouring .gitignore (nested files and negations), never entering .git', async () => {
    const root = join(work, 'repo');
    for (const d of ['.git', 'docs/ignored', 'docs/sub', 'build'])
      mkdirSync(join(root, d), { recursive: true });
    const doc = '[a](http://docs.test/a)\n';
    for (const f of [
      'README.md',
      '.git/notes.md',
      'docs/ignored/x.md',
      'docs/sub/kept.md',
      'docs/sub/drop.md',
      'docs/sub/drop-but-keep.md',
      'build/out.html',
      'docs/image.png',
      'docs/notes.txt',
    ])
      writeFileSync(join(root, f), doc);
    writeFileSync(join(root, 'build/out.html'), '<a href="http://docs.test/a">a</a>\n');
    writeFileSync(join(root, '.gitignore'), 'build/\ndocs/ignored/\n');
    writeFileSync(join(root, 'docs/sub/.gitignore'), 'drop*.md\n!drop-but-keep.md\n');
    const r = await runCli(['links', 'check', '--format', 'json', ...rulesArgs, 'docs'], {
      cwd: root,
    });
    const files = (JSON.parse(r.stdout) as { findings: { file: string }[] }).findings
      .map((f) => f.file)
      .sort();
    expect(files).toEqual(['docs/notes.txt', 'docs/sub/drop-but-keep.md', 'docs/sub/kept.md']);
    const all = await runCli(['links', 'check', '--format', 'json', ...rulesArgs, '.'], {
      cwd: root,
    });
    expect(
      (JSON.parse(all.stdout) as { findings: { file: string }[] }).findings
        .map((f) => f.file)
        .sort(),
    ).toEqual(['README.md', 'docs/notes.txt', 'docs/sub/drop-but-keep.md', 'docs/sub/kept.md']);
    // A directory named on the command line is walked even if .gitignore excludes it.
    const named = await runCli(['links', 'check', '--format', 'json', ...rulesArgs, 'build'], {
      cwd: root,
    });
    expect(
      (JSON.parse(named.stdout) as { findings: { file: string }[] }).findings.map((f) => f.file),
    ).toEqual(['build/out.html']);
  });
});

describe('hostile input', () => {
  it('skips binary, non-UTF-8 and oversized files with a reason, survives symlink loops and broken links', async () => {
    const dir = join(work, 'hostile');
    mkdirSync(join(dir, 'loop'), { recursive: true });
    writeFileSync(join(dir, 'good.md'), '[a](http://docs.test/a)\n');
    writeFileSync(
      join(dir, 'binary.md'),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0x68, 0x74, 0x74, 0x70]),
    );
    writeFileSync(join(dir, 'latin1.txt'), Buffer.from('caf\xe9 http://docs.test/x\n', 'latin1'));
    writeFileSync(join(dir, 'big.txt'), `${'x'.repeat(5000)} http://docs.test/big\n`);
    writeFileSync(
      join(dir, 'broken.html'),
      '<a href="http://docs.test/b"<<<>>><<!--<a href=http://docs.test/c'.repeat(20),
    );
    symlinkSync('..', join(dir, 'loop', 'up'));
    symlinkSync(join(dir, 'nowhere.md'), join(dir, 'dangling.md'));
    const r = await runCli(['links', 'check', '--max-size', '4096', ...rulesArgs, dir], {
      cwd: work,
    });
    expect(r.stderr).toContain(
      `${join(dir, 'binary.md')}: skipped: binary file (contains NUL bytes)`,
    );
    expect(r.stderr).toContain(`${join(dir, 'latin1.txt')}: skipped: not valid UTF-8`);
    expect(r.stderr).toContain(
      `${join(dir, 'big.txt')}: skipped: too large (5022 bytes; the limit is 4096`,
    );
    expect(r.stderr).toContain(`${join(dir, 'loop', 'up')}: skipped:`);
    expect(r.stderr).toContain(`${join(dir, 'dangling.md')}: no such file or directory`);
    expect(r.stdout).toContain(
      `${join(dir, 'good.md')}:1:5: http://docs.test/a -> https://docs.test/a`,
    );
    expect(r.stdout).toContain(`${join(dir, 'broken.html')}:1:10: http://docs.test/b`);
    // A dangling link is an error (exit 2): a file named on purpose could not be checked.
    expect(r.status).toBe(2);
  });

  it('a binary file named on the command line is an error (exit 2), found in a folder a skip', async () => {
    const dir = join(work, 'named-binary');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'logo.md'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0x68]));
    writeFileSync(join(dir, 'good.md'), '[a](https://docs.test/a)\n');
    const named = await runCli(['links', 'check', ...rulesArgs, join(dir, 'logo.md')]);
    expect(named.stderr).toContain(
      `${join(dir, 'logo.md')}: cannot scan: binary file (contains NUL bytes)`,
    );
    expect(named.status).toBe(2);
    const walked = await runCli(['links', 'check', ...rulesArgs, dir]);
    expect(walked.stderr).toContain(
      `${join(dir, 'logo.md')}: skipped: binary file (contains NUL bytes)`,
    );
    expect(walked.status).toBe(0);
  });

  it('gives up a Markdown file the parser cannot finish in time, and goes on with the others', async () => {
    const dir = join(work, 'slow');
    mkdirSync(dir, { recursive: true });
    // 50,000 nested block quotes: micromark needs over a minute for these 50 KB.
    writeFileSync(join(dir, 'a-deep.md'), `${'>'.repeat(50_000)} [a](http://docs.test/deep)\n`);
    writeFileSync(join(dir, 'b-good.md'), '[a](http://docs.test/a)\n');
    const r = await runCli(['links', 'check', '--parse-timeout', '1000', ...rulesArgs, dir], {
      cwd: work,
    });
    expect(r.stderr).toContain(
      `${join(dir, 'a-deep.md')}: skipped: too complex: Markdown parsing did not finish within 1000 ms`,
    );
    expect(r.stdout).toContain(
      `${join(dir, 'b-good.md')}:1:5: http://docs.test/a -> https://docs.test/a`,
    );
    expect(r.status).toBe(1);
  });

  it('reports an unreadable file as an error naming it', async () => {
    const dir = join(work, 'unreadable');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'secret.md');
    writeFileSync(file, '[a](http://docs.test/a)\n');
    chmodSync(file, 0);
    const r = await runCli(['links', 'check', ...rulesArgs, file, join(dir, 'missing.md')], {
      cwd: work,
    });
    chmodSync(file, 0o644);
    expect(r.stderr).toContain(`${join(dir, 'missing.md')}: no such file or directory`);
    // root reads anything; elsewhere the mode-0 file is a permission error.
    if (process.getuid?.() !== 0) expect(r.stderr).toContain(`${file}: permission denied`);
    expect(r.status).toBe(2);
  });

  it('--upgrade-all without --verify is a usage error', async () => {
    const r = await runCli(['links', 'check', '--upgrade-all', ...rulesArgs, work], { cwd: work });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--upgrade-all needs --verify/);
  });
});

describe('links stays inside the paths it was given', () => {
  it('reports and skips symbolic links leading out; check reads nothing there, fix writes nothing there', async () => {
    const outside = join(work, 'outside');
    mkdirSync(join(outside, 'deep'), { recursive: true });
    const secret = 'see http://docs.test/secret\n';
    writeFileSync(join(outside, 'secret.md'), secret);
    writeFileSync(join(outside, 'deep', 'more.md'), secret);
    const dir = join(work, 'rooted');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'inside.md'), 'see http://docs.test/inside\n');
    writeFileSync(join(dir, 'sub', 'target.md'), 'see http://docs.test/target\n');
    symlinkSync(join(outside, 'secret.md'), join(dir, 'out.md'));
    symlinkSync(join(outside, 'deep'), join(dir, 'outdir'));
    // A link that stays inside is followed (and its file rewritten once).
    symlinkSync(join(dir, 'sub', 'target.md'), join(dir, 'in-link.md'));

    const checked = await runCli(['links', 'check', '--format', 'json', ...rulesArgs, dir], {
      cwd: work,
    });
    const report = JSON.parse(checked.stdout) as { findings: { file: string }[] };
    expect(report.findings.map((f) => f.file).sort()).toEqual([
      join(dir, 'in-link.md'),
      join(dir, 'inside.md'),
    ]);
    expect(checked.stderr).toContain(`out.md: skipped: a symbolic link leading out of`);
    expect(checked.stderr).toContain(`outdir: skipped: a symbolic link leading out of`);

    const fixed = await runCli(['links', 'fix', ...rulesArgs, dir], { cwd: work });
    expect(fixed.status).toBe(0);
    expect(readFileSync(join(outside, 'secret.md'), 'utf8')).toBe(secret);
    expect(readFileSync(join(outside, 'deep', 'more.md'), 'utf8')).toBe(secret);
    expect(readFileSync(join(dir, 'inside.md'), 'utf8')).toBe('see https://docs.test/inside\n');
    expect(readFileSync(join(dir, 'sub', 'target.md'), 'utf8')).toBe(
      'see https://docs.test/target\n',
    );
  });

  it('fix writes in place: hard links stay joined, permissions stay as they were', async () => {
    const dir = join(work, 'inplace');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'doc.md');
    writeFileSync(file, 'see http://docs.test/a\n');
    chmodSync(file, 0o640);
    const twin = join(work, 'inplace-twin.md');
    linkSync(file, twin);
    const before = statSync(file);
    const r = await runCli(['links', 'fix', ...rulesArgs, dir], { cwd: work });
    expect(r.status).toBe(0);
    const after = statSync(file);
    expect(after.ino).toBe(before.ino);
    expect(after.mode & 0o777).toBe(0o640);
    expect(after.nlink).toBe(2);
    expect(readFileSync(twin, 'utf8')).toBe('see https://docs.test/a\n');
  });
});

describe('links --verify (local HTTP and HTTPS servers)', () => {
  let pki: TestPki;
  let dual: DualServer;
  let plainOnly: LocalServers;
  const PAGE = (words: string): string =>
    `<!doctype html><html><head><title>t</title><script>var t=${Math.random()}</script></head><body><h1>${words}</h1><p>${'lorem ipsum dolor sit amet '.repeat(20)}</p></body></html>`;
  const HOSTS = [
    'same.test',
    'differs.test',
    'status.test',
    'nohttps.test',
    'uncovered.test',
    'away.test',
    'elsewhere.test',
  ];

  beforeAll(async () => {
    pki = makeTestPki(HOSTS);
    dual = await startDualServer(pki, (req, res) => {
      const html = { 'content-type': 'text/html; charset=utf-8' };
      if (req.host === 'differs.test' && req.scheme === 'https')
        return void res
          .writeHead(200, html)
          .end(PAGE('a completely different parked domain page for sale '.repeat(30)));
      if (req.host === 'status.test' && req.scheme === 'https')
        return void res.writeHead(404, html).end(PAGE('not found'));
      if (req.host === 'away.test' && req.scheme === 'https')
        return void res.writeHead(301, { location: `https://elsewhere.test:${dual.port}/` }).end();
      // The same page over both schemes, with a script that differs on every load.
      res.writeHead(200, html).end(PAGE(`welcome to ${req.host}`));
    });
    plainOnly = await startLocalServers(
      pki,
      {
        'nohttps.test': (_req, res) =>
          res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE('plain')),
      },
      {},
    );
  }, 60_000);

  afterAll(async () => {
    await dual?.close();
    await plainOnly?.close();
  });

  it('keeps only rewrites whose HTTPS answer is equivalent; --upgrade-all adds hosts no ruleset covers', async () => {
    const dir = join(work, 'verify');
    mkdirSync(dir, { recursive: true });
    const P = dual.port;
    writeFileSync(
      join(work, 'Local.xml'),
      `<ruleset name="Local">\n${['same.test', 'differs.test', 'status.test', 'nohttps.test', 'away.test'].map((h) => `\t<target host="${h}" />\n`).join('')}\t<rule from="^http:" to="https:" />\n</ruleset>\n`,
    );
    const doc = [
      `- [same](http://same.test:${P}/page)`,
      `- [differs](http://differs.test:${P}/)`,
      `- [status](http://status.test:${P}/)`,
      `- [no https](http://nohttps.test:${plainOnly.httpPort}/)`,
      `- [away](http://away.test:${P}/)`,
      `- [uncovered](http://uncovered.test:${P}/x)`,
      '',
    ].join('\n');
    writeFileSync(join(dir, 'links.md'), doc);
    const common = [
      '--rules',
      join(work, 'Local.xml'),
      '--ca',
      pki.caPath,
      '--timeout',
      '5000',
      ...HOSTS.flatMap((h) => ['--resolve', `${h}:127.0.0.1`]),
    ];

    const checked = await runCli(
      ['links', 'check', '--verify', '--format', 'json', ...common, dir],
      { cwd: work },
    );
    expect(checked.status).toBe(1);
    // No progress bar when stderr is not a terminal.
    expect(checked.stderr).not.toContain('\r');
    const findings = (
      JSON.parse(checked.stdout) as { findings: { url: string; status: string; reason?: string }[] }
    ).findings;
    const byHost = Object.fromEntries(findings.map((f) => [new URL(f.url).hostname, f]));
    expect(byHost['same.test']?.status).toBe('upgradable');
    expect(byHost['differs.test']?.reason).toMatch(
      /the content differs \(similarity 0\.\d\d, needs 0\.9\)/,
    );
    expect(byHost['status.test']?.reason).toBe('HTTPS answered 404 where HTTP answered 200');
    expect(byHost['nohttps.test']?.reason).toMatch(/^the https URL failed: /);
    expect(byHost['away.test']?.reason).toBe(
      'HTTPS ends on elsewhere.test where HTTP ends on away.test',
    );
    expect(byHost['uncovered.test']).toBeUndefined();

    const fixed = await runCli(['links', 'fix', '--verify', '--upgrade-all', ...common, dir], {
      cwd: work,
    });
    expect(fixed.status).toBe(0);
    expect(fixed.stdout).toMatch(
      /not verified: http:\/\/status\.test:\d+\/ -> https:\/\/status\.test:\d+\/ \(ruleset Local\): HTTPS answered 404/,
    );
    expect(readFileSync(join(dir, 'links.md'), 'utf8')).toBe(
      doc
        .replace(`http://same.test:${P}/page`, `https://same.test:${P}/page`)
        .replace(`http://uncovered.test:${P}/x`, `https://uncovered.test:${P}/x`),
    );
  });

  it('--verify refuses loopback and private addresses, named or resolved, unless --allow-private', async () => {
    const dir = join(work, 'verify-private');
    mkdirSync(dir, { recursive: true });
    const P = dual.port;
    // A pull request naming internal services: a loopback IP, a private one, and a name resolving to loopback.
    writeFileSync(
      join(dir, 'links.md'),
      [
        `- http://127.0.0.1:${P}/admin`,
        `- http://10.1.2.3:${P}/admin`,
        `- http://localhost:${P}/admin`,
        '',
      ].join('\n'),
    );
    const common = [
      '--verify',
      '--upgrade-all',
      '--format',
      'json',
      '--timeout',
      '5000',
      ...rulesArgs,
      dir,
    ];
    const before = dual.requests.length;
    const refused = await runCli(['links', 'check', ...common], { cwd: work });
    const findings = (
      JSON.parse(refused.stdout) as { findings: { url: string; status: string; reason?: string }[] }
    ).findings;
    expect(findings).toHaveLength(3);
    for (const f of findings) {
      expect(f.status, f.url).not.toBe('upgradable');
      expect(f.reason, f.url).toMatch(
        /refused: .*(loopback, private or link-local).*--allow-private/,
      );
    }
    expect(dual.requests.slice(before)).toEqual([]);
    // With --allow-private they are fetched (and judged on what they answer).
    const allowed = await runCli(['links', 'check', '--allow-private', ...common], { cwd: work });
    const reasons = (
      JSON.parse(allowed.stdout) as { findings: { reason?: string }[] }
    ).findings.map((f) => f.reason ?? '');
    expect(reasons.some((r) => r.includes('refused'))).toBe(false);
    expect(dual.requests.length).toBeGreaterThan(before);
  });
});

describe('fixtures stay copies', () => {
  it('the fixture documents are the ones the expectations were written for', () => {
    // Guards against editing one side only: the expected files differ from the inputs only in URLs.
    for (const [doc, expected] of DOCS) {
      const a = readFileSync(join(fixtures, doc), 'utf8').replace(
        /https?:\/\/[^\s"'<>()|]*/gi,
        'URL',
      );
      const b = readFileSync(join(fixtures, expected), 'utf8').replace(
        /https?:\/\/[^\s"'<>()|]*/gi,
        'URL',
      );
      expect(a, doc).toBe(b);
    }
  });
});
