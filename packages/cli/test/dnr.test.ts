import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { corpusRulesDir, corpusSubsetDir, oraclePath } from '../../engine/test/support/corpus.js';
import { CORPUS_RULESETS, workTimeout } from '../../engine/test/support/work-timeout.js';
import { runCliSync } from './support/run-cli.js';

describe('httpsify dnr', () => {
  it('writes rules the emulator applies and reports, with file:line, what was left out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-dnr-'));
    writeFileSync(
      join(dir, 'A.xml'),
      '<ruleset name="A">\n\t<target host="a.example"/>\n\t<rule from="^http:" to="https:"/>\n</ruleset>\n',
    );
    writeFileSync(
      join(dir, 'B.xml'),
      '<ruleset name="B">\n\t<target host="b.example"/>\n\t<rule from="^http://b\\.example/(x)\\1" to="https://b.example/"/>\n</ruleset>\n',
    );
    const out = join(dir, 'rules.json');
    const run = runCliSync(['dnr', '--rules', dir, '--out', out, '--report']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('rulesets: 2 active; 1 complete, 0 partial, 1 left out');
    expect(run.stdout).toContain(
      `${join(dir, 'B.xml')}:3: B: rule #1 "^http://b\\\\.example/(x)\\\\1": backreference (RE2 has none)`,
    );
    const rules = JSON.parse(readFileSync(out, 'utf8')) as DnrRule[];
    expect(new DnrEmulator(rules).match({ url: 'http://a.example/p' }).redirectUrl).toBe(
      'https://a.example/p',
    );
  });

  it(
    'measures the corpus against the oracle',
    () => {
      const run = runCliSync([
        'dnr',
        '--rules',
        corpusRulesDir(),
        '--oracle',
        oraclePath,
        '--format',
        'json',
      ]);
      expect(run.status).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.regexRuleCount).toBeLessThanOrEqual(1000);
      expect(report.coverage.reproduced / report.coverage.rewrites).toBeGreaterThan(0.93);
      // The same oracle as the browser sends it (canonical, no fragment): never a different URL.
      expect(report.browserCoverage.reproduced / report.browserCoverage.rewrites).toBeGreaterThan(
        0.93,
      );
      expect([report.browserCoverage.wrong, report.browserCoverage.spurious]).toEqual([0, 0]);
      // The oracle's URLs with a trailing dot on the host, as subresources: the static rules take
      // the dot off where the dotless URL is surely rewritten to https, and the rules apply as
      // without it (114,451 of 125,511 when measured); a URL that only lost its dot counts as
      // spurious or wrong.
      const dotted = report.trailingDotCoverage;
      expect(dotted.reproduced / dotted.rewrites).toBeGreaterThan(0.9);
      expect([dotted.wrong, dotted.spurious]).toEqual([0, 0]);
      expect(report.omissions.length).toBeGreaterThan(0);
    },
    workTimeout(CORPUS_RULESETS, 10),
  );

  it(
    'keeps to a smaller regex budget by leaving rules out, and flags a limit even the host groups exceed',
    () => {
      // A sixth of the corpus (about 4,000 rulesets, 347 regex rules unbounded): the same
      // budgeting at a sixth of the time; the whole corpus is measured above.
      const rules = corpusSubsetDir(6);
      const fits = runCliSync(['dnr', '--rules', rules, '--regex-limit', '60', '--report']);
      expect(fits.status).toBe(0);
      const used = Number(/regex rules: (\d+) of 60\n/.exec(fits.stdout)?.[1]);
      expect(used).toBeGreaterThan(30);
      expect(used).toBeLessThanOrEqual(60);
      expect(fits.stdout).toContain('regex budget exhausted');
      const over = runCliSync(['dnr', '--rules', rules, '--regex-limit', '5', '--report']);
      expect(over.status).toBe(1);
      expect(over.stdout).toMatch(/OVER LIMIT: \d+ regex rules > 5/);
    },
    workTimeout(CORPUS_RULESETS, 5),
  );
});
