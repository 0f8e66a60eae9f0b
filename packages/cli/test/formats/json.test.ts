import { describe, expect, it } from 'vitest';
import { channelChecksJson } from '../../src/formats/json/channels.js';
import { dnrReportJson, dnrRulesJson } from '../../src/formats/json/dnr.js';
import { fetchTestJson } from '../../src/formats/json/fetch-test.js';
import { checkJson, fixesJson, testJson } from '../../src/formats/json/findings.js';
import { linksJson } from '../../src/formats/json/links.js';
import { sweepSummaryJson } from '../../src/formats/json/sweep.js';
import {
  checkReport,
  dnrCompiled,
  fetchTestReport,
  fixReport,
  linksReport,
  sweepSummary,
  testReport,
} from './reports.js';

/** A pretty-printed document: two-space indents and one final newline. */
function pretty(text: string): unknown {
  const value: unknown = JSON.parse(text);
  expect(text).toBe(`${JSON.stringify(value, null, 2)}\n`);
  return value;
}

// JSON reports are read by programs: parsed back, each must hold the report (less what only
// the run itself needs), with nothing renamed or lost.
describe('JSON formats', () => {
  it('links: the findings with their status, excluded links as lychee, fix adds changedFiles', () => {
    const report = linksReport();
    const [verified, unverified] = report.findings.map(
      ({ start: _s, end: _e, replacement: _r, verified: _v, ...rest }) => rest,
    );
    const expected = {
      mode: 'check',
      scannedFiles: 2,
      findings: [
        { ...verified, status: 'upgradable' },
        { ...unverified, status: 'not-verified' },
      ],
      excluded: 1,
      excludedLinks: report.excluded,
      problems: report.problems,
      notes: report.notes,
    };
    expect(pretty(linksJson(report, 'check'))).toEqual(expected);
    expect(pretty(linksJson(report, 'fix'))).toEqual({
      ...expected,
      mode: 'fix',
      changedFiles: ['docs/a.md'],
    });
  });

  it('check and test: the report round-trips, without the baseline inputs', () => {
    const { unfiltered: _u, hashes: _h, ...check } = checkReport();
    expect(pretty(checkJson(checkReport(), null))).toEqual(check);
    const { fixed: _f, ...changed } = fixReport().changed[0]!;
    const fixes = { ...fixReport(), changed: [changed] };
    expect(pretty(checkJson(checkReport(), fixReport()))).toEqual({ ...check, fixes });
    expect(pretty(fixesJson(fixReport()))).toEqual(fixes);
    const { unfiltered: _tu, hashes: _th, ...test } = testReport();
    expect(pretty(testJson(testReport()))).toEqual(test);
  });

  it('fetch-test, update: the whole report, pretty-printed', () => {
    const disabled = ['rules/Example.xml'];
    expect(pretty(fetchTestJson(fetchTestReport(), disabled))).toEqual({
      ...fetchTestReport(),
      disabled,
    });
    const checks = [{ channel: 'beta', result: 'current' as const, installedTimestamp: 1 }];
    expect(pretty(channelChecksJson(checks))).toEqual(checks);
  });

  it('sweep summary and dnr: one line each, read back as written', () => {
    const summary = sweepSummaryJson(sweepSummary());
    expect(summary.indexOf('\n')).toBe(summary.length - 1);
    expect(JSON.parse(summary)).toEqual(sweepSummary());
    const compiled = dnrCompiled();
    const report = dnrReportJson({
      compiled,
      coverage: undefined,
      browserCoverage: undefined,
      trailingDotCoverage: undefined,
      details: false,
    });
    expect(report.indexOf('\n')).toBe(report.length - 1);
    expect(JSON.parse(report)).toEqual(compiled.report);
    expect(dnrRulesJson([])).toBe('[]\n');
  });
});
