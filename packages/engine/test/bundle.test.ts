import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BundleError,
  compileBundle,
  FORMAT_VERSION,
  loadBundle,
  readBundleHeader,
  type Ruleset,
} from '../src/index.js';
import { parseRulesetXml } from '../src/parse/index.js';
import { checksum, nodeLayout, type NodeLayout } from '../src/bundle/format.js';
import { decodeNodes, firstChildren } from '../src/bundle/host-trie.js';
import { readBundleSections } from '../src/bundle/read.js';
import { HostIndex } from '../src/match/host-index.js';
import { defaultRulesetsDir, listRulesetFiles, loadRulesets } from '../src/node/index.js';

/** Rewrites the header checksum after a deliberate edit, so only the deeper checks can object. */
function reseal(bytes: Uint8Array): Uint8Array {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(32, checksum(bytes), true);
  return bytes;
}

const defaults: Ruleset[] = loadRulesets([defaultRulesetsDir()]).rulesets;

/** Section numbers (format.ts Section) and the host-index words of the Layout section. */
const ChildCounts = 2;
const Nodes = 3;
const NodeIndex = 4;
const RefList = 5;
const Dictionary = 6;
/** The first packed column (RsFlags); RsName follows it. */
const FIRST_PACKED = 8;
const RsName = 9;
const NoteOwner = 10;
const RsRuleStart = 14;
const RuleFrom = 17;
const NodeRef = 24;
const LabelDictionary = 25;
const HOST_LAYOUT_WORDS = 3;
const COLUMN_WORDS = 3;

describe('compiled bundle', () => {
  const bundle = compileBundle(defaults, { timestamp: 1_750_000_000 });

  it('carries magic, version, size, timestamp and ruleset count in its header', () => {
    expect(Buffer.from(bundle.subarray(0, 7)).toString('latin1')).toBe('HTTPSFY');
    expect(readBundleHeader(bundle)).toEqual({
      formatVersion: FORMAT_VERSION,
      byteLength: bundle.length,
      timestamp: 1_750_000_000,
      rulesetCount: defaults.length,
    });
  });

  it('round-trips every ruleset through the bundle (tests aside)', () => {
    const engine = loadBundle(bundle);
    expect(engine.rulesetCount).toBe(defaults.length);
    defaults.forEach((rs, id) => {
      const back = engine.ruleset(id);
      expect(back.name).toBe(rs.name);
      expect(back.targets.map((t) => t.host).sort()).toEqual(
        [...new Set(rs.targets.map((t) => t.host))].sort(),
      );
      expect(back.rules.map((r) => [r.from, r.to])).toEqual(rs.rules.map((r) => [r.from, r.to]));
      expect(back.exclusions.map((e) => e.pattern)).toEqual(rs.exclusions.map((e) => e.pattern));
      expect(back.secureCookies.map((c) => [c.host, c.name])).toEqual(
        rs.secureCookies.map((c) => [c.host, c.name]),
      );
    });
  });

  it('rejects truncated, extended, corrupt and wrong-version bundles with a clear error', () => {
    expect(() => loadBundle(bundle.subarray(0, 20))).toThrow(/shorter than the 40-byte header/);
    expect(() => loadBundle(bundle.subarray(0, bundle.length - 8))).toThrow(/truncated bundle/);
    const longer = new Uint8Array(bundle.length + 4);
    longer.set(bundle);
    expect(() => loadBundle(longer)).toThrow(/unexpected bytes after the end/);
    const wrongVersion = bundle.slice();
    new DataView(wrongVersion.buffer).setUint32(8, FORMAT_VERSION + 1, true);
    expect(() => loadBundle(wrongVersion)).toThrow(
      new RegExp(`format version ${FORMAT_VERSION + 1} is not supported`),
    );
    // The format before (version 8: an open-addressing host table): refused, recompile.
    const older = bundle.slice();
    new DataView(older.buffer).setUint32(8, FORMAT_VERSION - 1, true);
    expect(() => loadBundle(older)).toThrow(
      new RegExp(`format version ${FORMAT_VERSION - 1} is not supported .*recompile the rulesets`),
    );
    const badMagic = bundle.slice();
    badMagic[0] = 0x58;
    expect(() => loadBundle(badMagic)).toThrow(/bad magic/);
    // Flip one bit at many places: every corruption is caught, none crashes differently.
    for (let at = 40; at < bundle.length; at += 97) {
      const corrupt = bundle.slice();
      corrupt[at] = (corrupt[at] as number) ^ 0x10;
      expect(() => loadBundle(corrupt)).toThrow(BundleError);
    }
  });

  it('covers every header byte but the checksum itself: timestamp (16-23) and reserved word (36-39) included', () => {
    for (let at = 16; at < 40; at++) {
      if (at >= 32 && at < 36) continue;
      const corrupt = bundle.slice();
      corrupt[at] = (corrupt[at] as number) ^ 0x01;
      expect(() => loadBundle(corrupt), `header byte ${at}`).toThrow(BundleError);
    }
    // The timestamp alone passes every structural check, so only the checksum can notice it.
    const later = bundle.slice();
    new DataView(later.buffer).setFloat64(16, 1_760_000_000, true);
    expect(() => loadBundle(later)).toThrow(/checksum mismatch/);
    expect(loadBundle(reseal(later)).header.timestamp).toBe(1_760_000_000);
  });

  /** Directory entry of a section: [offset, byte length]. */
  const sectionAt = (bytes: Uint8Array, section: number): [number, number] => {
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    return [view.getUint32(40 + section * 8, true), view.getUint32(40 + section * 8 + 4, true)];
  };

  it('rejects host-index bit widths that cannot form a record, even for trusted bytes', () => {
    const [layoutAt] = sectionAt(bundle, 0);
    // Layout words: node count, label bits, length bits.
    for (const [word, value] of [
      [1, 0],
      [1, 40],
      [2, 8],
      [0, 0],
      [0, 1 << 30],
    ] as const) {
      const corrupt = bundle.slice();
      new DataView(corrupt.buffer).setUint32(layoutAt + word * 4, value, true);
      expect(() => loadBundle(corrupt, { verify: 'trusted' })).toThrow(BundleError);
      expect(() => loadBundle(corrupt, { verify: 'trusted' })).toThrow(
        /host index layout|host index nodes|ruleset refs/,
      );
    }
  });

  it('accepts only child counts that form a breadth-first tree', () => {
    const counts = (bytes: number[], n: number) => firstChildren(Uint8Array.from(bytes), n);
    // The root with two leaves; a chain; a count in two varint bytes.
    expect(Array.from(counts([2, 0, 0], 3) as Int32Array)).toEqual([1, 3, 3, 3]);
    expect(Array.from(counts([1, 1, 0], 3) as Int32Array)).toEqual([1, 2, 3, 3]);
    expect((counts([0x81, 0x01, ...new Array<number>(129).fill(0)], 130) as Int32Array)[1]).toBe(
      130,
    );
    expect(counts([2, 0], 3)).toMatch(/child counts cut short at node 2/);
    expect(counts([2, 0x80], 3)).toMatch(/cut short at node 1/);
    expect(counts([3, 0, 0], 3)).toMatch(/children of node 0 beyond the 3 nodes/);
    // Children at or before their parent: a self-loop and a backwards range (cycles).
    expect(counts([1, 0, 1], 3)).toMatch(/children of node 2 start at node 2, not after it/);
    expect(counts([0, 2, 0], 3)).toMatch(/children of node 1 start at node 1, not after it/);
    expect(counts([1, 0, 0], 3)).toMatch(/child counts cover 1 of 2 nodes/);
    expect(counts([2, 0, 0, 0], 3)).toMatch(/1 bytes after the child counts/);
  });

  it('decodes node labels as sibling rises, refusing labels past the pool and siblings out of order', () => {
    const layout = nodeLayout([3, 8, 4]) as NodeLayout;
    const first = firstChildren(Uint8Array.from([2, 0, 0]), 3) as Int32Array;
    // Root (empty label, star bit), then children with labels 5 and 5 + 7; lengths 1 and 3.
    const nodes = (labels: number[]) =>
      decodeNodes(Uint8Array.from([0x80, 1, 3, ...labels]), first, layout, 20);
    const words = nodes([0, 5, 7]) as Uint32Array;
    expect(Array.from(words, (w) => w & layout.labelMask)).toEqual([0, 5, 12]);
    expect(Array.from(words, (w) => (w & layout.starBit) !== 0)).toEqual([true, false, false]);
    expect(Array.from(words, (w) => (w >>> layout.lengthShift) & layout.lengthMask)).toEqual([
      0, 1, 3,
    ]);
    expect(nodes([0, 5, 0])).toMatch(/children of node 0 not in label order/);
    expect(nodes([0, 5, 16])).toMatch(/node 2 label out of range/);
    expect(nodes([0, 21, 1])).toMatch(/node 1 label out of range/);
    expect(nodes([0, 5])).toMatch(/node labels cut short at node 2/);
    expect(nodes([0, 5, 7, 0])).toMatch(/1 bytes after the node labels/);
    expect(decodeNodes(Uint8Array.from([0x80, 1]), first, layout, 20)).toMatch(
      /node bytes cut short/,
    );
  });

  /** The host index as the tests edit it: the child count and node byte streams. */
  const hostIndex = (bytes: Uint8Array) => {
    const [countsAt, countsLength] = sectionAt(bytes, ChildCounts);
    const [nodesAt, nodesLength] = sectionAt(bytes, Nodes);
    return {
      counts: bytes.subarray(countsAt, countsAt + countsLength),
      nodes: bytes.subarray(nodesAt, nodesAt + nodesLength),
    };
  };

  /** The node count, the Layout section's first word. */
  const layoutNodeCount = (bytes: Uint8Array) =>
    new DataView(bytes.buffer, bytes.byteOffset + sectionAt(bytes, 0)[0]).getUint32(0, true);

  /** Full verification refuses `corrupt` with `message`; trusted, it loads and answers. */
  const refusedButBounded = (corrupt: Uint8Array, message: RegExp) => {
    expect(() => loadBundle(reseal(corrupt))).toThrow(message);
    const engine = loadBundle(corrupt, { verify: 'trusted' });
    for (const host of [
      'example.com',
      'a.b.c.d.e.example.org',
      'nothing-here.invalid',
      'www.eff.org',
      'en.wikipedia.org',
    ]) {
      expect(() => engine.rewrite(`http://${host}/`)).not.toThrow();
    }
    for (let id = 0; id < 50; id++) expect(() => engine.ruleset(id)).not.toThrow();
  };

  it('full verification rejects a node index that disagrees with the trie; trusted, it only misleads', () => {
    const [indexAt, indexLength] = sectionAt(bundle, NodeIndex);
    // Four words per block of 128 nodes.
    expect(indexLength).toBe(Math.ceil(layoutNodeCount(bundle) / 128) * 16);
    for (let word = 0; word < indexLength / 4; word++) {
      const original = new DataView(bundle.buffer, bundle.byteOffset).getUint32(
        indexAt + word * 4,
        true,
      );
      for (const value of [original ^ 1, 0xffffffff]) {
        const corrupt = bundle.slice();
        new DataView(corrupt.buffer).setUint32(indexAt + word * 4, value, true);
        refusedButBounded(
          corrupt,
          new RegExp(`host index: node index entry ${word} says ${value}, expected ${original}`),
        );
      }
    }
  });

  it('decodes the trie a block at a time, in whatever order lookups reach it', () => {
    // Sibling groups of 0 to 400 nodes: groups start inside blocks and span several.
    const hosts: string[] = [];
    for (let g = 0; g < 60; g++)
      for (let i = 0; i < (g * 37) % 401; i++) hosts.push(`h${i}.g${g}.example`);
    const ruleset: Ruleset = {
      name: 'Groups',
      targets: hosts.map((host) => ({ host })),
      rules: [{ from: '^http:', to: 'https:' }],
      exclusions: [],
      secureCookies: [],
      tests: [],
    };
    const bytes = compileBundle([ruleset]);
    expect(layoutNodeCount(bytes)).toBeGreaterThan(hosts.length);
    // Every host, in a shuffled order, from a fresh engine; then the misses beside them.
    const shuffled = hosts.slice();
    for (let i = shuffled.length - 1, seed = 7; i > 0; i--) {
      seed = (seed * 48271) % 2147483647;
      const j = seed % (i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j] as string, shuffled[i] as string];
    }
    const engine = loadBundle(bytes, { verify: 'trusted' });
    expect(
      shuffled.filter((host) => engine.rewrite(`http://${host}/`) !== `https://${host}/`),
    ).toEqual([]);
    const misses = hosts
      .filter((_, k) => k % 50 === 0)
      .flatMap((host) => [`a${host}`, host.replace(/^h/, 'i'), host.replace('.g', '.f')]);
    expect(
      misses.filter(
        (host) => loadBundle(bytes, { verify: 'trusted' }).rewrite(`http://${host}/`) !== null,
      ),
    ).toEqual([]);
    // The whole-trie walk (targets) sees the same trie as the lookups.
    expect(new Set(engine.targetsOf(0))).toEqual(new Set(hosts));
  });

  it('full verification rejects bad child counts, labels and dictionary codes behind a valid checksum', () => {
    expect(() => loadBundle(reseal(bundle.slice()))).not.toThrow();
    const index = hostIndex(bundle);
    // The last node (a leaf) given children past the end.
    const beyond = bundle.slice();
    hostIndex(beyond).counts[index.counts.length - 1] = 5;
    refusedButBounded(beyond, /host index: children of node \d+ beyond the \d+ nodes/);
    // The counts cut short: the last byte turned into a continuation byte.
    const cut = bundle.slice();
    hostIndex(cut).counts[index.counts.length - 1] = 0x80;
    refusedButBounded(cut, /host index: child counts cut short/);
    // A leaf's children moved to a node before it: the root loses a child to the first leaf
    // whose children would start at or before itself.
    const backwards = bundle.slice();
    const edited = hostIndex(backwards);
    expect(edited.counts[0]).toBeLessThan(0x80);
    edited.counts[0] = 0;
    edited.counts[1] = (edited.counts[1] as number) + (index.counts[0] as number);
    refusedButBounded(backwards, /host index: children of node 1 start at node 1, not after it/);
    // The root's second child given the same label as its first (a rise of 0): the binary
    // search needs siblings in label order. Its varint follows the root's and the first child's.
    const sameLabel = bundle.slice();
    const nodeBytes = hostIndex(sameLabel).nodes;
    let at = layoutNodeCount(bundle) + 1;
    while ((nodeBytes[at] as number) >= 0x80) at++;
    nodeBytes[at + 1] = 0;
    refusedButBounded(sameLabel, /host index: children of node 0 not in label order/);
    // The label stream cut short: its last byte made a continuation byte.
    const cutLabels = bundle.slice();
    const cutBytes = hostIndex(cutLabels).nodes;
    cutBytes[cutBytes.length - 1] = 0x80;
    refusedButBounded(cutLabels, /host index: node labels cut short/);
    const [dictionaryAt, dictionaryLength] = sectionAt(bundle, Dictionary);
    expect(dictionaryLength).toBeGreaterThan(0);
    const badDictionary = bundle.slice();
    badDictionary[dictionaryAt] = 0xff; // the escape byte cannot be a code
    expect(() => loadBundle(reseal(badDictionary))).toThrow(/string dictionary: code 255/);
    const [labelDictionaryAt, labelDictionaryLength] = sectionAt(bundle, LabelDictionary);
    expect(labelDictionaryLength).toBeGreaterThan(0);
    const emptyEntry = bundle.slice();
    emptyEntry[labelDictionaryAt + 1] = 0; // entries are never empty
    expect(() => loadBundle(reseal(emptyEntry))).toThrow(/string dictionary: entry/);
  });

  it('bounds the ruleset refs of host records', () => {
    const [layoutAt] = sectionAt(bundle, 0);
    const countWord = layoutAt + (HOST_LAYOUT_WORDS + COLUMN_WORDS * (NodeRef - FIRST_PACKED)) * 4;
    const fewer = bundle.slice();
    const view = new DataView(fewer.buffer);
    view.setUint32(countWord, view.getUint32(countWord, true) - 1, true);
    expect(() => loadBundle(fewer, { verify: 'trusted' })).toThrow(
      /ruleset refs do not match the host records/,
    );
    // A stored ref past own refs and ghosts (2 * ghostBase and up).
    const ghosts = defaults.length + 1 + sectionAt(bundle, RefList)[1] / 4;
    const [, bits] = columnAt(bundle, NodeRef);
    expect(2 ** bits - 1).toBeGreaterThanOrEqual(2 * ghosts - 1);
    const wild = setField(bundle.slice(), NodeRef, 1, 2 * ghosts);
    if (2 * ghosts < 2 ** bits)
      expect(() => loadBundle(reseal(wild))).toThrow(/ruleset ref out of range/);
    // A ref to the last RefList word, read as a count running past the list: two rulesets share
    // a target, so the list is [2, 0, 1] and ghostBase is 3 + 3.
    const make = (name: string): Ruleset => ({
      name,
      targets: [{ host: 'shared.example.com' }],
      rules: [{ from: '^http:', to: 'https:' }],
      exclusions: [],
      secureCookies: [],
      tests: [],
    });
    const small = compileBundle([make('One'), make('Two')]);
    expect(loadBundle(small).candidateRulesets('shared.example.com')).toEqual([0, 1]);
    const refs = readBundleSections(small).packed[NodeRef] as {
      length: number;
      get(i: number): number;
    };
    const shared = Array.from({ length: refs.length }, (_, i) => i).find(
      (i) => refs.get(i) === 2 + 1 + 1,
    ) as number;
    expect(shared).toBeDefined();
    for (const [stored, message] of [
      [6, /ruleset list out of range/],
      [12, /ruleset ref out of range/],
    ] as const) {
      if (stored >= 2 ** columnAt(small, NodeRef)[1]) continue;
      expect(() => loadBundle(reseal(setField(small.slice(), NodeRef, shared, stored)))).toThrow(
        message,
      );
    }
    // Ghost 11 = RefList index 2 + ghostBase: the same overrun, handed down instead of owned.
    if (11 < 2 ** columnAt(small, NodeRef)[1])
      expect(() => loadBundle(reseal(setField(small.slice(), NodeRef, shared, 11)))).toThrow(
        /ruleset list out of range/,
      );
  });

  /** Layout words of packed column `section`: [count, bits, blocked]. */
  const columnAt = (bytes: Uint8Array, section: number): [number, number, number] => {
    const [layoutAt] = sectionAt(bytes, 0);
    const view = new DataView(bytes.buffer, bytes.byteOffset + layoutAt);
    const word = HOST_LAYOUT_WORDS + COLUMN_WORDS * (section - FIRST_PACKED);
    return [
      view.getUint32(word * 4, true),
      view.getUint32(word * 4 + 4, true),
      view.getUint32(word * 4 + 8, true),
    ];
  };
  /**
   * Writes field `index` of packed column `section` in place. In a blocked column the field holds
   * the value above its block's base; a value below the base lowers the base (and so the block).
   */
  const setField = (
    bytes: Uint8Array,
    section: number,
    index: number,
    value: number,
  ): Uint8Array => {
    const [sectionOffset] = sectionAt(bytes, section);
    const [count, bits, blocked] = columnAt(bytes, section);
    let at = sectionOffset;
    if (blocked === 1) {
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      const baseAt = sectionOffset + (index >>> 5) * 4;
      const base = Math.min(view.getUint32(baseAt, true), value);
      view.setUint32(baseAt, base, true);
      value -= base;
      at += Math.ceil(count / 32) * 4;
    }
    for (let b = 0; b < bits; b++) {
      const bit = index * bits + b;
      const byte = at + (bit >>> 3);
      bytes[byte] =
        ((bytes[byte] as number) & ~(1 << (bit & 7))) | (((value >>> b) & 1) << (bit & 7));
    }
    return bytes;
  };

  it('rejects a section that runs past the end of the bytes, even inside a larger buffer', () => {
    const sections = new DataView(bundle.buffer, bundle.byteOffset).getUint32(28, true);
    for (let section = 0; section < sections; section++) {
      // The bundle sits at the start of a larger buffer: a view past its end would not throw by
      // itself, it would silently read the bytes that follow.
      const host = new Uint8Array(bundle.length + 4096);
      host.set(bundle);
      const corrupt = host.subarray(0, bundle.length);
      const [offset] = sectionAt(corrupt, section);
      // Starts inside the bytes, ends 4 bytes past them.
      new DataView(host.buffer).setUint32(40 + section * 8 + 4, bundle.length - offset + 4, true);
      reseal(corrupt);
      for (const verify of ['trusted', 'full'] as const) {
        expect(() => loadBundle(corrupt, { verify }), `section ${section}, ${verify}`).toThrow(
          new RegExp(`section ${section} lies outside the buffer`),
        );
      }
    }
  });

  it('rejects packed-column widths and counts that do not fit their sections, even for trusted bytes', () => {
    const [layoutAt] = sectionAt(bundle, 0);
    const word = (section: number, field: 0 | 1 | 2) =>
      layoutAt + (HOST_LAYOUT_WORDS + COLUMN_WORDS * (section - FIRST_PACKED) + field) * 4;
    const [, nameBits] = columnAt(bundle, RsName);
    for (const [at, value, message] of [
      [word(RsName, 1), 0, new RegExp(`column layout: column ${RsName} of`)],
      [word(RsName, 1), 32, new RegExp(`column layout: column ${RsName} of`)],
      [word(RsName, 1), nameBits + 3, new RegExp(`column ${RsName} has`)],
      [word(RsName, 0), defaults.length + 1, /ruleset columns do not match/],
      [word(RuleFrom, 0), 1, /rule columns of different lengths/],
      [word(RuleFrom, 1), 0x7fffffff, /column layout/],
    ] as const) {
      const corrupt = bundle.slice();
      new DataView(corrupt.buffer).setUint32(at, value, true);
      expect(() => loadBundle(corrupt, { verify: 'trusted' })).toThrow(message);
    }
    // The block flag: 0 or 1 only, and a flipped flag no longer fits its section (a blocked
    // column's section holds a base per 32 fields before them).
    const sections = Array.from({ length: NodeRef - FIRST_PACKED + 1 }, (_, k) => FIRST_PACKED + k);
    const blocked = sections.find((section) => columnAt(bundle, section)[2] === 1) as number;
    const plain = sections.find(
      (section) => columnAt(bundle, section)[2] === 0 && columnAt(bundle, section)[0] > 64,
    ) as number;
    expect(blocked).toBeDefined();
    expect(plain).toBeDefined();
    for (const [at, value, message] of [
      [word(RsName, 2), 2, new RegExp(`column ${RsName} with block flag 2`)],
      [word(blocked, 2), 0, new RegExp(`column ${blocked} has`)],
      [word(plain, 2), 1, new RegExp(`column ${plain} has`)],
    ] as const) {
      const corrupt = bundle.slice();
      new DataView(corrupt.buffer).setUint32(at, value, true);
      expect(() => loadBundle(corrupt, { verify: 'trusted' })).toThrow(message);
    }
    // A layout cut short of its column table.
    const short = bundle.slice();
    new DataView(short.buffer).setUint32(40 + 4, sectionAt(bundle, 0)[1] - 8, true);
    expect(() => loadBundle(short, { verify: 'trusted' })).toThrow(/layout of \d+ words/);
  });

  it('full verification rejects out-of-order packed ranges and sparse ids behind a valid checksum', () => {
    const first = defaults[0] as Ruleset;
    const withNotes = compileBundle([
      { ...first, defaultOff: 'a' },
      { ...first, name: 'Second', defaultOff: 'b' },
      ...defaults.slice(1),
    ]);
    expect(() => loadBundle(reseal(withNotes.slice()))).not.toThrow();
    expect(columnAt(withNotes, NoteOwner)[0]).toBe(2);
    expect(() => loadBundle(reseal(setField(withNotes.slice(), NoteOwner, 1, 0)))).toThrow(
      /sparse ruleset ids out of order/,
    );
    const highest = 2 ** columnAt(bundle, RsRuleStart)[1] - 1; // above every later start
    expect(() => loadBundle(reseal(setField(bundle.slice(), RsRuleStart, 0, highest)))).toThrow(
      /ruleset ranges out of order/,
    );
    expect(() =>
      loadBundle(reseal(setField(bundle.slice(), RsRuleStart, defaults.length, 0))),
    ).toThrow(/ruleset ranges/);
  });

  it('trusted loading skips only the checksum and cross-reference scans', () => {
    const trusted = loadBundle(bundle, { verify: 'trusted' });
    const full = loadBundle(bundle);
    for (const rs of defaults)
      for (const t of rs.tests) expect(trusted.rewrite(t.url)).toBe(full.rewrite(t.url));
    const flipped = bundle.slice();
    flipped[bundle.length - 100] = (flipped[bundle.length - 100] as number) ^ 1;
    expect(() => loadBundle(flipped)).toThrow(/checksum/);
    expect(() => loadBundle(flipped, { verify: 'trusted' })).not.toThrow();
    expect(() => loadBundle(bundle.subarray(0, 100), { verify: 'trusted' })).toThrow(/truncated/);
  });

  it('compiles more distinct labels than a call can take as spread arguments', () => {
    // Past what V8 takes as spread arguments at Node's default stack (about 120,000); a
    // service worker's stack holds fewer, and the 2018 library's labels were already too many.
    const many = 150_000;
    const wide: Ruleset = {
      name: 'Wide',
      targets: Array.from({ length: many }, (_, i) => ({ host: `h${i}.example.com` })),
      rules: [{ from: '^http:', to: 'https:' }],
      exclusions: [],
      secureCookies: [],
      tests: [],
    };
    const engine = loadBundle(compileBundle([wide]));
    expect(engine.rewriteWithRuleset(`http://h${many - 1}.example.com/`).ruleset).toBe('Wide');
    expect(engine.rewrite(`http://h${many}.example.com/`)).toBeNull();
  });

  it('matches labels too long for the record length field through their pool header', () => {
    const long = 'a'.repeat(130);
    const make = (name: string, host: string): Ruleset => ({
      name,
      targets: [{ host }],
      rules: [{ from: '^http:', to: 'https:' }],
      exclusions: [],
      secureCookies: [],
      tests: [],
    });
    const engine = loadBundle(
      compileBundle([
        make('Long', `${long}.example.com`),
        make('Longer', `${long}b.example.com`),
        make('Short', 'a.example.com'),
        make('Wild', `${long}.*.example.org`),
      ]),
    );
    expect(engine.rewriteWithRuleset(`http://${long}.example.com/`).ruleset).toBe('Long');
    expect(engine.rewriteWithRuleset(`http://${long}b.example.com/`).ruleset).toBe('Longer');
    expect(engine.rewrite(`http://${long}c.example.com/`)).toBeNull();
    expect(engine.rewrite(`http://${long.slice(1)}.example.com/`)).toBeNull();
    expect(engine.rewriteWithRuleset(`http://${long}.x.example.org/`).ruleset).toBe('Wild');
    expect(engine.ruleset(1).targets).toEqual([{ host: `${long}b.example.com` }]);
    expect(engine.ruleset(3).targets).toEqual([{ host: `${long}.*.example.org` }]);
  });

  it('cannot be made to read past the label pool by a record of a corrupt trusted bundle', () => {
    // White box: a record whose label starts on the pool's last byte but claims 10 characters
    // (short) or a long header there. The comparison must end, and say "different".
    const index = new HostIndex(readBundleSections(bundle, 'trusted')) as unknown as {
      labelPool: Uint8Array;
      lengthShift: number;
      lengthMask: number;
      compareLabel(word: number, src: string, start: number, end: number): number;
    };
    const last = index.labelPool.length - 1;
    const word = (length: number): number => (last | (length << index.lengthShift)) >>> 0;
    const host = 'a'.repeat(200);
    expect(index.compareLabel(word(10), host, 0, 10)).not.toBe(0);
    expect(index.compareLabel(word(index.lengthMask), host, 0, 200)).not.toBe(0);
  });

  it("names a parent's rulesets through records that inherit them, in every candidate family", () => {
    const make = (name: string, hosts: string[]): Ruleset => ({
      name,
      targets: hosts.map((host) => ({ host })),
      rules: [{ from: '^http:', to: 'https:' }],
      exclusions: [],
      secureCookies: [],
      tests: [],
    });
    const rulesets = [
      make('A', [
        'example.com',
        'www.example.com',
        'x.www.example.com',
        '*.example.org',
        'a.*.example.org',
      ]),
      make('B', ['b.example.com', 'x.www.example.com']),
      make('C', ['c.example.net', 'd.example.net']),
    ];
    const bytes = compileBundle(rulesets);
    // www.example.com, a.*.example.org: stored as "the parent's" (1), not as ruleset A; so are
    // c and d.example.net, whose parent example.net (no target) hands C down as a ghost.
    const { packed } = readBundleSections(bytes);
    const refs = packed[NodeRef] as { length: number; get(i: number): number };
    const stored = Array.from({ length: refs.length }, (_, i) => refs.get(i));
    expect(stored.filter((r) => r === 1)).toHaveLength(4);
    const ghostBase = rulesets.length + 1 + sectionAt(bytes, RefList)[1] / 4; // RefList: [2, 0, 1]
    expect(stored.filter((r) => r > ghostBase)).toEqual([ghostBase + 3]);
    const engine = loadBundle(bytes);
    expect(engine.rewriteWithRuleset('http://www.example.com/').ruleset).toBe('A');
    expect(engine.candidateRulesets('www.example.com')).toEqual([0]);
    expect(engine.candidateRulesets('x.www.example.com')).toEqual([0, 1]);
    expect(engine.candidateRulesets('b.example.com')).toEqual([1]);
    // The star family: `a` under `*` under example.org inherits from `*`.
    expect(engine.candidateRulesets('a.zz.example.org')).toEqual([0]);
    expect(
      engine.explain('http://a.zz.example.org/').candidates.map((c) => [c.ruleset, c.target]),
    ).toEqual([['A', 'a.*.example.org']]);
    expect(
      engine
        .ruleset(0)
        .targets.map((t) => t.host)
        .sort(),
    ).toEqual([
      '*.example.org',
      'a.*.example.org',
      'example.com',
      'www.example.com',
      'x.www.example.com',
    ]);
    expect(engine.rewrite('http://c.example.net/')).toBe('https://c.example.net/');
    expect(engine.candidateRulesets('d.example.net')).toEqual([2]);
    // The ghost is handed down only: example.net itself is no target.
    expect(engine.candidateRulesets('example.net')).toEqual([]);
    expect(engine.rewrite('http://example.net/')).toBeNull();
    expect(engine.rewrite('http://www.example.net/')).toBeNull();
    expect(
      engine
        .ruleset(2)
        .targets.map((t) => t.host)
        .sort(),
    ).toEqual(['c.example.net', 'd.example.net']);
  });

  it('loads from an unaligned copy of the bytes', () => {
    const padded = new Uint8Array(bundle.length + 1);
    padded.set(bundle, 1);
    expect(loadBundle(padded.subarray(1)).rewrite('http://en.wikipedia.org/wiki/A')).toBe(
      'https://en.wikipedia.org/wiki/A',
    );
  });

  it('is deterministic for the same input and differs when a ruleset changes', () => {
    const again = compileBundle(defaults, { timestamp: 1_750_000_000 });
    expect(Buffer.compare(Buffer.from(bundle), Buffer.from(again))).toBe(0);
    const changed = compileBundle(defaults.slice(1), { timestamp: 1_750_000_000 });
    expect(Buffer.compare(Buffer.from(bundle), Buffer.from(changed))).not.toBe(0);
  });

  it('reads the defaults from disk in file-name order', () => {
    const names = listRulesetFiles(defaultRulesetsDir()).map(
      (f) => parseRulesetXml(readFileSync(f, 'utf8'), f).ruleset?.name,
    );
    expect(names).toEqual(defaults.map((rs) => rs.name));
  });
});
