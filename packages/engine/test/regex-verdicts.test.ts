import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLUMN_WORDS, LayoutField, PatternVerdictCode, Section } from '../src/bundle/format.js';
import { readBundleSections } from '../src/bundle/read.js';
import { compileBundle } from '../src/bundle/write.js';
import {
  type ChannelRecord,
  type ChannelStorage,
  checkChannel,
  fetchBytesWith,
  keyCertificateFiles,
  releaseFiles,
  scopedEngineFromChannels,
  selectActiveChannels,
} from '../src/channels/index.js';
import { loadBundle, type EngineOptions } from '../src/match/engine.js';
import type { Ruleset } from '../src/model/ruleset.js';
import { loadRulesets } from '../src/node/index.js';
import {
  fetchTrusting,
  makeCertificate,
  startChannelServer,
  testDefinition,
  testPublisher,
  writeFiles,
} from './channels-support.js';
import { corpusXmlFiles, repoRoot } from './support/corpus.js';
import { parseRulesetXml } from '../src/parse/xml-ruleset.js';
import {
  CATASTROPHIC_FROM,
  forgeProvenVerdict,
  HOSTILE_RULESET,
  HOSTILE_URL,
} from './support/forged-verdicts.js';

/** The regex door's verdicts stored at compile time: used for our own builds only, checked at the door. */

/**
 * A corpus slice (every 8th file) with many regex patterns (rules, exclusions, securecookies),
 * plus one ruleset whose patterns take the rarer routes: a linear-time one (judged at first use
 * even in our own build) and quadratic ones, met with input beyond QUADRATIC_INPUT_LIMIT.
 */
const RARE = parseRulesetXml(
  '<ruleset name="Rare routes"><target host="rare.example"/>' +
    '<exclusion pattern="^http://rare\\.example/x/+(?!.+\\.css)"/>' +
    '<rule from="^http://rare\\.example/(a|a)*b" to="https://rare.example/linear"/>' +
    '<rule from="^http://rare\\.example/.*\\.y\\.com$" to="https://rare.example/quadratic"/>' +
    '<rule from="^http:" to="https:"/></ruleset>',
  'rare.xml',
).ruleset as Ruleset;
const SLICE: Ruleset[] = [
  ...corpusXmlFiles()
    .filter((_, i) => i % 8 === 0)
    .flatMap((file) => parseRulesetXml(readFileSync(file, 'utf8'), file).ruleset ?? []),
  RARE,
];
const LONG = 'z'.repeat(5000);
const URLS: string[] = [
  ...SLICE.flatMap((rs) => [
    ...rs.tests.map((t) => t.url),
    ...rs.targets
      .filter((t) => !t.host.includes('*'))
      .map((t) => `http://${t.host}/some/path.css?q=1`),
  ]),
  ...[
    'aab',
    'x//a.js',
    `x//${LONG}.js`,
    `x//${LONG}.css`,
    'q.y.com',
    `${LONG}.y.com`,
    `${LONG}.y.co`,
  ].map((p) => `http://rare.example/${p}`),
];

/** What an engine does with every URL and cookie of the slice: rewrites, then refusals. */
function behaviour(bytes: Uint8Array, options: EngineOptions): unknown[] {
  const engine = loadBundle(bytes, options);
  const out: unknown[] = URLS.map((u) => engine.rewrite(u));
  for (const rs of SLICE)
    for (const t of rs.targets)
      out.push(engine.shouldSecureCookie({ domain: t.host.replace('*', 'x'), name: 'session' }));
  out.push(engine.takeRegexRefusals().map((r) => r.ruleset));
  return out;
}

describe('regex verdicts stored in the bundle', () => {
  const plain = compileBundle(SLICE);
  const withVerdicts = compileBundle(SLICE, { regexVerdicts: true });

  it('stores a verdict for the patterns that need a regex, and none for the rest', () => {
    const { packed } = readBundleSections(withVerdicts);
    const column = packed[Section.PatternVerdict];
    expect(readBundleSections(plain).packed[Section.PatternVerdict]?.length).toBe(0);
    const counts = new Map<number, number>();
    for (let i = 0; i < (column?.length ?? 0); i++) {
      const code = column?.get(i) as number;
      counts.set(code, (counts.get(code) ?? 0) + 1);
    }
    const patterns = SLICE.reduce(
      (n, rs) => n + rs.rules.length + rs.exclusions.length + 2 * rs.secureCookies.length,
      0,
    );
    expect(column?.length).toBe(patterns);
    // Most patterns are finite languages or prefix swaps; many others need a regex.
    expect(counts.get(PatternVerdictCode.None)).toBeGreaterThan(patterns / 2);
    expect(counts.get(PatternVerdictCode.Proven)).toBeGreaterThan(100);
    expect(counts.get(PatternVerdictCode.Quadratic)).toBeGreaterThan(100);
    expect(counts.get(PatternVerdictCode.Judge)).toBeGreaterThan(0);
  });

  it('an engine trusting the stored verdicts answers exactly as one that judges every pattern', () => {
    const judged = behaviour(withVerdicts, {});
    expect(behaviour(withVerdicts, { trustBundledRegexVerdicts: true })).toEqual(judged);
    expect(behaviour(plain, { trustBundledRegexVerdicts: true })).toEqual(judged);
    expect(judged.filter((r) => typeof r === 'string').length).toBeGreaterThan(1000);
    // The rare routes were taken: linear-time, and quadratic on long input (re2js beyond the limit).
    const rare = judged.slice(URLS.length - 7, URLS.length);
    expect(rare).toEqual([
      'https://rare.example/linear',
      null,
      `https://rare.example/x//${LONG}.js`,
      // Beyond the limit a lookahead with no linear-time spelling does not veto (docs/regex-guard.md).
      `https://rare.example/x//${LONG}.css`,
      'https://rare.example/quadratic',
      'https://rare.example/quadratic',
      `https://rare.example/${LONG}.y.co`,
    ]);
  });

  it('rejects, at the bundle door, a verdict column no writer makes, even for trusted bytes (O(1))', () => {
    const layoutAt = new DataView(withVerdicts.buffer, withVerdicts.byteOffset).getUint32(40, true);
    const word = (field: 0 | 1) =>
      layoutAt +
      (LayoutField.Count + COLUMN_WORDS * (Section.PatternVerdict - Section.RsFlags) + field) * 4;
    const edited = (field: 0 | 1, value: number): Uint8Array => {
      const bytes = withVerdicts.slice();
      new DataView(bytes.buffer).setUint32(word(field), value, true);
      return bytes;
    };
    expect(() => loadBundle(edited(0, 5), { verify: 'trusted' })).toThrow(
      /5 regex verdicts for \d+ patterns/,
    );
    // Three bits could name codes that do not exist.
    expect(() => loadBundle(edited(1, 3), { verify: 'trusted' })).toThrow(
      /regex verdicts of 3 bits/,
    );
  });
});

describe('a bundle that calls a catastrophic regex safe', () => {
  const forged = forgeProvenVerdict([HOSTILE_RULESET]);

  it('is believed only by the load our own packaged build uses (so the forgery is real)', () => {
    const trusting = loadBundle(forged, { verify: 'trusted', trustBundledRegexVerdicts: true });
    expect(trusting.rewrite(HOSTILE_URL)).toBe('https://evil.example/');
    expect(trusting.takeRegexRefusals()).toEqual([]);
  });

  it('is judged again by loadBundle with its default options, trusted bytes or not', () => {
    for (const verify of ['full', 'trusted'] as const) {
      const engine = loadBundle(forged, { verify });
      expect(engine.rewrite(HOSTILE_URL)).toBeNull();
      expect(engine.takeRegexRefusals()).toEqual([
        expect.objectContaining({ ruleset: 'Hostile', pattern: CATASTROPHIC_FROM }),
      ]);
    }
  });

  it('is judged again when named with --rules (loadRulesets), whatever options the caller passes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-verdicts-'));
    try {
      const file = join(dir, 'hostile.bundle');
      writeFileSync(file, forged);
      const sneaky = { trustBundledRegexVerdicts: true } as unknown as Parameters<
        typeof loadRulesets
      >[1];
      for (const paths of [[file], [file, file]]) {
        const { engine } = loadRulesets(paths, sneaky);
        expect(engine.rewrite(HOSTILE_URL)).toBeNull();
        expect(engine.takeRegexRefusals().map((r) => r.pattern)).toContain(CATASTROPHIC_FROM);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('through a signed channel release', () => {
    const cert = makeCertificate();
    let root: string;
    let close: () => Promise<void>;
    let urlPrefix: string;
    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'httpsify-verdicts-channel-'));
      const server = await startChannelServer(cert, root);
      close = () => server.close();
      urlPrefix = server.urlPrefix;
    });
    afterAll(async () => {
      await close();
      rmSync(root, { recursive: true, force: true });
    });

    it('installs (its signature is good) but its regex is judged, as a channel layer', async () => {
      const publisher = await testPublisher();
      const def = testDefinition(publisher, urlPrefix);
      const ts = 1_700_000_000;
      const bundle = forgeProvenVerdict([HOSTILE_RULESET], 0, ts);
      const key = publisher.keys.get(1);
      if (key === undefined) throw new Error('no key');
      writeFiles(root, {
        ...(await keyCertificateFiles(def, publisher.root.privateKey, key.publicKey, 1)),
        ...(await releaseFiles(
          def,
          bundle,
          ts,
          key.privateKey,
          1,
          new Uint8Array(gzipSync(bundle)),
        )),
        'latest-timestamp': `${ts}\n`,
      });
      let record: ChannelRecord | undefined;
      const storage: ChannelStorage = {
        load: async () => (record ? structuredClone(record) : undefined),
        save: async (r) => {
          record = structuredClone(r);
        },
      };
      const report = await checkChannel(def, storage, {
        fetchBytes: fetchBytesWith(fetchTrusting(cert.cert)),
        now: () => ts + 60,
      });
      expect(report.result).toBe('updated');
      const sneaky = { trustBundledRegexVerdicts: true } as unknown as Parameters<
        typeof scopedEngineFromChannels
      >[2];
      const engine = scopedEngineFromChannels(
        selectActiveChannels(record ? [record] : []),
        null,
        sneaky,
      );
      expect(engine.rewrite(HOSTILE_URL)).toBeNull();
    });
  });
});

describe('who may trust a bundle’s verdicts', () => {
  /** Every source file that passes the option; each is a load of a bundle we built ourselves. */
  const ALLOWED = [
    'packages/engine/src/node/default-bundle.ts',
    'packages/extension/src/rewriter/engine-loader.ts',
  ];

  it('only the loaders of our own packaged defaults (extension, Node) pass trustBundledRegexVerdicts: true', () => {
    const found: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (
          name.endsWith('.ts') &&
          /trustBundledRegexVerdicts\s*:(?!\s*false\b)/.test(readFileSync(path, 'utf8'))
        )
          found.push(relative(repoRoot, path));
      }
    };
    for (const pkg of ['engine', 'cli', 'extension', 'fetch'])
      walk(join(repoRoot, 'packages', pkg, 'src'));
    expect(found.filter((f) => !f.endsWith('match/engine.ts'))).toEqual(ALLOWED);
  });
});
