import { beforeAll, describe, expect, it } from 'vitest';
import {
  compileBundle,
  isDefaultActive,
  loadBundle,
  type Engine,
  type Ruleset,
} from '../src/index.js';
import { loadRulesets } from '../src/node/index.js';
import { corpusRulesDir, readOracle, type OracleCase } from './support/corpus.js';
import { ReferenceModel } from './support/reference-model.js';

let oracle: OracleCase[];
let rulesets: Ruleset[];
let xmlEngine: Engine;
let bundleEngine: Engine;

beforeAll(async () => {
  oracle = await readOracle();
  const loaded = loadRulesets([corpusRulesDir()]);
  expect(loaded.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  rulesets = loaded.rulesets;
  xmlEngine = loaded.engine;
  // The bundle path: serialise, then load from a fresh copy of the bytes.
  bundleEngine = loadBundle(new Uint8Array(compileBundle(rulesets)));
});

function disagreements(engine: Engine, cases: readonly OracleCase[]): string[] {
  const out: string[] = [];
  for (const { url, expected } of cases) {
    const got = engine.rewrite(url);
    if (got !== expected) out.push(`${url}: expected ${expected}, got ${got}`);
  }
  return out;
}

describe('oracle conformance over the full 2018 corpus', () => {
  it('loads every corpus ruleset', () => {
    expect(rulesets.length).toBe(24264);
    expect(xmlEngine.rulesetCount).toBe(24264);
  });

  it('agrees with every oracle URL on the XML path', () => {
    expect(oracle.length).toBe(165028);
    expect(disagreements(xmlEngine, oracle)).toEqual([]);
  });

  it('agrees with every oracle URL on the bundle path', () => {
    expect(disagreements(bundleEngine, oracle)).toEqual([]);
  });

  it('really rewrites: most oracle URLs have a result and some stay unchanged', () => {
    const rewritten = oracle.filter((c) => c.expected !== null).length;
    expect(rewritten).toBeGreaterThan(100_000);
    expect(oracle.length - rewritten).toBeGreaterThan(10_000);
  });
});

/** Variants of oracle URLs of the kinds the public oracle lacks, checked against the plain model. */
function variants(url: string): string[] {
  const u = new URL(url);
  const host = u.hostname;
  const rest = url.slice(url.indexOf(host) + host.length);
  const scheme = url.slice(0, url.indexOf('://'));
  return [
    `${scheme}://${host.toUpperCase()}${rest}`,
    url.replace(/^http:/, 'HTTP:'),
    `${scheme}://${host}.${rest}`,
    `${scheme}://${host}..${rest}`,
    `${scheme}://${host}:8080${rest}`,
    `${scheme}://${host}:80${rest}`,
    `${scheme}://user:p%40ss@${host}${rest}`,
    `${scheme}://user@${host}${rest}`,
    `https://${host}${rest}`,
    `ftp://${host}${rest}`,
    `${scheme}://deep.er.${host}${rest}`,
    `${scheme}://x.${host}${rest}`,
    `${scheme}://${host}${rest}#frag`,
    `${scheme}://${host}/./a/../b?q='x'`,
    `${scheme}://${host}`,
    `${scheme}://${host.split('.').slice(1).join('.')}${rest}`,
  ];
}

describe('differential check against a plain model of the reference semantics', () => {
  it('agrees on ports, credentials, case, trailing dots, schemes and wildcard depths', () => {
    const model = new ReferenceModel(rulesets);
    const active = (rs: Ruleset) => isDefaultActive(rs);
    // Every 7th oracle URL keeps the run short while covering every ruleset shape.
    const sample = oracle.filter((_, i) => i % 7 === 0).flatMap((c) => variants(c.url));
    const extra = [
      'http://[::1]/',
      'http://127.0.0.1/',
      'http://1.1.1.1/',
      'http://xn--bcher-kva.de/',
      'http://bücher.de/',
      'http://./',
      'http://a..b.com/',
      'http://.wikipedia.org/',
      'mailto:a@b.c',
      'file:///etc/passwd',
      'http://' + 'a.'.repeat(130) + 'com/',
      'http://www.google.co.uk/',
      'http://files.x.geblogs.com/',
    ];
    const bad: string[] = [];
    let rewrittenCount = 0;
    for (const url of [...sample, ...extra]) {
      const expected = model.rewrite(url, active);
      const got = xmlEngine.rewrite(url);
      if (expected !== null) rewrittenCount++;
      if (got !== expected) bad.push(`${url}: model ${expected}, engine ${got}`);
    }
    expect(bad.slice(0, 20)).toEqual([]);
    expect(rewrittenCount).toBeGreaterThan(sample.length / 4);
  });

  it('orders candidates exactly as the reference (exact, per-label *, then *.suffix)', () => {
    const model = new ReferenceModel(rulesets);
    const hosts = [
      'www.google.com',
      'maps.google.co.uk',
      'a.b.c.google.com',
      'files.x.geblogs.com',
      'en.m.wikipedia.org',
      'www.amazon.co.uk',
    ];
    for (const host of hosts) {
      const expected = model.candidates(host).map((rs) => rs.name);
      const got = xmlEngine.candidateRulesets(host).map((id) => xmlEngine.rulesetName(id));
      expect(got, host).toEqual(expected);
    }
  });

  it('honours per-ruleset overrides and the mixed-content switch', () => {
    const model = new ReferenceModel(rulesets);
    // Take rewritten oracle URLs, turn off the ruleset that rewrote each, compare with the model.
    const cases = oracle.filter((c, i) => c.expected !== null && i % 5000 === 0);
    expect(cases.length).toBeGreaterThan(10);
    for (const { url, expected } of cases) {
      const { ruleset: name } = xmlEngine.rewriteWithRuleset(url);
      expect(name).not.toBeNull();
      xmlEngine.setActive(name!, false);
      expect(xmlEngine.rewrite(url), url).toBe(
        model.rewrite(url, (rs) => isDefaultActive(rs) && rs.name !== name),
      );
      xmlEngine.setActive(name!, undefined);
      expect(xmlEngine.rewrite(url)).toBe(expected);
    }
    const off = rulesets.find(
      (rs) =>
        rs.defaultOff !== undefined &&
        rs.platform === undefined &&
        rs.targets.some((t) => !t.host.includes('*')),
    )!;
    const offUrl = `http://${off.targets.find((t) => !t.host.includes('*'))!.host}/`;
    xmlEngine.setActive(off.name, true);
    expect(xmlEngine.rewrite(offUrl)).toBe(
      model.rewrite(offUrl, (rs) => isDefaultActive(rs) || rs.name === off.name),
    );
    xmlEngine.setActive(off.name, undefined);
    expect(xmlEngine.rewrite(offUrl)).toBe(model.rewrite(offUrl, (rs) => isDefaultActive(rs)));

    const mixed = rulesets.find(
      (rs) =>
        rs.platform === 'mixedcontent' &&
        rs.defaultOff === undefined &&
        rs.targets.some((t) => !t.host.includes('*')),
    )!;
    const host = mixed.targets.find((t) => !t.host.includes('*'))!.host;
    const withMixed = model.rewrite(`http://${host}/`, (rs) =>
      isDefaultActive(rs, { mixedContent: true }),
    );
    xmlEngine.setMixedContent(true);
    expect(xmlEngine.rewrite(`http://${host}/`)).toBe(withMixed);
    xmlEngine.setMixedContent(false);
    expect(xmlEngine.rewrite(`http://${host}/`)).toBe(
      model.rewrite(`http://${host}/`, (rs) => isDefaultActive(rs)),
    );
  });
});

describe('bundle determinism', () => {
  it('gives byte-identical output for the same input', () => {
    const a = compileBundle(rulesets, { timestamp: 1_700_000_000 });
    const b = compileBundle(rulesets, { timestamp: 1_700_000_000 });
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(0);
  });
});
