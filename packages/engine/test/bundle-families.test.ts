/**
 * One round trip per family of bundle sections: write only that family's sections, read them back
 * with the reader the matcher uses, compare with the input; and, as ghostery's adblocker checks
 * its serialisers, the size the format predicts for the written data equals the bytes written.
 */
import { describe, expect, it } from 'vitest';
import {
  COLUMN_WORDS,
  FIRST_PACKED,
  HEADER_BYTES,
  LayoutField,
  nodeIndexLength,
  nodeLayout,
  type NodeLayout,
  PACKED_COUNT,
  PatternVerdictCode,
  RuleKind,
  Section,
  writePackedColumns,
} from '../src/bundle/format.js';
import {
  checkHostTrie,
  decodeNodes,
  firstChildren,
  HostTrie,
  writeHostTrie,
} from '../src/bundle/host-trie.js';
import { blockWords, pack, PackedArray, packedWords } from '../src/bundle/packed-array.js';
import { patternVerdicts } from '../src/bundle/pattern-verdicts.js';
import { poolSize, varintBytes, writeColdStrings } from '../src/bundle/pool.js';
import {
  type BundleSections,
  readBundleHeader,
  readBundleSections,
  readPackedColumns,
} from '../src/bundle/read.js';
import { checkRulesetColumns, writeRulesetColumns } from '../src/bundle/ruleset-columns.js';
import { checkRulesetRefs } from '../src/bundle/ruleset-refs.js';
import { codeStrings, readDictionary } from '../src/bundle/string-dictionary.js';
import { assemble, compileBundle, placeSections } from '../src/bundle/write.js';
import { HostIndex } from '../src/match/host-index.js';
import { loadBundle } from '../src/match/engine.js';
import { PatternCache } from '../src/match/pattern-cache.js';
import { RulesetState } from '../src/match/ruleset-state.js';
import { StringPool } from '../src/match/string-pool.js';
import { isTrivialRule, type Ruleset } from '../src/model/ruleset.js';
import { defaultRulesetsDir, loadRulesets } from '../src/node/index.js';
import { isLiteralRule } from '../src/regex/prepared-pattern.js';
import { corpusSubsetDir } from './support/corpus.js';

function ruleset(name: string, extra: Partial<Ruleset> = {}): Ruleset {
  return {
    name,
    targets: [{ host: `${name.toLowerCase().replace(/[^a-z0-9]+/g, '')}.example` }],
    rules: [{ from: '^http:', to: 'https:' }],
    exclusions: [],
    secureCookies: [],
    tests: [],
    ...extra,
  };
}

/** Strings whose coding or length header is out of the ordinary. */
const ODD = [
  '',
  'ÿ\u00ff\u0080 — naïve Bücher 日本語 \u{1f512}',
  '\u0000\u0001\u007f',
  'x'.repeat(127),
  'y'.repeat(128),
  '^http://(www\\.)?'.repeat(1200),
];

/** Hand-written rulesets every family must carry: notes, platforms, cookies, odd strings. */
const HANDMADE: Ruleset[] = [
  ruleset('Trivial only'),
  ruleset('Off', { defaultOff: 'breaks the site' }),
  ruleset('Mixed', { platform: 'mixedcontent' }),
  ruleset('Off mixed', { platform: 'mixedcontent', defaultOff: '' }),
  ruleset('Other platform', { platform: 'cacert' }),
  ruleset(ODD[1] as string, {
    defaultOff: ODD[5] as string,
    rules: [
      { from: '^http://a\\.example/', to: 'https://b.example/' },
      { from: '^http://(\\w+)\\.example/', to: 'https://$1.example/' },
      { from: '^http:', to: 'https:' },
    ],
    exclusions: ODD.map((pattern) => ({ pattern })),
    secureCookies: [
      { host: '.+', name: '.+' },
      { host: ODD[2] as string, name: ODD[3] as string },
    ],
  }),
  ruleset('Empty', { rules: [] }),
];

const defaults = loadRulesets([defaultRulesetsDir()]).rulesets;
const subset = loadRulesets([corpusSubsetDir(40)]).rulesets;
const RULESETS = [...HANDMADE, ...defaults, ...subset];

/** A Layout section around `columnWords`: a one-node host index, whose NodeRef column is [0]. */
function layoutAround(columnWords: number[]): Uint32Array {
  return Uint32Array.from([1, 1, 0, ...columnWords]);
}

const header = (rulesetCount: number) => ({
  formatVersion: 0,
  byteLength: 0,
  timestamp: 0,
  rulesetCount,
});

describe('ruleset columns (RsFlags to CookieName), with the cold strings and the verdicts', () => {
  const n = RULESETS.length;
  const { columns, strings } = writeRulesetColumns(RULESETS);
  const cold = writeColdStrings(strings);
  const values: ArrayLike<number>[] = columns.map((column, s) =>
    [Section.RsFlags, Section.NoteOwner, Section.PlatformOwner, Section.RuleKind].includes(s) ||
    (s >= Section.RsRuleStart && s <= Section.RsCookieStart)
      ? column
      : column.map((i) => cold.offsets[i] as number),
  );
  values[Section.PatternVerdict] = patternVerdicts(RULESETS);
  values[Section.NodeRef] = [0];
  const packed = writePackedColumns(values);
  const u32: Uint32Array[] = [];
  u32[Section.Layout] = layoutAround(packed.layoutWords);
  packed.sections.forEach((words, s) => (u32[s] = words));
  const sections = {
    header: header(n),
    packed: readPackedColumns(u32, n),
  } as unknown as BundleSections;
  const pool = new StringPool(cold.bytes, cold.dictionary);
  const state = new RulesetState(sections, pool, false);
  const patterns = new PatternCache(sections, pool, state, 16, true);

  it('reads every ruleset back as the matcher reads it', () => {
    expect(checkRulesetColumns(n, sections.packed)).toBeNull();
    RULESETS.forEach((rs, id) => {
      expect(state.name(id)).toBe(rs.name);
      expect(state.defaultOff(id)).toBe(rs.defaultOff ?? null);
      expect(state.platform(id)).toBe(rs.platform ?? null);
      expect(state.isDefaultActive(id, false)).toBe(
        rs.defaultOff === undefined && rs.platform === undefined,
      );
      expect(state.isDefaultActive(id, true)).toBe(
        rs.defaultOff === undefined && (rs.platform ?? 'mixedcontent') === 'mixedcontent',
      );
      expect(state.isTrivialOnly(id)).toBe(
        rs.rules.length === 1 && isTrivialRule(rs.rules[0]!) && rs.exclusions.length === 0,
      );
      const read = (start: PackedArray, each: (i: number) => unknown) =>
        Array.from({ length: start.get(id + 1) - start.get(id) }, (_, k) =>
          each(start.get(id) + k),
        );
      const text = (column: PackedArray) => (i: number) => pool.decode(column.get(i));
      expect(
        read(patterns.ruleStart, (r) => [text(patterns.ruleFrom)(r), text(patterns.ruleTo)(r)]),
      ).toEqual(rs.rules.map((r) => [r.from, r.to]));
      expect(read(patterns.ruleStart, (r) => patterns.ruleKind.get(r))).toEqual(
        rs.rules.map((r) =>
          isTrivialRule(r)
            ? RuleKind.Trivial
            : isLiteralRule(r.from, r.to)
              ? RuleKind.Literal
              : RuleKind.General,
        ),
      );
      expect(read(patterns.exclusionStart, text(patterns.exclusionPattern))).toEqual(
        rs.exclusions.map((e) => e.pattern),
      );
      expect(
        read(patterns.cookieStart, (c) => [
          text(patterns.cookieHost)(c),
          text(patterns.cookieName)(c),
        ]),
      ).toEqual(rs.secureCookies.map((c) => [c.host, c.name]));
    });
  });

  it('keeps the regex verdicts in pattern order', () => {
    const verdicts = sections.packed[Section.PatternVerdict] as PackedArray;
    const want = values[Section.PatternVerdict] as PatternVerdictCode[];
    expect(verdicts.length).toBe(want.length);
    expect(Array.from({ length: want.length }, (_, i) => verdicts.get(i))).toEqual(want);
    // The corpus has patterns of every kind but the rare Judge.
    expect(new Set(want)).toContain(PatternVerdictCode.Proven);
    expect(new Set(want)).toContain(PatternVerdictCode.None);
  });

  it('fills each packed section with exactly the words its count and width predict', () => {
    expect(packed.layoutWords.length).toBe(COLUMN_WORDS * PACKED_COUNT);
    for (let k = 0; k < PACKED_COUNT; k++) {
      const [count, bits, blocked] = packed.layoutWords.slice(COLUMN_WORDS * k) as number[];
      expect(count).toBe(values[FIRST_PACKED + k]!.length);
      const predicted = (blocked === 1 ? blockWords(count!) : 0) + packedWords(count!, bits!);
      expect(packed.sections[FIRST_PACKED + k]!.length).toBe(predicted);
    }
  });

  it('pools each cold string once, in first-use order, at exactly its predicted size', () => {
    expect(new Set(strings).size).toBe(strings.length);
    for (const s of ODD) expect(strings).toContain(s);
    // The few-distinct columns come first (narrow offsets), the names last.
    expect(strings.indexOf('mixedcontent')).toBeLessThan(strings.indexOf('breaks the site'));
    expect(strings.indexOf('.+')).toBeLessThan(strings.indexOf('Trivial only'));
    const coded = codeStrings(strings);
    expect(cold.bytes.length).toBe(poolSize(coded.coded));
    // Each string's offset is the previous one's plus its header and coded bytes.
    coded.coded.forEach((c, i) => {
      const end = i + 1 < strings.length ? cold.offsets[i + 1]! : cold.bytes.length;
      expect(end - cold.offsets[i]!).toBe(varintBytes(c.length).length + c.length);
    });
    const dictionary = readDictionary(cold.dictionary);
    expect(typeof dictionary).not.toBe('string');
    const entries = (dictionary as (Uint8Array | undefined)[]).filter((e) => e !== undefined);
    expect(cold.dictionary.length).toBe(entries.reduce((a, e) => a + 2 + e.length, 0));
    strings.forEach((s, i) => expect(pool.decode(cold.offsets[i]!)).toBe(s));
  });
});

describe('host trie (Labels, ChildCounts, Nodes, NodeIndex) and its ruleset refs', () => {
  const extra: [string, number][] = [
    ['.', 0],
    ['*.example.com', 0],
    ['example.*', 1],
    [`${'l'.repeat(200)}.example.com`, 1],
    ['bücher.example.com', 2],
    // Children sharing a list under a node that is no target: a ghost list.
    ['a.ghost.example', 3],
    ['b.ghost.example', 3],
    ['c.ghost.example', 3],
    ['a.ghost.example', 4],
    ['b.ghost.example', 4],
    ['c.ghost.example', 4],
    ['d.ghost.example', 2],
    // A child carrying its parent's list: inherited.
    ['inherit.example', 5],
    ['www.inherit.example', 5],
  ];
  const targets: Set<string>[] = RULESETS.map((rs) => new Set(rs.targets.map((t) => t.host)));
  for (const [host, id] of extra) targets[id]!.add(host);
  const trie = new HostTrie();
  targets.forEach((hosts, id) => {
    for (const host of [...hosts].sort()) trie.add(host, id);
  });
  const n = RULESETS.length;
  const written = writeHostTrie(trie, n);
  const layout = nodeLayout(written.layoutWords) as NodeLayout;
  const nodeCount = trie.nodes.length;
  const u8: Uint8Array[] = [];
  const u32: Uint32Array[] = [];
  u8[Section.Labels] = written.labels;
  u8[Section.LabelDictionary] = written.labelDictionary;
  u8[Section.ChildCounts] = written.childCounts;
  u8[Section.Nodes] = written.nodes;
  u32[Section.NodeIndex] = written.nodeIndex;
  u32[Section.RefList] = written.refList;
  const refBits = Math.max(1, 32 - Math.clz32(Math.max(...written.nodeRef)));
  const packed: PackedArray[] = [];
  packed[Section.NodeRef] = new PackedArray(pack(written.nodeRef, refBits), refBits, nodeCount);
  const index = new HostIndex({ header: header(n), layout, u8, u32, packed } as BundleSections);

  it('gives each ruleset its targets back, through own, inherited and ghost refs', () => {
    expect(typeof layout).toBe('object');
    expect(
      checkHostTrie(
        layout,
        u8[Section.ChildCounts]!,
        u8[Section.Nodes]!,
        written.labels,
        written.nodeIndex,
      ),
    ).toBeNull();
    expect(checkRulesetRefs(n, packed[Section.NodeRef]!, nodeCount, written.refList)).toBeNull();
    targets.forEach((hosts, id) => expect(index.targetsOf(id).sort()).toEqual([...hosts].sort()));
    // Both kinds of shared list are there to be read back.
    const refs = Array.from({ length: nodeCount }, (_, i) => written.nodeRef[i]!);
    expect(refs).toContain(1);
    expect(refs.some((r) => r > n + 1 + written.refList.length)).toBe(true);
  });

  it('writes each section at exactly the size the trie predicts', () => {
    const children = new Array<number>(nodeCount).fill(0);
    for (const node of trie.nodes.slice(1)) children[node.parent]!++;
    expect(written.childCounts.length).toBe(
      children.reduce((a, c) => a + varintBytes(c).length, 0),
    );
    expect(written.nodeIndex.length).toBe(nodeIndexLength(nodeCount));
    expect(written.nodeRef.length).toBe(nodeCount);
    const labels = [...new Set(trie.nodes.slice(1).map((node) => node.label))].sort();
    const long = layout.lengthMask;
    const lengths = labels.map((l) => new TextEncoder().encode(l).length);
    expect(written.labels.length).toBe(
      poolSize(codeStrings(labels).coded, (i) => lengths[i]! >= long || lengths[i] === 0),
    );
    // A flags byte per node, then each label id as a varint: whole for a first child (and the
    // root), else its rise over the previous sibling.
    const first = firstChildren(written.childCounts, nodeCount) as Int32Array;
    const records = decodeNodes(written.nodes, first, layout, written.labels.length) as Uint32Array;
    const label = (i: number) => records[i]! & layout.labelMask;
    let nodeBytes = nodeCount + 1;
    for (let p = 0; p < nodeCount; p++)
      for (let i = first[p]!; i < first[p + 1]!; i++)
        nodeBytes += varintBytes(i === first[p] ? label(i) : label(i) - label(i - 1)).length;
    expect(written.nodes.length).toBe(nodeBytes);
    // Every RefList entry is a count then that many ids, all in range, each list once.
    const lists = new Set<string>();
    for (let at = 0; at < written.refList.length; at += 1 + written.refList[at]!) {
      const list = written.refList.subarray(at + 1, at + 1 + written.refList[at]!);
      expect(list.length).toBeGreaterThan(1);
      expect(lists.has(list.join())).toBe(false);
      lists.add(list.join());
    }
  });
});

describe('container (header, directory, aligned sections)', () => {
  it('lays sections out at the predicted offsets and size, and reads them back', () => {
    const bundle = compileBundle(RULESETS, { timestamp: 1_700_000_000 });
    const read = readBundleSections(bundle);
    const sections: ArrayBufferView[] = [];
    for (let s = 0; s < Section.Count; s++) sections[s] = read.u8[s] ?? read.u32[s]!;
    const again = assemble(sections, 1_700_000_000, RULESETS.length);
    expect(again).toEqual(bundle);
    const placed = placeSections(sections.map((s) => s.byteLength));
    expect(again.length).toBe(placed.total);
    expect(placed.offsets[0]).toBe(HEADER_BYTES + 8 * Section.Count);
    const view = new DataView(again.buffer);
    placed.offsets.forEach((at, s) => {
      expect(view.getUint32(HEADER_BYTES + 8 * s, true)).toBe(at);
      expect(at % 4).toBe(0);
    });
    expect(readBundleHeader(again)).toEqual({
      formatVersion: read.header.formatVersion,
      byteLength: placed.total,
      timestamp: 1_700_000_000,
      rulesetCount: RULESETS.length,
    });
    expect(read.u32[Section.Layout]!.length).toBe(LayoutField.Count + COLUMN_WORDS * PACKED_COUNT);
    expect(() => assemble([Uint8Array.of(1), ...sections.slice(1)], 0, 1)).toThrow(
      /partial element/,
    );
  });
});

describe('listing every ruleset without decoding each one', () => {
  const bundle = compileBundle(RULESETS, { timestamp: 1_700_000_000 });

  it('allTargets gives each ruleset the targets targetsOf gives, in the same order', () => {
    // Two engines: allTargets runs first on one whose trie nothing has decoded or cached yet.
    const listed = loadBundle(bundle).allTargets();
    const one = loadBundle(bundle);
    expect(listed.length).toBe(RULESETS.length);
    listed.forEach((hosts, id) => expect(hosts).toEqual(one.targetsOf(id)));
    expect(listed.some((hosts) => hosts.some((h) => h.startsWith('*.')))).toBe(true);
  });

  it('reads the default_off note and the platform as the decoded ruleset holds them', () => {
    const engine = loadBundle(bundle);
    for (let id = 0; id < engine.rulesetCount; id++) {
      const rs = engine.ruleset(id);
      expect(engine.defaultOffNote(id)).toBe(rs.defaultOff ?? null);
      expect(engine.platformOf(id)).toBe(rs.platform ?? null);
    }
    expect(RULESETS.some((r) => r.defaultOff !== undefined)).toBe(true);
    expect(RULESETS.some((r) => r.platform !== undefined)).toBe(true);
  });
});
