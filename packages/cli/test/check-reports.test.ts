import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCliSync } from './support/run-cli.js';

// An error (to-missing-group at 3:2), a warning (unescaped-dot at 3:2) and an info
// (changes-domain at 3:2); Wild.xml has two coverage errors for `test`.
const BAD =
  '<ruleset name="Bad">\n\t<target host="example.com" />\n\t<rule from="^http://example\\.com/" to="https://example.com/$1" />\n</ruleset>\n';
const CDN =
  '<ruleset name="Cdn">\n\t<target host="img.example.org" />\n\t<rule from="^http://img.example\\.org/" to="https://cdn.example.net/" />\n' +
  '\t<test url="http://img.example.org/a" />\n</ruleset>\n';
const DOT =
  '<ruleset name="Dot">\n\t<target host="example.net" />\n\t<rule from="^http://example.net/" to="https://example.net/" />\n</ruleset>\n';
const WILD =
  '<ruleset name="Wild">\n\t<target host="*.example.org" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n';

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-reports-'));
  mkdirSync(join(dir, 'rules'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'rules', name), text);
  return dir;
}

interface SarifLog {
  version: string;
  runs: {
    tool: { driver: { name: string; rules: { id: string }[] } };
    originalUriBaseIds: Record<string, { uri: string }>;
    results: {
      ruleId: string;
      ruleIndex: number;
      level: string;
      message: { text: string };
      locations: {
        physicalLocation: {
          artifactLocation: { uri: string; uriBaseId: string };
          region: { startLine: number; startColumn: number };
        };
      }[];
    }[];
  }[];
}

/** Each SARIF result as the text report would print it: `uri:line:col: level ruleId: message`. */
function asLines(log: SarifLog): string[] {
  const [sarifRun] = log.runs;
  return (sarifRun?.results ?? []).map((r) => {
    expect(sarifRun?.tool.driver.rules[r.ruleIndex]?.id).toBe(r.ruleId);
    const { artifactLocation, region } = r.locations[0]!.physicalLocation;
    expect(artifactLocation.uriBaseId).toBe('%SRCROOT%');
    return `${decodeURIComponent(artifactLocation.uri)}:${region.startLine}:${region.startColumn}: ${r.level} ${r.ruleId}: ${r.message.text}`;
  });
}

describe('check and test --format sarif', () => {
  it('check: one result per finding, rule ids are the codes, levels from the severities', () => {
    const dir = project({ 'Bad.xml': BAD, 'Cdn.xml': CDN, 'Dot.xml': DOT });
    const text = runCliSync(['check', 'rules', '--info'], { cwd: dir });
    const sarif = runCliSync(['check', 'rules', '--format', 'sarif', '--info'], { cwd: dir });
    expect(sarif.status).toBe(1);
    const log = JSON.parse(sarif.stdout) as SarifLog;
    expect(log.version).toBe('2.1.0');
    expect(log.runs[0]?.tool.driver.name).toBe('httpsify');
    expect(log.runs[0]?.originalUriBaseIds['%SRCROOT%']?.uri).toBe(`${pathToFileURL(dir).href}/`);
    // The same findings, places and messages as the text report; info is SARIF's "note".
    expect(asLines(log)).toEqual(
      text.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.replace(': info ', ': note ')),
    );
    expect(asLines(log).map((l) => l.split(': ')[1])).toEqual([
      'error to-missing-group',
      'note changes-domain',
      'warning unescaped-dot',
      'warning unescaped-dot',
    ]);
    expect(log.runs[0]?.tool.driver.rules.map((r) => r.id)).toEqual([
      'changes-domain',
      'to-missing-group',
      'unescaped-dot',
    ]);
    // As the text report: info only with --info, errors only with --quiet; -f is --format.
    const plain = JSON.parse(
      runCliSync(['check', 'rules', '-f', 'sarif'], { cwd: dir }).stdout,
    ) as SarifLog;
    expect(plain.runs[0]?.results.map((r) => r.ruleId)).toEqual([
      'to-missing-group',
      'unescaped-dot',
      'unescaped-dot',
    ]);
    const quiet = JSON.parse(
      runCliSync(['check', 'rules', '-f', 'sarif', '--quiet'], { cwd: dir }).stdout,
    ) as SarifLog;
    expect(quiet.runs[0]?.results.map((r) => r.ruleId)).toEqual(['to-missing-group']);
    // stdout is the log alone; the summary stays on stderr.
    expect(sarif.stderr).toMatch(/^3 files: 1 error, 2 warnings, 1 info in/);
  });

  it('check: a clean run is an empty log and exit 0; a path outside the working directory is a file: URI', () => {
    const dir = project({ 'Cdn.xml': CDN.replace('img.example\\.org', 'img\\.example\\.org') });
    const clean = runCliSync(['check', 'rules', '-f', 'sarif'], { cwd: dir });
    expect(clean.status).toBe(0);
    expect((JSON.parse(clean.stdout) as SarifLog).runs[0]?.results).toEqual([]);
    const other = project({ 'Dot.xml': DOT });
    const outside = JSON.parse(
      runCliSync(['check', join(other, 'rules'), '-f', 'sarif'], { cwd: dir }).stdout,
    ) as SarifLog;
    expect(outside.runs[0]?.results[0]?.locations[0]?.physicalLocation.artifactLocation).toEqual({
      uri: pathToFileURL(join(other, 'rules', 'Dot.xml')).href,
    });
  });

  it('test: coverage findings as results, exit 1 as with text', () => {
    const dir = project({ 'Wild.xml': WILD });
    const text = runCliSync(['test', 'rules'], { cwd: dir });
    const sarif = runCliSync(['test', 'rules', '-f', 'sarif'], { cwd: dir });
    expect([sarif.status, text.status]).toEqual([1, 1]);
    const log = JSON.parse(sarif.stdout) as SarifLog;
    const findings = text.stdout.split('\n').filter((l) => l.startsWith('rules/'));
    expect(findings.length).toBe(2);
    expect(asLines(log)).toEqual(findings);
    expect(log.runs[0]?.tool.driver.rules.map((r) => r.id)).toEqual([
      'rule-coverage',
      'target-coverage',
    ]);
  });

  it('a format that is not text, json or sarif is a usage error', () => {
    const dir = project({ 'Dot.xml': DOT });
    for (const command of ['check', 'test']) {
      const bad = runCliSync([command, 'rules', '-f', 'xml'], { cwd: dir });
      expect([bad.status, bad.stdout, bad.stderr]).toEqual([
        2,
        '',
        'httpsify: --format must be text, json or sarif, not "xml"\n',
      ]);
    }
  });
});

describe('check and test -o, --output-file', () => {
  it('writes the report there instead of stdout; exit statuses and the summary stay as they were', () => {
    const dir = project({ 'Bad.xml': BAD, 'Dot.xml': DOT });
    for (const command of ['check', 'test']) {
      for (const format of ['text', 'json', 'sarif']) {
        const shown = runCliSync([command, 'rules', '-f', format], { cwd: dir });
        // A directory that does not exist yet is created, as ESLint does.
        const file = join('reports', command, `report.${format}`);
        const written = runCliSync([command, 'rules', '-f', format, '-o', file], { cwd: dir });
        expect([written.status, written.stdout]).toEqual([shown.status, '']);
        const report = readFileSync(join(dir, file), 'utf8');
        // JSON carries the time the run took: compare it without.
        if (format === 'json')
          expect({ ...JSON.parse(report), elapsedMs: 0 }).toEqual({
            ...JSON.parse(shown.stdout),
            elapsedMs: 0,
          });
        else expect(report).toBe(shown.stdout);
        expect(written.stderr.replace(/in [\d.]+ s/, '')).toBe(
          shown.stderr.replace(/in [\d.]+ s/, ''),
        );
      }
    }
    expect(runCliSync(['check', 'rules', '-o', 'check.txt'], { cwd: dir }).status).toBe(1);
    expect(
      runCliSync(['test', 'rules/Dot.xml', '--output-file', 'test.txt'], { cwd: dir }).status,
    ).toBe(0);
    expect(readFileSync(join(dir, 'test.txt'), 'utf8')).toContain(
      '1 ruleset, 1 test: 1 ok, 0 with problems',
    );
  });

  it('a place that cannot be written is exit 2 naming the file, found before any work where it can be', () => {
    const dir = project({ 'Bad.xml': BAD });
    for (const command of ['check', 'test']) {
      const intoDir = runCliSync([command, 'rules', '-o', 'rules'], { cwd: dir });
      expect([intoDir.status, intoDir.stdout, intoDir.stderr]).toEqual([
        2,
        '',
        'httpsify: --output-file rules: rules is a directory; give the name of a file to write\n',
      ]);
      const underFile = runCliSync([command, 'rules', '-o', 'rules/Bad.xml/report.txt'], {
        cwd: dir,
      });
      expect([underFile.status, underFile.stdout, underFile.stderr]).toEqual([
        2,
        '',
        `httpsify: --output-file rules/Bad.xml/report.txt: ${join(dir, 'rules', 'Bad.xml')} is not a directory\n`,
      ]);
      const withBaseline = runCliSync([command, 'rules', '--write-baseline', '-o', 'x.txt'], {
        cwd: dir,
      });
      expect([withBaseline.status, withBaseline.stderr]).toEqual([
        2,
        'httpsify: --write-baseline writes the baseline and no report: leave out --output-file\n',
      ]);
    }
    expect(existsSync(join(dir, 'httpsify-baseline.json'))).toBe(false);
    // A failure while writing (sysfs takes no new files, not even from root): exit 2, not 1.
    if (statSync('/sys', { throwIfNoEntry: false })?.isDirectory() === true) {
      const failed = runCliSync(['check', 'rules', '-o', '/sys/httpsify-report.txt'], { cwd: dir });
      expect(failed.status).toBe(2);
      expect(failed.stderr).toMatch(/^httpsify: cannot write \/sys\/httpsify-report\.txt: /);
    }
  });
});
