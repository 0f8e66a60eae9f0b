import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { coveringTarget, targetKeysFor } from '@httpsify/engine/authoring';
import { corpusRulesDir, readOracle } from '../../engine/test/support/corpus.js';
import { runCheck } from '../src/commands/check.js';
import { runTest } from '../src/commands/test.js';
import { CORPUS_RULESETS, workTimeout } from '../../engine/test/support/work-timeout.js';
import { runCliSync } from './support/run-cli.js';

const BAD =
  '<ruleset name="Bad">\n\t<target host="example.com" />\n\t<rule from="^http://example\\.com/" to="https://example.com/$1" />\n</ruleset>\n';

describe('httpsify check', () => {
  it('prints file:line:col findings and exits 1 on errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-check-'));
    const file = join(dir, 'Bad.xml');
    writeFileSync(
      file,
      '<ruleset name="Bad">\n\t<target host="Example.com" />\n\t<rule from="^http://example\\.com/" to="https:" />\n</ruleset>\n',
    );
    const run = runCliSync(['check', file]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`${file}:2:`);
    expect(run.stdout).toMatch(/error target-case: target "Example\.com" has upper-case letters/);
    expect(run.stdout).toMatch(/error to-https-colon/);
    expect(run.stderr).toMatch(
      /1 file: \d+ errors?, \d+ warnings?, \d+ info in [\d.]+ s \(public suffix list: npm tldts@\d+\.\d+\.\d+/,
    );
    const json = runCliSync(['check', '--format', 'json', dir]);
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      files: 1,
      counts: { 'target-case': 1, 'to-https-colon': 1 },
    });
  });
  it('exits 0 and says so for a clean file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-check-'));
    writeFileSync(
      join(dir, 'Good.xml'),
      '<ruleset name="Good">\n\t<target host="example.com" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
    );
    const run = runCliSync(['check', dir, '--format', 'json']);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      files: 1,
      errors: 0,
      warnings: 0,
      diagnostics: [],
    });
  });
  it('names a missing path', () => {
    const run = runCliSync(['check', '/nonexistent/rules']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('/nonexistent/rules: no such file or directory');
  });
  it(
    'finds the known problems of the 2018 corpus',
    async () => {
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
      const names = (code: string) =>
        new Set(
          report.diagnostics.filter((d) => d.code === code).map((d) => d.file.split('/').pop()),
        );
      expect(names('duplicate-name')).toEqual(
        new Set([
          'Copenhagenmarathon.dk.xml',
          'Copenhagenmarathon.dk-falsemixed.xml',
          'EZTV.xml',
          'eztv.ag.xml',
          'Quantcast.xml',
          'QuantCount.xml',
        ]),
      );
      expect(names('dead-rule').has('Motorola.xml')).toBe(true);
      expect(names('to-literal-dollar')).toEqual(new Set(['University_of_Mainz.xml']));
      expect(names('to-missing-group').has('DEMO.xml')).toBe(true);
      // Issue 25: a `to` copying a group that reaches the #fragment twice or before more text.
      expect(c['to-copies-fragment']).toBe(15);
      expect(names('to-copies-fragment').has('Opera.com.xml')).toBe(true);
      expect(c['target-non-ascii']).toBe(2);
      // Issue 18: unreachable-* only when proven (13 false alarms gone), gov.uk & co. allowed,
      // EFF's checks (35 test URLs without "/", no wildcard covering another target in the corpus).
      expect(c['unreachable-rule']).toBe(108);
      expect(c['unreachable-exclusion']).toBe(24);
      expect(c['target-public-suffix']).toBeUndefined();
      expect(c['test-url-slash']).toBe(35);
      expect(c['target-covered']).toBeUndefined();
      expect(names('target-no-public-suffix')).toEqual(
        new Set(['Bitly_branded_short_domains.xml', 'Uni.Lu.xml']),
      );
      expect(
        report.diagnostics
          .filter((d) => d.code === 'changes-domain')
          .every((d) => d.severity === 'info'),
      ).toBe(true);
      // Every unreachable-* finding holds on real URLs: no oracle URL and no test URL of a host the
      // ruleset's targets cover matches the pattern.
      const byKey = new Map<string, string[]>();
      for (const { url } of await readOracle()) {
        for (const key of targetKeysFor(new URL(url).hostname))
          byKey.set(key, [...(byKey.get(key) ?? []), url]);
      }
      let confirmed = 0;
      for (const d of report.diagnostics.filter((x) => x.code.startsWith('unreachable-'))) {
        const ruleset = parseRulesetXml(readFileSync(d.file, 'utf8'), d.file).ruleset!;
        const patterns =
          d.code === 'unreachable-rule'
            ? ruleset.rules.map((r) => [r.loc?.line, r.from] as const)
            : ruleset.exclusions.map((e) => [e.loc?.line, e.pattern] as const);
        const re = new RegExp(patterns.find(([line]) => line === d.line)![1]);
        const targets = new Set(ruleset.targets.map((t) => t.host));
        const own = ruleset.tests
          .map((t) => t.url)
          .filter((u) => URL.canParse(u) && coveringTarget(new URL(u).hostname, targets) !== null);
        const urls = [...own, ...ruleset.targets.flatMap((t) => byKey.get(t.host) ?? [])];
        expect([d.file, d.line, urls.filter((u) => re.test(u))]).toEqual([d.file, d.line, []]);
        confirmed++;
      }
      expect(confirmed).toBe(132);
    },
    workTimeout(CORPUS_RULESETS, 10),
  );

  it('a baseline hides known findings until the file changes; --no-baseline shows them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-baseline-'));
    mkdirSync(join(dir, 'rules'));
    writeFileSync(join(dir, 'rules', 'Bad.xml'), BAD);
    expect(runCliSync(['check', 'rules'], { cwd: dir }).status).toBe(1);
    const write = runCliSync(['check', 'rules', '--write-baseline'], { cwd: dir });
    expect(write.stderr).toContain(
      'httpsify-baseline.json: wrote 1 finding of 1 file to the check baseline',
    );
    const baseline = JSON.parse(readFileSync(join(dir, 'httpsify-baseline.json'), 'utf8'));
    expect(Object.values(baseline.check)).toEqual([
      { file: join('rules', 'Bad.xml'), findings: ['to-missing-group@3:2'] },
    ]);
    const quiet = runCliSync(['check', 'rules'], { cwd: dir });
    expect([quiet.status, quiet.stdout]).toEqual([0, '']);
    expect(quiet.stderr).toContain('the baseline hid 1 finding in 1 unchanged file');
    expect(runCliSync(['check', 'rules', '--no-baseline'], { cwd: dir }).status).toBe(1);
    // test keeps its own section of the same file.
    writeFileSync(
      join(dir, 'rules', 'Wild.xml'),
      '<ruleset name="W">\n\t<target host="*.example.org" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
    );
    expect(runCliSync(['test', 'rules'], { cwd: dir }).status).toBe(1);
    runCliSync(['test', 'rules', '--write-baseline'], { cwd: dir });
    const tested = runCliSync(['test', 'rules'], { cwd: dir });
    expect(tested.status).toBe(0);
    expect(tested.stdout).toContain('the baseline hid 2 findings in 1 unchanged file');
    expect(
      Object.keys(JSON.parse(readFileSync(join(dir, 'httpsify-baseline.json'), 'utf8'))),
    ).toEqual(['version', 'check', 'test']);
    // An edit (even a comment) changes the hash: the file is checked in full again.
    writeFileSync(join(dir, 'rules', 'Bad.xml'), `<!-- edited -->\n${BAD}`);
    const edited = runCliSync(['check', 'rules'], { cwd: dir });
    expect(edited.status).toBe(1);
    expect(edited.stdout).toContain('error to-missing-group');
    expect(edited.stderr).toContain('1 baseline entry matches no file any more');
    writeFileSync(join(dir, 'httpsify-baseline.json'), '{"version": 2}');
    expect(runCliSync(['check', 'rules'], { cwd: dir }).stderr).toContain(
      'httpsify-baseline.json: not a baseline file',
    );
  });
  it('a baseline is found from a subfolder, and checking part of it calls nothing else stale', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-baseline-up-'));
    mkdirSync(join(dir, '.git'));
    mkdirSync(join(dir, 'rules'));
    writeFileSync(join(dir, 'rules', 'Bad.xml'), BAD);
    writeFileSync(join(dir, 'rules', 'Worse.xml'), BAD.replace(/example/g, 'sample'));
    runCliSync(['check', 'rules', '--write-baseline'], { cwd: dir });
    // Run from inside rules/: the repository's baseline is the one that applies.
    const inside = runCliSync(['check', '.'], { cwd: join(dir, 'rules') });
    expect([inside.status, inside.stdout]).toEqual([0, '']);
    expect(inside.stderr).toContain('the baseline hid 4 findings in 2 unchanged files');
    // One file of two: the other's entry is not stale, it is only not part of this run.
    const one = runCliSync(['check', join('rules', 'Bad.xml')], { cwd: dir });
    expect(one.status).toBe(0);
    expect(one.stderr).not.toContain('stale');
    expect(one.stderr).not.toContain('matches no file');
    // Gone from the folder checked: that entry is stale.
    writeFileSync(
      join(dir, 'rules', 'Worse.xml'),
      `<!-- edited -->\n${BAD.replace(/example/g, 'sample')}`,
    );
    expect(runCliSync(['check', 'rules'], { cwd: dir }).stderr).toContain(
      '1 baseline entry matches no file any more',
    );
    // The search stops at the repository's root (.git): a baseline above it is not this one's.
    const inner = join(dir, 'rules', 'nested');
    mkdirSync(join(inner, '.git'), { recursive: true });
    writeFileSync(join(inner, 'Bad.xml'), BAD);
    expect(runCliSync(['check', '.'], { cwd: inner }).status).toBe(1);
  });

  it('an httpsify-ignore comment with a reason hides its code in that file; without a reason it is an error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-ignore-'));
    writeFileSync(
      join(dir, 'A.xml'),
      `<!-- httpsify-ignore to-missing-group: the site really serves /$1 -->\n${BAD.replace('Bad', 'A')}`,
    );
    writeFileSync(
      join(dir, 'B.xml'),
      `<!-- httpsify-ignore to-missing-group -->\n${BAD.replace('Bad', 'B').replace(/example/g, 'sample')}`,
    );
    const out = runCliSync(['check', dir, '--format', 'json']);
    const report = JSON.parse(out.stdout);
    expect(
      report.diagnostics.map((d: { file: string; code: string; line: number }) => [
        d.file.split('/').pop(),
        d.code,
        d.line,
      ]),
    ).toEqual([
      ['B.xml', 'suppression-reason', 1],
      ['B.xml', 'to-missing-group', 4],
    ]);
    expect(report.suppressed).toBe(1);
    // The engine ignores comments: the suppressed ruleset still loads and rewrites.
    expect(
      runCliSync(['rewrite', '--rules', join(dir, 'A.xml'), 'http://example.com/']).stdout.trim(),
    ).toBe('https://example.com/$1');
    const tested = runTest([dir]);
    expect(tested.counts['suppression-reason']).toBe(1);
  });
  it(
    '--changed reports one file with the checks across the whole directory, much faster than a full run',
    () => {
      const dir = corpusRulesDir();
      const one = runCliSync([
        'check',
        dir,
        '--changed',
        join(dir, 'Channel_4.xml'),
        '--no-baseline',
      ]);
      expect(one.stdout).toMatch(
        /Channel_4\.xml:77:2: warning duplicate-target: target "mailing\.channel4\.com" is also a target of Channel_4-falsemixed\.xml/,
      );
      expect(
        one.stdout
          .split('\n')
          .filter((l) => l !== '')
          .every((l) => l.startsWith(join(dir, 'Channel_4.xml'))),
      ).toBe(true);
      expect(one.stderr).toMatch(/^1 changed file \(checks across files over 24264\)/);
    },
    workTimeout(CORPUS_RULESETS, 5),
  );
  it('--changed-since takes the changed and new files from git', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-git-'));
    const git = (...args: string[]) =>
      spawnSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
        cwd: dir,
        encoding: 'utf8',
      });
    git('init', '-q');
    const rules = corpusRulesDir();
    for (const f of ['Channel_4.xml', 'Channel_4-falsemixed.xml', 'Yahoo.xml'])
      copyFileSync(join(rules, f), join(dir, f));
    git('add', '.');
    git('commit', '-qm', 'init');
    expect(runCliSync(['check', dir, '--changed-since', 'HEAD']).stderr).toMatch(
      /^0 changed files/,
    );
    writeFileSync(
      join(dir, 'Channel_4.xml'),
      `${readFileSync(join(dir, 'Channel_4.xml'), 'utf8')}<!-- edited -->\n`,
    );
    writeFileSync(join(dir, 'New.xml'), BAD);
    const out = runCliSync(['check', dir, '--changed-since', 'HEAD']);
    expect(out.stderr).toMatch(/^2 changed files \(checks across files over 4\)/);
    expect(out.stdout).toContain('Channel_4.xml:77:2: warning duplicate-target');
    expect(out.stdout).toContain('New.xml:3:2: error to-missing-group');
    expect(out.stdout).not.toContain('Yahoo.xml');
    expect(runCliSync(['check', dir, '--changed-since', '--evil']).stderr).toContain(
      'is not a git revision',
    );
    const unknown = runCliSync(['check', dir, '--changed-since', 'no-such-branch']);
    expect([unknown.status, unknown.stderr]).toEqual([
      2,
      `httpsify: --changed-since: no commit "no-such-branch" in the repository of ${dir}\n`,
    ]);
  });
  it('--changed-since outside git says so, with what to use instead', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-no-git-'));
    writeFileSync(join(dir, 'Bad.xml'), BAD);
    const out = runCliSync(['check', dir, '--changed-since', 'HEAD'], { cwd: dir });
    expect([out.status, out.stderr]).toEqual([
      2,
      `httpsify: --changed-since compares with git, and ${dir} is not in a git work tree: give the files with --changed instead\n`,
    ]);
  });
  it('--fix-dry-run shows a diff, --fix applies it, and the results on the test URLs stay the same', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-fix-'));
    const xml =
      '<ruleset name="T">\n\t<target host="example.com" />\n\t<target host="www.example.com" />\n\t<rule from="^http://(www\\.)?example\\.com/" to="https://$1example.com/" />\n\t<securecookie host=".*" name=".+" />\n</ruleset>\n';
    writeFileSync(join(dir, 'T.xml'), xml);
    const shown = runCliSync(['check', '--fix-dry-run', dir]);
    // Three lines of context, as git diff prints: plain `git apply` takes it (patches-apply.test.ts).
    expect(shown.stdout).toBe(
      `${'='.repeat(67)}\n--- a/${join(dir, 'T.xml')}\n+++ b/${join(dir, 'T.xml')}\n@@ -1,6 +1,6 @@\n <ruleset name="T">\n \t<target host="example.com" />\n \t<target host="www.example.com" />\n-\t<rule from="^http://(www\\.)?example\\.com/" to="https://$1example.com/" />\n-\t<securecookie host=".*" name=".+" />\n+\t<rule from="^http:" to="https:" />\n+\t<securecookie host=".+" name=".+" />\n </ruleset>\n`,
    );
    expect(shown.stderr).toBe('1 file: 2 fixes in 1 file (--fix writes them)\n');
    expect(readFileSync(join(dir, 'T.xml'), 'utf8')).toBe(xml);
    const before = [
      'http://example.com/a',
      'http://www.example.com/',
      'http://other.example.com/',
    ].map((u) => runCliSync(['rewrite', '--rules', dir, u]).stdout);
    expect(runCliSync(['check', '--fix', '--write', dir]).stderr).toContain('written');
    expect(readFileSync(join(dir, 'T.xml'), 'utf8')).toBe(
      xml
        .replace(
          '<rule from="^http://(www\\.)?example\\.com/" to="https://$1example.com/" />',
          '<rule from="^http:" to="https:" />',
        )
        .replace('host=".*"', 'host=".+"'),
    );
    expect(
      ['http://example.com/a', 'http://www.example.com/', 'http://other.example.com/'].map(
        (u) => runCliSync(['rewrite', '--rules', dir, u]).stdout,
      ),
    ).toEqual(before);
    expect(runCliSync(['check', '--fix-dry-run', dir]).stderr).toContain('0 fixes in 0 files');
  });
});

describe('httpsify check and test for CI', () => {
  const DOT =
    '<ruleset name="Dot">\n\t<target host="example.com" />\n\t<rule from="^http://example.com/" to="https://example.com/" />\n</ruleset>\n';
  const project = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-ci-'));
    mkdirSync(join(dir, 'rules', 'sub'), { recursive: true });
    return dir;
  };

  it('--max-warnings n fails a run with more warnings than n left after the baseline', () => {
    const dir = project();
    writeFileSync(
      join(dir, 'rules', 'Old.xml'),
      DOT.replace('Dot', 'Old').replace(/example/g, 'old'),
    );
    expect(runCliSync(['check', 'rules', '--write-baseline'], { cwd: dir }).status).toBe(0);
    expect(runCliSync(['check', 'rules', '--max-warnings', '0'], { cwd: dir }).status).toBe(0);
    // A new unescaped dot in a new file: a warning the baseline does not know.
    writeFileSync(join(dir, 'rules', 'Dot.xml'), DOT);
    expect(runCliSync(['check', 'rules'], { cwd: dir }).status).toBe(0);
    const strict = runCliSync(['check', 'rules', '--max-warnings', '0'], { cwd: dir });
    expect(strict.status).toBe(1);
    expect(strict.stderr).toContain('1 warning, more than --max-warnings 0 allows');
    expect(runCliSync(['check', 'rules', '--max-warnings', '1'], { cwd: dir }).status).toBe(0);
    expect(runCliSync(['check', 'rules', '--max-warnings', 'some'], { cwd: dir }).status).toBe(2);
    // test counts its warnings the same way (a test URL its target already implies is one).
    const twice =
      '<ruleset name="T">\n\t<target host="example.org" />\n\t<rule from="^http:" to="https:" />\n\t<test url="http://example.org/" />\n</ruleset>\n';
    writeFileSync(join(dir, 'rules', 'Twice.xml'), twice);
    expect(runTest([join(dir, 'rules', 'Twice.xml')]).warnings).toBe(1);
    expect(
      runCliSync(['test', 'rules/Twice.xml', '--max-warnings', '1'], { cwd: dir }).status,
    ).toBe(0);
    const over = runCliSync(['test', 'rules/Twice.xml', '--max-warnings', '0'], { cwd: dir });
    expect(over.stderr).toContain('1 warning, more than --max-warnings 0 allows');
    expect(over.status).toBe(1);
  });

  it('--write-baseline replaces only the entries of the files it checked', () => {
    const dir = project();
    writeFileSync(join(dir, 'rules', 'Bad.xml'), BAD);
    writeFileSync(join(dir, 'rules', 'sub', 'Dot.xml'), DOT);
    expect(runCliSync(['check', 'rules', '--write-baseline'], { cwd: dir }).status).toBe(0);
    const written = runCliSync(['check', 'rules/sub', '--write-baseline'], { cwd: dir });
    expect(written.stderr).toContain(
      'wrote 1 finding of 1 file to the check baseline; kept the entries of 1 file outside rules/sub',
    );
    const baseline = JSON.parse(readFileSync(join(dir, 'httpsify-baseline.json'), 'utf8'));
    expect(Object.values(baseline.check).map((e) => (e as { file: string }).file)).toEqual([
      join('rules', 'Bad.xml'),
      join('rules', 'sub', 'Dot.xml'),
    ]);
    // The accepted finding of rules/Bad.xml still hides: check rules passes.
    expect(runCliSync(['check', 'rules'], { cwd: dir }).status).toBe(0);
    // A file of the checked directory that is gone, or fixed, loses its entry.
    writeFileSync(
      join(dir, 'rules', 'sub', 'Dot.xml'),
      DOT.replace('example.com/"', 'example\\.com/"'),
    );
    runCliSync(['check', 'rules/sub', '--write-baseline'], { cwd: dir });
    const after = JSON.parse(readFileSync(join(dir, 'httpsify-baseline.json'), 'utf8'));
    expect(Object.values(after.check).map((e) => (e as { file: string }).file)).toEqual([
      join('rules', 'Bad.xml'),
    ]);
  });

  it('a directory without *.xml is an error (exit 2); no path means the current directory', () => {
    const dir = project();
    const empty = runCliSync(['check', 'rules/sub'], { cwd: dir });
    expect([empty.status, empty.stderr]).toEqual([
      2,
      'httpsify: rules/sub: no *.xml rulesets there\n',
    ]);
    expect(runCliSync(['test', 'rules/sub'], { cwd: dir }).status).toBe(2);
    writeFileSync(join(dir, 'rules', 'Bad.xml'), BAD);
    const here = runCliSync(['check'], { cwd: join(dir, 'rules') });
    expect(here.status).toBe(1);
    expect(here.stdout).toContain('Bad.xml:3:');
    expect(runCliSync(['test'], { cwd: join(dir, 'rules') }).stdout).toContain('Bad (Bad.xml)');
  });

  it('check --fix-dry-run exits 1 while fixes are pending, 0 once written', () => {
    const dir = project();
    writeFileSync(join(dir, 'rules', 'Dot.xml'), DOT);
    const shown = runCliSync(['check', 'rules', '--fix-dry-run'], { cwd: dir });
    expect(shown.stdout).toContain('+++ b/rules/Dot.xml');
    expect(shown.status).toBe(1);
    expect(runCliSync(['check', 'rules', '--fix', '--write'], { cwd: dir }).status).toBe(0);
    const clean = runCliSync(['check', 'rules', '--fix-dry-run'], { cwd: dir });
    expect([clean.status, clean.stdout]).toEqual([0, '']);
  });
});
