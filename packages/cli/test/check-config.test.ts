import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliSync } from './support/run-cli.js';

// Bad: an error (to-missing-group, 3:2). Dot: a warning (unescaped-dot, 3:2). Twin: the same
// target as Bad, so both get a warning from the checks across files (duplicate-target).
// Wild: two coverage errors for `test` (rule-coverage, target-coverage).
const BAD =
  '<ruleset name="Bad">\n\t<target host="example.com" />\n\t<rule from="^http://example\\.com/" to="https://example.com/$1" />\n</ruleset>\n';
const DOT =
  '<ruleset name="Dot">\n\t<target host="example.net" />\n\t<rule from="^http://example.net/" to="https://example.net/" />\n</ruleset>\n';
const TWIN =
  '<ruleset name="Twin">\n\t<target host="example.com" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n';
const WILD =
  '<ruleset name="Wild">\n\t<target host="*.example.org" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n';

function project(files: Record<string, string>, config?: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-config-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  if (config !== undefined)
    writeFileSync(
      join(dir, 'httpsify.config.json'),
      typeof config === 'string' ? config : JSON.stringify(config),
    );
  return dir;
}

const codes = (stdout: string): string[] =>
  stdout
    .split('\n')
    .flatMap((l) => /^(\S+):\d+:\d+: (\w+) ([a-z-]+):/.exec(l)?.slice(1, 4).join(' ') ?? []);

describe('httpsify.config.json: rules', () => {
  it('"off", "warn" and "error" change what is printed, counted, --max-warnings and the exit status', () => {
    const files = { 'rules/Bad.xml': BAD, 'rules/Dot.xml': DOT };
    const plain = project(files);
    expect(codes(runCliSync(['check', 'rules'], { cwd: plain }).stdout)).toEqual([
      'rules/Bad.xml error to-missing-group',
      'rules/Dot.xml warning unescaped-dot',
    ]);
    expect(runCliSync(['check', 'rules'], { cwd: plain }).status).toBe(1);

    // The error becomes a warning: exit 0, unless --max-warnings says otherwise.
    const warned = project(files, {
      rules: { 'to-missing-group': 'warn', 'unescaped-dot': 'off' },
    });
    const soft = runCliSync(['check', 'rules'], { cwd: warned });
    expect(codes(soft.stdout)).toEqual(['rules/Bad.xml warning to-missing-group']);
    expect(soft.stderr).toMatch(/^2 files: 0 errors, 1 warning, 0 info/);
    expect(soft.status).toBe(0);
    expect(runCliSync(['check', 'rules', '--max-warnings', '0'], { cwd: warned }).status).toBe(1);
    const json = JSON.parse(runCliSync(['check', 'rules', '-f', 'json'], { cwd: warned }).stdout);
    expect(json).toMatchObject({
      errors: 0,
      warnings: 1,
      counts: { 'to-missing-group': 1 },
      config: 'httpsify.config.json',
      ignored: 0,
    });
    const sarif = JSON.parse(runCliSync(['check', 'rules', '-f', 'sarif'], { cwd: warned }).stdout);
    expect(
      sarif.runs[0].results.map((r: { ruleId: string; level: string }) => `${r.level} ${r.ruleId}`),
    ).toEqual(['warning to-missing-group']);
    // --quiet prints errors only: the error that is now a warning is not printed.
    expect(runCliSync(['check', 'rules', '--quiet'], { cwd: warned }).stdout).toBe('');

    // The warning becomes an error: exit 1 without --max-warnings.
    const strict = project({ 'rules/Dot.xml': DOT }, { rules: { 'unescaped-dot': 'error' } });
    const hard = runCliSync(['check', 'rules'], { cwd: strict });
    expect([hard.status, codes(hard.stdout)]).toEqual([1, ['rules/Dot.xml error unescaped-dot']]);
    // --no-config: as if there were none.
    expect(codes(runCliSync(['check', 'rules', '--no-config'], { cwd: strict }).stdout)).toEqual([
      'rules/Dot.xml warning unescaped-dot',
    ]);
    expect(runCliSync(['check', 'rules', '--no-config'], { cwd: strict }).status).toBe(0);
  });

  it('apply to the checks across files, to test, and before the baseline', () => {
    const dir = project(
      { 'rules/Bad.xml': BAD, 'rules/Twin.xml': TWIN },
      { rules: { 'duplicate-target': 'off', 'to-missing-group': 'warn' } },
    );
    const checked = runCliSync(['check', 'rules', '--max-warnings', '0'], { cwd: dir });
    expect(codes(checked.stdout)).toEqual(['rules/Bad.xml warning to-missing-group']);
    expect(checked.status).toBe(1);
    // The baseline records what the config leaves, and hides it by code and place as before.
    expect(runCliSync(['check', 'rules', '--write-baseline'], { cwd: dir }).stderr).toContain(
      'wrote 1 finding of 1 file',
    );
    expect(runCliSync(['check', 'rules', '--max-warnings', '0'], { cwd: dir }).status).toBe(0);

    const wild = project(
      { 'rules/Wild.xml': WILD },
      { rules: { 'rule-coverage': 'off', 'target-coverage': 'warn' } },
    );
    const tested = runCliSync(['test', 'rules'], { cwd: wild });
    expect(codes(tested.stdout)).toEqual(['rules/Wild.xml warning target-coverage']);
    expect(tested.status).toBe(0);
    expect(runCliSync(['test', 'rules', '--max-warnings', '0'], { cwd: wild }).status).toBe(1);
    expect(
      JSON.parse(runCliSync(['test', 'rules', '-f', 'json'], { cwd: wild }).stdout),
    ).toMatchObject({
      errors: 0,
      warnings: 1,
      counts: { 'target-coverage': 1 },
    });
  });
});

describe('httpsify.config.json: ignores', () => {
  it('ignored files are not checked, not seen across files, and counted in the summary', () => {
    const dir = project(
      {
        'rules/Bad.xml': BAD,
        'rules/Twin.xml': TWIN,
        'rules/legacy/Old.xml': BAD.replace('Bad', 'Old'),
        'rules/legacy/Dot.xml': DOT,
      },
      { ignores: ['Bad.xml', 'legacy/'] },
    );
    // Twin alone: no duplicate-target against the ignored Bad.xml. Files named on their own
    // that are ignored are left out too (a hook may pass every staged file).
    const checked = runCliSync(['check', 'rules', 'rules/legacy/Old.xml', 'rules/legacy/Dot.xml'], {
      cwd: dir,
    });
    expect([checked.status, checked.stdout]).toEqual([0, '']);
    expect(checked.stderr).toMatch(
      /^1 file: 0 errors, 0 warnings, 0 info in .*; 3 files ignored by httpsify\.config\.json\n$/,
    );
    expect(
      JSON.parse(runCliSync(['check', 'rules', '-f', 'json'], { cwd: dir }).stdout),
    ).toMatchObject({
      files: 1,
      ignored: 1,
    });
    const tested = runCliSync(['test', 'rules'], { cwd: dir });
    expect(tested.stdout).toContain(
      '1 ruleset, 1 test: 1 ok, 0 with problems; 1 file ignored by httpsify.config.json',
    );
    // A changed file that is ignored is not checked either.
    const changed = runCliSync(['check', 'rules', '--changed', 'rules/Bad.xml'], { cwd: dir });
    expect([changed.status, changed.stdout]).toEqual([0, '']);
    expect(changed.stderr).toMatch(/^0 changed files \(checks across files over 1\)/);
    // --fix leaves ignored files as they are.
    runCliSync(['check', 'rules/legacy/Dot.xml', 'rules', '--fix', '--write'], { cwd: dir });
    expect(readFileSync(join(dir, 'rules', 'legacy', 'Dot.xml'), 'utf8')).toBe(DOT);
    // Without the config, everything is checked again.
    expect(codes(runCliSync(['check', 'rules', '--no-config'], { cwd: dir }).stdout)).toEqual([
      'rules/Bad.xml warning duplicate-target',
      'rules/Bad.xml error to-missing-group',
      'rules/Twin.xml warning duplicate-target',
    ]);
  });

  it('a directory whose every ruleset is ignored is exit 2, as an empty one is', () => {
    const dir = project(
      { 'rules/legacy/Old.xml': BAD, 'rules/Dot.xml': DOT },
      { ignores: ['legacy/'] },
    );
    for (const command of ['check', 'test']) {
      const r = runCliSync([command, 'rules/legacy'], { cwd: dir });
      expect([r.status, r.stdout, r.stderr]).toEqual([
        2,
        '',
        'httpsify: rules/legacy: every ruleset there is ignored by httpsify.config.json\n',
      ]);
    }
  });

  it('--config FILE: its patterns are relative to its own directory', () => {
    const dir = project({
      'rules/Bad.xml': BAD,
      'rules/Dot.xml': DOT,
      'ci/httpsify.json': JSON.stringify({ ignores: ['/Bad.xml'] }),
    });
    mkdirSync(join(dir, 'ci', 'rules'));
    writeFileSync(join(dir, 'ci', 'other.json'), JSON.stringify({ ignores: ['/rules/Bad.xml'] }));
    // "/Bad.xml" is anchored at ci/: rules/Bad.xml is not ignored.
    expect(
      codes(runCliSync(['check', 'rules', '--config', 'ci/httpsify.json'], { cwd: dir }).stdout),
    ).toContain('rules/Bad.xml error to-missing-group');
    expect(
      codes(runCliSync(['check', 'rules', '-c', 'ci/other.json'], { cwd: dir }).stdout),
    ).toContain('rules/Bad.xml error to-missing-group');
    writeFileSync(join(dir, 'root.json'), JSON.stringify({ ignores: ['/rules/Bad.xml'] }));
    expect(codes(runCliSync(['check', 'rules', '-c', 'root.json'], { cwd: dir }).stdout)).toEqual([
      'rules/Dot.xml warning unescaped-dot',
    ]);
    const missing = runCliSync(['check', 'rules', '--config', 'nope.json'], { cwd: dir });
    expect([missing.status, missing.stderr]).toEqual([
      2,
      'httpsify: nope.json: cannot read the config: no such file\n',
    ]);
  });
});

describe('httpsify.config.json is checked at the door', () => {
  // Each mistake: exit 2, nothing checked, the file and the JSON path of what is wrong.
  const cases: [string, string, string][] = [
    ['invalid JSON', '{"rules": {', 'not valid JSON: '],
    [
      'not an object',
      '["unescaped-dot"]',
      '$: expected an object: { "rules": {…}, "ignores": […] }',
    ],
    [
      'an unknown key',
      '{"rules": {}, "ignore": ["x"]}',
      '$.ignore: unknown key (expected "rules" or "ignores")',
    ],
    [
      'rules not an object',
      '{"rules": ["unescaped-dot"]}',
      '$.rules: expected an object of "<code>": "off" | "warn" | "error"',
    ],
    [
      'an unknown code',
      '{"rules": {"unescaped-dots": "off"}}',
      '$.rules["unescaped-dots"]: unknown finding code (did you mean "unescaped-dot"?); docs/writing-rulesets.md lists them',
    ],
    [
      'a fix name, not a code',
      '{"rules": {"trivialize": "off"}}',
      '$.rules.trivialize: unknown finding code; docs/writing-rulesets.md lists them',
    ],
    [
      '"warning" for "warn"',
      '{"rules": {"unescaped-dot": "warning"}}',
      '$.rules["unescaped-dot"]: expected "off", "warn" or "error", not "warning"',
    ],
    [
      'a number',
      '{"rules": {"unescaped-dot": 1}}',
      '$.rules["unescaped-dot"]: expected "off", "warn" or "error", not 1',
    ],
    [
      'ESLint options',
      '{"rules": {"unescaped-dot": ["warn", {}]}}',
      '$.rules["unescaped-dot"]: expected "off", "warn" or "error", not ["warn",{}]',
    ],
    [
      'an unloadable ruleset passed',
      '{"rules": {"xml-syntax": "off"}}',
      '$.rules["xml-syntax"]: a ruleset with this error does not load at all, so it stays an error (the baseline or an httpsify-ignore comment accepts one file\'s finding)',
    ],
    [
      'a code given twice',
      '{"rules": {"unescaped-dot": "off", "dead-rule": "warn", "unescaped-dot": "error"}}',
      '$.rules["unescaped-dot"]: given twice (JSON keeps only the last one)',
    ],
    [
      'ignores not an array',
      '{"ignores": "legacy/"}',
      '$.ignores: expected an array of patterns, e.g. ["legacy/", "*-falsemixed.xml"]',
    ],
    [
      'an empty pattern',
      '{"ignores": ["legacy/", ""]}',
      '$.ignores[1]: expected a pattern (a non-empty string), not ""',
    ],
    [
      'a pattern not a string',
      '{"ignores": [{"legacy": true}]}',
      '$.ignores[0]: expected a pattern (a non-empty string), not {"legacy":true}',
    ],
    [
      'a ./ pattern',
      '{"ignores": ["./legacy/"]}',
      '$.ignores[0]: "./legacy/": patterns are relative to the directory of httpsify.config.json; write it without "./" (and nothing outside it can be ignored)',
    ],
  ];
  it.each(cases)('%s', (_what, text, message) => {
    const dir = project({ 'rules/Bad.xml': BAD }, text);
    for (const command of ['check', 'test']) {
      const r = runCliSync([command, 'rules'], { cwd: dir });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      if (message.startsWith('not valid JSON'))
        expect(r.stderr).toMatch(/^httpsify: httpsify\.config\.json: not valid JSON: .+\n$/);
      else expect(r.stderr).toBe(`httpsify: httpsify.config.json: ${message}\n`);
    }
  });
});
