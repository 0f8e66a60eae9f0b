import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFetchTest, type FetchTestReport } from '../src/commands/fetch-test.js';
import type { UrlResult } from '../src/fetch-test/url-result.js';
import {
  html,
  makeTestPki,
  startLocalServers,
  status,
  type LocalServers,
  type Site,
  type TestPki,
} from './support/fetch-test-servers.js';
import { runCli } from './support/run-cli.js';

const HOSTS = [
  'good.test',
  'missing.test',
  'loop.test',
  'changed.test',
  'hop.test',
  'many.test',
  'reset.test',
  'refused.test',
  'slow.test',
  'off.test',
  'nowhere.invalid',
];
const PAGE = '<div><p>hello</p><ul><li>a</li><li>b</li></ul></div>';

let pki: TestPki;
let servers: LocalServers;
/** Directory of one ruleset file per case. */
let dir: string;
let resolveArgs: string[];
let H: number;
let S: number;

const esc = (host: string): string => host.replace(/\./g, '\\.');

/** A ruleset whose one rule sends http://HOST:H/ to `to`; port-exact, so the implied test http://HOST/ is not rewritten. */
function ruleset(
  name: string,
  host: string,
  to: string,
  options: { extra?: string; attrs?: string; path?: string } = {},
): string {
  return (
    `<ruleset name="${name}"${options.attrs ?? ''}>\n\t<target host="${host}" />\n${options.extra ?? ''}` +
    `\t<test url="http://${host}:${H}/${options.path ?? ''}" />\n\t<rule from="^http://${esc(host)}:${H}/" to="${to}" />\n</ruleset>\n`
  );
}

beforeAll(async () => {
  pki = makeTestPki(HOSTS.filter((h) => h.endsWith('.test')));
  const httpSites: Record<string, Site> = Object.fromEntries(HOSTS.map((h) => [h, html(PAGE)]));
  const httpsSites: Record<string, Site> = {
    'good.test': html(PAGE),
    'missing.test': status(404),
    'off.test': status(404),
    'changed.test': html(
      '<table><tr><td>x</td></tr></table><form><input><select><option>1</option></select></form>',
    ),
    'many.test': (req, res) => {
      const n = Number(/\d+/.exec(req.path)?.[0] ?? '0');
      res.writeHead(302, { location: `/n${n + 1}` }).end();
    },
    // Never answers: only the client's deadline ends the request.
    'slow.test': () => undefined,
  };
  servers = await startLocalServers(pki, httpSites, httpsSites);
  H = servers.httpPort;
  S = servers.httpsPort;
  // Sites whose redirects name the ports, known only once the servers listen.
  httpsSites['loop.test'] = status(301, `http://loop.test:${H}/`);
  httpsSites['hop.test'] = status(302, `http://good.test:${H}/`);

  dir = mkdtempSync(join(tmpdir(), 'httpsify-fetch-test-'));
  const files: Record<string, string> = {
    'Good.xml': ruleset('Good', 'good.test', `https://good.test:${S}/`, {
      extra: `\t<exclusion pattern="^http://good\\.test:${H}/private" />\n\t<test url="http://good.test:${H}/private" />\n`,
    }),
    'Missing.xml': ruleset('Missing', 'missing.test', `https://missing.test:${S}/`, {
      path: 'a--b-',
    }),
    'Loop.xml': ruleset('Loop', 'loop.test', `https://loop.test:${S}/`),
    'Changed.xml': ruleset('Changed', 'changed.test', `https://changed.test:${S}/`),
    'Hop.xml': ruleset('Hop', 'hop.test', `https://hop.test:${S}/`),
    'Many.xml': ruleset('Many', 'many.test', `https://many.test:${S}/`),
    'Reset.xml': ruleset('Reset', 'reset.test', `https://reset.test:${servers.resetPort}/`),
    'Refused.xml': ruleset(
      'Refused',
      'refused.test',
      `https://refused.test:${servers.closedPort}/`,
    ),
    'Slow.xml': ruleset('Slow', 'slow.test', `https://slow.test:${S}/`),
    'Off.xml': ruleset('Off', 'off.test', `https://off.test:${S}/`, {
      attrs: ' default_off="manual"',
    }),
    // Not in --resolve, and .invalid never resolves.
    'Nowhere.xml': ruleset('Nowhere', 'nowhere.invalid', `https://nowhere.invalid:${S}/`),
  };
  for (const [name, xml] of Object.entries(files)) writeFileSync(join(dir, name), xml);
  resolveArgs = HOSTS.filter((h) => h.endsWith('.test')).map((h) => `${h}:127.0.0.1`);
}, 60_000);

afterAll(async () => {
  await servers?.close();
});

function find(report: FetchTestReport, url: string): UrlResult {
  const hit = report.urls.find((u) => u.url === url);
  if (hit === undefined)
    throw new Error(`no result for ${url}; have ${report.urls.map((u) => u.url).join(', ')}`);
  return hit;
}

const codes = (r: UrlResult): string[] => r.findings.map((f) => f.code);

describe('httpsify fetch-test against local HTTP and HTTPS servers', () => {
  let report: FetchTestReport;
  let requestsBefore: number;

  beforeAll(async () => {
    requestsBefore = servers.requests.length;
    report = await runFetchTest({
      paths: [dir],
      resolve: resolveArgs,
      caFiles: [pki.caPath],
      timeoutMs: 1500,
      concurrency: 4,
    });
  }, 60_000);

  it('passes a site that serves the same page over HTTPS', () => {
    const r = find(report, `http://good.test:${H}/`);
    expect(r.verdict).toBe('ok');
    expect(r.rewritten).toBe(`https://good.test:${S}/`);
    expect(r.plain?.status).toBe(200);
    expect(r.secure?.status).toBe(200);
    expect(r.similarity).toBe(1);
    expect(r.findings).toEqual([]);
    expect(report.rulesets.find((x) => x.name === 'Good')?.verdict).toBe('ok');
  });

  it('does not fetch test URLs an exclusion owns, and skips URLs the ruleset does not rewrite', () => {
    const fetched = servers.requests.slice(requestsBefore);
    expect(fetched.some((u) => u.includes('/private'))).toBe(false);
    expect(report.urls.some((u) => u.url.includes('/private'))).toBe(false);
    expect(report.excludedTests).toBe(1);
    const implicit = find(report, 'http://good.test/');
    expect(implicit.implicit).toBe(true);
    expect(implicit.verdict).toBe('skipped');
    expect(codes(implicit)).toEqual(['not-rewritten']);
  });

  it('fails a site whose HTTPS answers 404 where HTTP answers 200', () => {
    const r = find(report, `http://missing.test:${H}/a--b-`);
    expect(r.verdict).toBe('failed');
    expect(codes(r)).toEqual(['secure-status']);
    expect(r.findings[0]?.message).toBe('HTTPS answered 404 where HTTP answered 200');
  });

  it('detects a redirect loop HTTPS -> HTTP -> (rewritten) HTTPS after one request', () => {
    const r = find(report, `http://loop.test:${H}/`);
    expect(r.verdict).toBe('failed');
    expect(codes(r)).toEqual(['secure-redirect-loop']);
    expect(r.findings[0]?.message).toBe(
      `redirect loop: https://loop.test:${S}/ -> https://loop.test:${S}/`,
    );
    expect(
      servers.requests.slice(requestsBefore).filter((u) => u.startsWith('https://loop.test'))
        .length,
    ).toBe(1);
  });

  it('passes each redirect target through all loaded rulesets', () => {
    const r = find(report, `http://hop.test:${H}/`);
    expect(r.verdict).toBe('ok');
    // hop.test's HTTPS sends to http://good.test, which the Good ruleset moves to HTTPS.
    expect(r.secure?.hops).toEqual([
      { url: `https://hop.test:${S}/`, status: 302 },
      { url: `https://good.test:${S}/`, status: 200 },
    ]);
    expect(r.secure?.finalUrl).toBe(`https://good.test:${S}/`);
  });

  it('stops after 10 redirects', () => {
    const r = find(report, `http://many.test:${H}/`);
    expect(r.verdict).toBe('failed');
    expect(codes(r)).toEqual(['secure-too-many-redirects']);
    expect(r.secure?.hops.length).toBe(11);
    expect(
      servers.requests.slice(requestsBefore).filter((u) => u.startsWith('https://many.test'))
        .length,
    ).toBe(11);
  });

  it('fails when the HTTPS side resets, refuses or does not answer in time', () => {
    const reset = find(report, `http://reset.test:${H}/`);
    expect(reset.verdict).toBe('failed');
    expect(codes(reset)[0]).toMatch(/^secure-(connect|tls)$/);
    const refused = find(report, `http://refused.test:${H}/`);
    expect(codes(refused)).toEqual(['secure-connect']);
    expect(refused.findings[0]?.message).toContain('ECONNREFUSED');
    const slow = find(report, `http://slow.test:${H}/`);
    expect(codes(slow)).toEqual(['secure-timeout']);
    expect(slow.findings[0]?.message).toContain('1500 ms');
  });

  it('reports a change of page structure as info, not as a failure', () => {
    const r = find(report, `http://changed.test:${H}/`);
    expect(r.verdict).toBe('ok');
    expect(r.similarity).not.toBeNull();
    expect(r.similarity!).toBeLessThan(0.5);
    expect(r.findings.map((f) => [f.severity, f.code])).toEqual([['info', 'structure-differs']]);
  });

  it('fails a test URL that does not resolve', () => {
    const r = find(report, `http://nowhere.invalid:${H}/`);
    expect(codes(r)).toEqual(['does-not-resolve']);
    expect(r.findings[0]?.message).toMatch(/^test URL does not resolve/);
    expect(r.secure).toBeNull();
  });

  it('skips rulesets that are off by default and sums up per ruleset', () => {
    expect(report.skippedDefaultOff).toBe(1);
    expect(report.rulesets.map((r) => r.name)).not.toContain('Off');
    const verdicts = Object.fromEntries(report.rulesets.map((r) => [r.name, r.verdict]));
    expect(verdicts).toEqual({
      Changed: 'ok',
      Good: 'ok',
      Hop: 'ok',
      Loop: 'failed',
      Many: 'failed',
      Missing: 'failed',
      Nowhere: 'failed',
      Refused: 'failed',
      Reset: 'failed',
      Slow: 'failed',
    });
    expect(report.failedRulesets).toBe(7);
    // Results come in file order whatever order the fetches finished in.
    expect(report.urls.map((u) => u.ruleset)).toEqual(
      [...report.urls.map((u) => u.ruleset)].sort(),
    );
  });

  it('does not trust the local CA unless --ca names it', async () => {
    const untrusted = await runFetchTest({
      paths: [join(dir, 'Good.xml')],
      resolve: resolveArgs,
      timeoutMs: 3000,
    });
    const r = find(untrusted, `http://good.test:${H}/`);
    expect(r.verdict).toBe('failed');
    expect(codes(r)).toEqual(['secure-tls']);
  });
});

describe('the built httpsify fetch-test command', () => {
  it('prints per-URL verdicts, writes the JSON report, exits 1 and disables only the failing ruleset', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'httpsify-fetch-cli-'));
    const good = readFileSync(join(dir, 'Good.xml'), 'utf8');
    const missing = readFileSync(join(dir, 'Missing.xml'), 'utf8');
    writeFileSync(join(copy, 'Good.xml'), good);
    writeFileSync(join(copy, 'Missing.xml'), missing);
    const json = join(copy, 'report.json');
    const args = [
      'fetch-test',
      copy,
      '--ca',
      pki.caPath,
      '--timeout',
      '3000',
      '--json',
      json,
      '--disable-failing',
      ...resolveArgs.flatMap((r) => ['--resolve', r]),
    ];
    // Asynchronous: the test servers live in this process and must keep answering meanwhile.
    const run = await runCli(args);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`http://good.test:${H}/`);
    expect(run.stdout).toContain(`http://missing.test:${H}/`);
    const report = JSON.parse(readFileSync(json, 'utf8')) as FetchTestReport;
    expect(Object.fromEntries(report.rulesets.map((r) => [r.name, r.verdict]))).toEqual({
      Good: 'ok',
      Missing: 'failed',
    });
    // The passing file is untouched; the failing one is off, and otherwise the same bytes.
    expect(readFileSync(join(copy, 'Good.xml'), 'utf8')).toBe(good);
    const disabled = readFileSync(join(copy, 'Missing.xml'), 'utf8');
    expect(disabled).toContain('default_off="failed ruleset test"');
    expect(
      disabled.replace(/<!--[^]*?-->\n?/, '').replace(' default_off="failed ruleset test"', ''),
    ).toBe(missing);
    const parsed = parseRulesetXml(disabled, 'Missing.xml');
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.ruleset?.defaultOff).toBe('failed ruleset test');
  }, 60_000);
});
