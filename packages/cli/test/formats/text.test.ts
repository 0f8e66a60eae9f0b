import { describe, expect, it } from 'vitest';
import {
  checkSummaryLine,
  checkText,
  fixSummaryLine,
  testText,
} from '../../src/formats/text/findings.js';
import { channelCheckLine } from '../../src/formats/text/channels.js';
import { dnrText } from '../../src/formats/text/dnr.js';
import { fetchTestSummary, fetchTestUrlLine } from '../../src/formats/text/fetch-test.js';
import { linksText } from '../../src/formats/text/links.js';
import { rewriteLine } from '../../src/formats/text/rewrite.js';
import { sweepText, sweepWorkersLine } from '../../src/formats/text/sweep.js';
import {
  checkReport,
  dnrCompiled,
  fetchTestReport,
  fetchTestUrl,
  fixReport,
  linksReport,
  sweepOutcome,
  testReport,
} from './reports.js';

// Each text report of a hand-built report, spelled out in full: what a person or a script
// reading the terminal sees must not change by accident.
describe('text formats', () => {
  it('links: a line per link, "not verified" with its reason, then the summary', () => {
    const lines = [
      'docs/a.md:3:5: http://example.com/ -> https://example.com/ (ruleset Example)',
      'docs/b|c.md:7:1: not verified: http://odd.test/`x -> https://odd.test/`x (no ruleset: --upgrade-all): status 200 != 404',
    ];
    expect(linksText(linksReport(), 'check')).toBe(
      `${lines.join('\n')}\n2 file(s) scanned; 1 link(s) can be upgraded; 1 not verified; 1 link(s) excluded\n`,
    );
    expect(linksText(linksReport(), 'fix').split('\n').at(-2)).toBe(
      '2 file(s) scanned; 1 link(s) upgraded in 1 file(s); 1 not verified; 1 link(s) excluded',
    );
  });

  it('check: findings as shown, counts per code, and the summary line', () => {
    const report = checkReport();
    expect(checkText(report, { info: true, counts: true })).toBe(
      'rules/Bad.xml:3:2: error to-missing-group: uses $1\n' +
        'rules/Dot.xml:4:6: warning unescaped-dot: an unescaped "."\n' +
        'rules/Cdn.xml:3:2: info changes-domain: moves to cdn\n' +
        '      1 changes-domain\n      1 to-missing-group\n      1 unescaped-dot\n',
    );
    expect(checkText(report, { quiet: true })).toBe(
      'rules/Bad.xml:3:2: error to-missing-group: uses $1\n',
    );
    expect(checkSummaryLine(report, true, {})).toBe(
      '2 changed files (checks across files over 3): 1 error, 1 warning, 1 info in 1.2 s' +
        ' (public suffix list: psl 2026-01-01); --info lists the info findings;' +
        ' httpsify-ignore comments hid 2;' +
        ' 1 baseline entry matches no file any more (--write-baseline drops them);' +
        ' 1 file ignored by httpsify.config.json\n',
    );
    expect(fixSummaryLine(fixReport(), false)).toBe(
      '3 files: 1 fix in 1 file (--fix writes them); 1 fix left out because a test URL would be rewritten differently\n',
    );
  });

  it('test: findings, a line per ruleset, totals and counts', () => {
    expect(testText(testReport())).toBe(
      'rules/Bad.xml:3:2: error to-missing-group: uses $1\n' +
        'FAIL Bad (rules/Bad.xml): 1 test, 1 problem\n' +
        'ok   Good (rules/Good.xml): 2 tests, 0 problems\n' +
        '2 rulesets, 3 tests: 1 ok, 1 with problems (1 off by default skipped);' +
        ' the baseline hid 2 findings in 1 unchanged file\n' +
        '      1 to-missing-group\n',
    );
  });

  it('fetch-test: a line per URL with its statuses, and the summary', () => {
    expect(fetchTestUrlLine(fetchTestUrl())).toBe(
      'FAIL Example: http://example.com/ => https://example.com/' +
        ' (200 => 404 after 1 redirect, structure 0.50) [rules/Example.xml:4:3]\n' +
        '     error https-status: HTTPS answers 404',
    );
    expect(fetchTestSummary(fetchTestReport(), ['rules/Example.xml'])).toBe(
      'failed ruleset: Example (rules/Example.xml): 1 of 1 URL\n' +
        'disabled: rules/Example.xml\n' +
        '1 ruleset, 1 test URL: 0 ok, 1 failed, 0 skipped; 1 ruleset failed (2 excluded test URLs not fetched)',
    );
  });

  it('sweep: counts, verdicts, the worst rulesets, --write and where the files are', () => {
    expect(sweepText(sweepOutcome())).toBe(
      [
        'swept 4 URLs of 2 rulesets (1 from an earlier run, 3 now): 1 work, 0 with warnings, 1 failing, 0 not judged',
        '  works 3, HTTPS timed out 1',
        'worst:',
        '  A<b> (1 of 2 URLs fail): HTTPS timed out: http://a.test/ (10 s)',
        '--write: 1 turned off, 0 turned back on, 0 failing but not yet confirmed by an earlier sweep',
        '  x: locked',
        'results: out/results.jsonl',
        'report: out/report.html',
        'summary: out/summary.json',
      ].join('\n'),
    );
    expect(sweepWorkersLine({ w1: 2, w2: 1 })).toBe('per worker: w1 2, w2 1');
  });

  it('dnr: counts, limits and every part left out', () => {
    expect(dnrText(dnrCompiled(), undefined, true)).toBe(
      'rules: 4 (3 redirect, 1 allow)\nregex rules: 2 of 1000\n' +
        'rulesets: 3 active; 1 complete, 1 partial, 1 left out\n' +
        'OVER LIMIT: regex rules: 1001 of 1000\n\nnot compiled:\n' +
        'rules/Odd.xml:5: Odd: rule #2 "^http://(a|b)\\\\.test/": lookbehind\n' +
        'Gone: ruleset "Gone": no targets\n',
    );
  });

  it('update and rewrite: one line per channel and per URL', () => {
    expect(
      channelCheckLine({ channel: 'beta', result: 'current', installedTimestamp: 1767225600 }),
    ).toBe('beta: up to date at 1767225600 (2026-01-01T00:00:00Z)');
    expect(rewriteLine('http://a.test/', { rewritten: null })).toBe('http://a.test/');
    expect(rewriteLine('http://a.test/', { rewritten: 'https://a.test/' })).toBe('https://a.test/');
  });
});
