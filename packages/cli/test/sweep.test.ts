import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Ruleset } from '@httpsify/engine';
import { collectTestJobs } from '../src/fetch-test/test-jobs.js';
import { libraryRulesets, rulesetTests } from '../src/sweep/job-source.js';
import { corpusXmlFiles } from '../../engine/test/support/corpus.js';
import { readResults } from '../src/sweep/journal.js';
import { runSweep, type SweepOptions } from '../src/sweep/run-sweep.js';
import type { SweepResult, UrlVerdict } from '../src/sweep/verdicts.js';
import {
  BEHAVIOURS,
  startLocalWeb,
  writeLibrary,
  type Behaviour,
  type LocalWeb,
} from './support/local-web.js';

const EXPECTED: Record<Behaviour, UrlVerdict> = {
  good: 'works',
  expired: 'cert-expired',
  wrongname: 'cert-wrong-name',
  untrusted: 'cert-untrusted',
  refused: 'refused',
  slow: 'timeout',
  drip: 'timeout',
  differs: 'content-differs',
  httponly: 'refused',
  loop: 'redirect-loop',
  downgrade: 'https-to-http',
  flaky: 'works',
  broken5xx: 'https-status',
  huge: 'works',
  mixed: 'mixed-content',
  gone: 'host-gone',
  plaintls: 'tls-error',
};

let web: LocalWeb;
let root: string;

beforeAll(async () => {
  web = await startLocalWeb();
  root = mkdtempSync(join(tmpdir(), 'httpsify-sweep-'));
});
afterAll(async () => {
  await web.close();
});

function options(library: string, out: string, extra: Partial<SweepOptions> = {}): SweepOptions {
  return {
    paths: [library],
    outDir: out,
    concurrency: 12,
    request: {
      timeoutMs: 3000,
      maxBodyBytes: 64 * 1024,
      resolve: [],
      caFiles: [web.caPath],
      lookup: web.lookup,
      allowPrivate: true,
      connectPorts: web.connectPorts,
      perHostConnections: 2,
      perHostDelayMs: 0,
      globalRate: 0,
    },
    ...extra,
  };
}

async function results(out: string): Promise<SweepResult[]> {
  const all: SweepResult[] = [];
  for await (const r of readResults(join(out, 'results.jsonl'))) all.push(r);
  return all;
}

describe('httpsify sweep against the local web', () => {
  it('gives every scripted behaviour its verdict, per URL and per ruleset, with a report', async () => {
    const lib = join(root, 'lib-all');
    mkdirSync(lib);
    const hosts = BEHAVIOURS.map((b) => `site.${b}.test`);
    writeLibrary(lib, hosts);
    const outcome = await runSweep(options(lib, join(root, 'out-all')));
    const byHost = new Map(
      (await results(join(root, 'out-all'))).map((r) => [new URL(r.url).hostname, r]),
    );
    const judged = (b: Behaviour) => byHost.get(`site.${b}.test`)?.verdict;
    expect(Object.fromEntries(BEHAVIOURS.map((b) => [`site.${b}.test`, judged(b)]))).toEqual(
      Object.fromEntries(BEHAVIOURS.map((b) => [`site.${b}.test`, EXPECTED[b]])),
    );
    // A body is read up to the limit, never whole (the huge site sends 64 MB).
    expect(byHost.get('site.huge.test')?.similarity).toBe(1);
    const s = outcome.summary;
    expect(s.urls).toBe(hosts.length);
    expect(s.byHealth).toEqual({ ok: 3, warning: 1, failing: hosts.length - 4, unknown: 0 });
    const report = readFileSync(outcome.reportPath, 'utf8');
    expect(report).toContain('<svg');
    expect(report).toContain('certificate expired');
    expect(report).not.toMatch(/<script|<link|src=/);
  });

  it('names a library path it cannot read, and sweeps nothing', async () => {
    const missing = join(root, 'no-such-library');
    await expect(runSweep(options(missing, join(root, 'out-missing')))).rejects.toThrow(
      `cannot read rulesets from ${missing}: no such file or directory`,
    );
  });

  it('resumes after a kill: a torn last line is retried, done URLs are not fetched again', async () => {
    const lib = join(root, 'lib-resume');
    mkdirSync(lib);
    const hosts = Array.from({ length: 30 }, (_, i) => `r${i}.good.test`);
    writeLibrary(lib, hosts);
    const out = join(root, 'out-resume');
    await runSweep(options(lib, out));
    const lines = readFileSync(join(out, 'results.jsonl'), 'utf8').trimEnd().split('\n');
    // As if killed: 3 results never written, and one half-written.
    const kept = lines.slice(0, 26);
    writeFileSync(join(out, 'results.jsonl'), `${kept.join('\n')}\n`);
    appendFileSync(join(out, 'results.jsonl'), (lines[26] ?? '').slice(0, 40));
    const before = web.served.http;
    const outcome = await runSweep(options(lib, out));
    expect(web.served.http - before).toBe(4);
    expect(outcome.ranNow).toBe(4);
    const keys = (await results(out)).map((r) => r.key);
    expect(keys.length).toBe(30);
    expect(new Set(keys).size).toBe(30);
  });

  it('--write turns a ruleset off only when an earlier sweep confirms, and a recovered one back on', async () => {
    const lib = join(root, 'lib-write');
    mkdirSync(lib);
    writeLibrary(lib, ['w.expired.test', 'w.good.test', 'back.good.test']);
    const backFile = join(lib, 'back.good.test.xml');
    writeFileSync(
      backFile,
      '<!-- Disabled by httpsify sweep because:\n\tcertificate expired\n-->\n<ruleset name="back.good.test" default_off="sweep failed: certificate expired">\n\t<target host="back.good.test" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
    );
    const first = await runSweep(options(lib, join(root, 'out-w1'), { write: true }));
    expect(first.writeBack).toMatchObject({
      disabled: [],
      enabled: [],
      unconfirmed: [join(lib, 'w.expired.test.xml')],
    });
    // Too recent a previous sweep does not confirm either.
    const early = await runSweep(
      options(lib, join(root, 'out-w2'), {
        write: true,
        previous: first.summaryPath,
        confirmAfterMs: 3_600_000,
      }),
    );
    expect(early.writeBack?.disabled).toEqual([]);
    const second = await runSweep(
      options(lib, join(root, 'out-w3'), { write: true, previous: first.summaryPath }),
    );
    expect(second.writeBack).toMatchObject({
      disabled: [join(lib, 'w.expired.test.xml')],
      enabled: [backFile],
      errors: [],
    });
    const off = parseRulesetXml(readFileSync(join(lib, 'w.expired.test.xml'), 'utf8'), 'x').ruleset;
    expect(off?.defaultOff).toBe('sweep failed: certificate expired');
    expect(readFileSync(backFile, 'utf8')).toBe(
      '<ruleset name="back.good.test">\n\t<target host="back.good.test" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
    );
    expect(readFileSync(join(lib, 'w.good.test.xml'), 'utf8')).not.toContain('default_off');
    expect(readFileSync(second.reportPath, 'utf8')).toContain('Since the previous sweep');
  });

  it('discovers uncovered hosts whose HTTPS is equivalent and writes rulesets with tests', async () => {
    const lib = join(root, 'lib-disc');
    mkdirSync(lib);
    writeLibrary(lib, ['covered.good.test']);
    const list = join(root, 'hosts.csv');
    writeFileSync(
      list,
      '# rank,host\n1,covered.good.test\n2,new.good.test\n3,d.differs.test\nhttp://hist.good.test/some/page?q=1\n4,not a host!\n5,x.expired.test\n',
    );
    const bad: string[] = [];
    const outcome = await runSweep(
      options(lib, join(root, 'out-disc'), { discover: list, onBad: (m) => bad.push(m) }),
    );
    expect(bad).toEqual([`${list}:6: not a host name or URL: "4,not a host!"`]);
    expect(outcome.discovery).toEqual({ covered: 1, bad: 1 });
    expect(readdirSync(join(root, 'out-disc', 'rulesets')).sort()).toEqual([
      'Hist.good.test.xml',
      'New.good.test.xml',
    ]);
    const made = parseRulesetXml(
      readFileSync(join(root, 'out-disc', 'rulesets', 'New.good.test.xml'), 'utf8'),
      'n',
    );
    expect(made.ruleset?.targets.map((t) => t.host)).toEqual(['new.good.test']);
    expect(made.ruleset?.tests.length).toBeGreaterThan(0);
  });

  it('reads a library from a tar.gz archive', async () => {
    const lib = join(root, 'lib-tar');
    mkdirSync(lib);
    writeLibrary(lib, ['a.good.test', 'b.good.test']);
    execFileSync('tar', ['czf', join(root, 'lib.tar.gz'), '-C', lib, '.']);
    const names: string[] = [];
    for await (const r of libraryRulesets([join(root, 'lib.tar.gz')], () => undefined))
      names.push(r.name);
    expect(names.sort()).toEqual(['a.good.test', 'b.good.test']);
  });

  it('lists the same test URLs and rewrites as fetch-test on real corpus rulesets, faster', () => {
    const files = corpusXmlFiles().filter((_, i) => i % 300 === 7);
    const rulesets = files
      .map((f) => parseRulesetXml(readFileSync(f, 'utf8'), f).ruleset)
      .filter((r): r is Ruleset => r !== null);
    const all = createEngine(rulesets);
    let urls = 0;
    for (const r of rulesets) {
      const ours = rulesetTests(r, all).map((t) => [t.url, t.rewritten]);
      const theirs = collectTestJobs([r], all).jobs.map((j) => [j.url, j.rewritten]);
      expect(ours, r.name).toEqual(theirs);
      urls += ours.length;
    }
    expect(urls).toBeGreaterThan(rulesets.length);
  });
});
