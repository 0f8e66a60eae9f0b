import type { DnrCompileResult } from '@httpsify/engine/dnr';
import type { Diagnostic } from '@httpsify/engine';
import type { CheckReport, FixReport } from '../../src/commands/check.js';
import type { TestReport } from '../../src/commands/test.js';
import type { FetchTestReport } from '../../src/fetch-test/run-fetch-test.js';
import type { UrlResult } from '../../src/fetch-test/url-result.js';
import type { LinksReport } from '../../src/links/run-links.js';
import type { SweepOutcome } from '../../src/sweep/run-sweep.js';
import type { SweepSummary } from '../../src/sweep/summary.js';
import { URL_VERDICTS, type SweepResult } from '../../src/sweep/verdicts.js';

/**
 * Hand-built reports for the formatter tests (src/formats/): small, but with every branch a
 * report can take (a verified and an unverified link, every severity, a failed URL after a
 * redirect), so that each test can spell out the exact text it expects.
 */

export function linksReport(): LinksReport {
  const base = { line: 3, endLine: 3, start: 0, end: 0, channel: null };
  return {
    scannedFiles: 2,
    findings: [
      {
        ...base,
        file: 'docs/a.md',
        column: 5,
        endColumn: 24,
        context: 'see http://example.com/',
        url: 'http://example.com/',
        rewritten: 'https://example.com/',
        ruleset: 'Example',
        replacement: 'https://example.com/',
      },
      {
        ...base,
        file: 'docs/b|c.md',
        line: 7,
        endLine: 7,
        column: 1,
        endColumn: 18,
        context: 'http://odd.test/`x',
        url: 'http://odd.test/`x',
        rewritten: 'https://odd.test/`x',
        ruleset: null,
        replacement: 'https://odd.test/`x',
        verified: false,
        reason: 'status 200 != 404',
      },
    ],
    excluded: [
      {
        file: 'docs/a.md',
        line: 9,
        column: 1,
        url: 'http://kept.test/',
        context: 'http://kept.test/',
        rule: 'kept',
        origin: '--exclude',
      },
    ],
    problems: [{ path: 'docs/big.md', severity: 'skipped', message: 'larger than --max-size' }],
    notes: ['a *note*'],
    changedFiles: ['docs/a.md'],
    diff: '',
  };
}

export const DIAGNOSTICS: Diagnostic[] = [
  {
    severity: 'error',
    code: 'to-missing-group',
    message: 'uses $1',
    file: 'rules/Bad.xml',
    line: 3,
    column: 2,
  },
  {
    severity: 'warning',
    code: 'unescaped-dot',
    message: 'an unescaped "."',
    file: 'rules/Dot.xml',
    line: 4,
    column: 6,
  },
  {
    severity: 'info',
    code: 'changes-domain',
    message: 'moves to cdn',
    file: 'rules/Cdn.xml',
    line: 3,
    column: 2,
  },
];

export function checkReport(): CheckReport {
  return {
    files: 3,
    checked: 2,
    diagnostics: DIAGNOSTICS,
    counts: { 'changes-domain': 1, 'to-missing-group': 1, 'unescaped-dot': 1 },
    errors: 1,
    warnings: 1,
    info: 1,
    suppressed: 2,
    baselineHidden: 0,
    baselineHiddenFiles: 0,
    baselineStale: 1,
    config: 'httpsify.config.json',
    ignored: 1,
    unfiltered: DIAGNOSTICS,
    hashes: new Map([['rules/Bad.xml', 'ab']]),
    publicSuffixList: 'psl 2026-01-01',
    elapsedMs: 1234,
  };
}

export function fixReport(): FixReport {
  return {
    files: 3,
    changed: [
      {
        file: 'rules/Dot.xml',
        fixes: [{ code: 'unescaped-dot', line: 4, message: 'escaped' }],
        diff: '--- a/rules/Dot.xml\n+++ b/rules/Dot.xml\n',
        fixed: '<ruleset/>\n',
      },
    ],
    rejected: 1,
    pending: 0,
  };
}

export function testReport(): TestReport {
  return {
    rulesets: [
      { file: 'rules/Bad.xml', name: 'Bad', tests: 1, problems: 1 },
      { file: 'rules/Good.xml', name: 'Good', tests: 2, problems: 0 },
    ],
    skippedDefaultOff: 1,
    diagnostics: DIAGNOSTICS.slice(0, 1),
    counts: { 'to-missing-group': 1 },
    errors: 1,
    warnings: 0,
    suppressed: 0,
    baselineHidden: 2,
    baselineHiddenFiles: 1,
    baselineStale: 0,
    config: null,
    ignored: 0,
    unfiltered: DIAGNOSTICS.slice(0, 1),
    hashes: new Map(),
  };
}

export function fetchTestUrl(): UrlResult {
  return {
    ruleset: 'Example',
    file: 'rules/Example.xml',
    line: 4,
    column: 3,
    url: 'http://example.com/',
    implicit: false,
    rewritten: 'https://example.com/',
    plain: {
      hops: [{ url: 'http://example.com/', status: 200 }],
      finalUrl: 'http://example.com/',
      status: 200,
      contentType: 'text/html',
      body: '',
    },
    secure: {
      hops: [
        { url: 'https://example.com/', status: 301 },
        { url: 'https://example.com/x', status: 404 },
      ],
      finalUrl: 'https://example.com/x',
      status: 404,
      contentType: 'text/html',
      body: '',
    },
    similarity: 0.5,
    findings: [{ severity: 'error', code: 'https-status', message: 'HTTPS answers 404' }],
    verdict: 'failed',
  };
}

export function fetchTestReport(): FetchTestReport {
  return {
    rulesets: [
      {
        name: 'Example',
        file: 'rules/Example.xml',
        verdict: 'failed',
        fetched: 1,
        failed: 1,
        reasons: ['http://example.com/: HTTPS answers 404'],
      },
    ],
    urls: [fetchTestUrl()],
    skippedDefaultOff: 0,
    excludedTests: 2,
    diagnostics: [],
    failedRulesets: 1,
  };
}

export function sweepSummary(): SweepSummary {
  const byVerdict = Object.fromEntries(
    URL_VERDICTS.map((v) => [v, 0]),
  ) as SweepSummary['byVerdict'];
  byVerdict.works = 3;
  byVerdict.timeout = 1;
  return {
    format: 'httpsify-sweep-summary/1',
    kind: 'ruleset',
    startedAt: Date.UTC(2026, 0, 2, 3, 4, 5),
    finishedAt: Date.UTC(2026, 0, 2, 3, 9, 5),
    urls: 4,
    byVerdict,
    byHealth: { ok: 1, warning: 0, failing: 1, unknown: 0 },
    rulesets: [
      {
        name: 'A<b>',
        file: 'rules/A.xml',
        health: 'failing',
        urls: 2,
        failingUrls: 1,
        reasons: ['HTTPS timed out: http://a.test/ (10 s)'],
        verdicts: { works: 1, timeout: 1 },
      },
      {
        name: 'C',
        file: 'rules/C.xml',
        health: 'ok',
        urls: 2,
        failingUrls: 0,
        reasons: [],
        verdicts: { works: 2 },
      },
    ],
  };
}

export function sweepOutcome(): SweepOutcome {
  return {
    summary: sweepSummary(),
    ranNow: 3,
    resumedFrom: 1,
    resultsPath: 'out/results.jsonl',
    reportPath: 'out/report.html',
    summaryPath: 'out/summary.json',
    writeBack: { disabled: ['rules/A.xml'], enabled: [], unconfirmed: [], errors: ['x: locked'] },
    discovered: [],
    discovery: null,
  };
}

export function sweepResult(): SweepResult {
  return {
    key: 'ruleset|A|http://a.test/',
    kind: 'ruleset',
    ruleset: 'A',
    file: 'rules/A.xml',
    url: 'http://a.test/',
    rewritten: 'https://a.test/',
    verdict: 'timeout',
    detail: '10 s',
    plainStatus: 200,
    secureStatus: null,
    similarity: null,
    at: 1767323045000,
    ms: 10000,
  };
}

export function dnrCompiled(): DnrCompileResult {
  return {
    rules: [],
    report: {
      rulesetsConsidered: 3,
      rulesetsComplete: 1,
      rulesetsPartial: 1,
      rulesetsSkipped: 1,
      ruleCount: 4,
      regexRuleCount: 2,
      regexLimit: 1000,
      byAction: { redirect: 3, allow: 1 },
      omissions: [
        {
          ruleset: 'Odd',
          file: 'rules/Odd.xml',
          line: 5,
          what: 'rule',
          index: 1,
          source: '^http://(a|b)\\.test/',
          reason: 'lookbehind',
        },
        { ruleset: 'Gone', what: 'ruleset', index: 0, source: 'Gone', reason: 'no targets' },
      ],
      overLimits: ['regex rules: 1001 of 1000'],
    },
  };
}
