import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BundleError, compileBundle, FORMAT_VERSION, loadBundle, readBundleHeader, type Ruleset } from '../src/index.js';
import { parseRulesetXml } from '../src/parse/index.js';
import { checksum } from '../src/bundle/format.js';
import { readBundleSections } from '../src/bundle/read.js';
import { HostIndex } from '../src/match/host-index.js';
import { defaultRulesetsDir, listRulesetFiles, loadRulesets } from '../src/node/index.js';

/** Rewrites the header checksum after a deliberate edit, so only the deeper checks can object. */
function reseal(bytes: Uint8Array): Uint8Array {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(32, checksum(bytes), true);
  return bytes;
}

const defaults: Ruleset[] = loadRulesets([defaultRulesetsDir()]).rulesets;

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
      expect(back.targets.map((t) => t.host).sort()).toEqual([...new Set(rs.targets.map((t) => t.host))].sort());
      expect(back.rules.map((r) => [r.from, r.to])).toEqual(rs.rules.map((r) => [r.from, r.to]));
      expect(back.exclusions.map((e) => e.pattern)).toEqual(rs.exclusions.map((e) => e.pattern));
      expect(back.secureCookies.map((c) => [c.host, c.name])).toEqual(rs.secureCookies.map((c) => [c.host, c.name]));
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
    expect(() => loadBundle(wrongVersion)).toThrow(new RegExp(`format version ${FORMAT_VERSION + 1} is not supported`));
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
    // Layout words: node count, slot bits, parent bits, ref bits, label bits, length bits, root star.
    for (const [word, value] of [
      [1, 40],
      [2, 3],
      [3, 0],
      [4, 40],
      [5, 9],
      [6, 2],
      [0, 1 << 30],
    ] as const) {
      const corrupt = bundle.slice();
      new DataView(corrupt.buffer).setUint32(layoutAt + word * 4, value, true);
      expect(() => loadBundle(corrupt, { verify: 'trusted' })).toThrow(BundleError);
      expect(() => loadBundle(corrupt, { verify: 'trusted' })).toThrow(/host index layout|host index nodes|host table occupancy/);
    }
  });

  it('full verification rejects bad occupancy ranks, node fields and dictionary codes behind a valid checksum', () => {
    expect(() => loadBundle(reseal(bundle.slice()))).not.toThrow();
    const [occupancyAt] = sectionAt(bundle, 2);
    const badRank = bundle.slice();
    new DataView(badRank.buffer).setUint32(occupancyAt + 8, 12345, true);
    expect(() => loadBundle(reseal(badRank))).toThrow(/host table ranks/);
    const [nodesAt] = sectionAt(bundle, 3);
    const [layoutAt] = sectionAt(bundle, 0);
    const layout = new DataView(bundle.buffer, bundle.byteOffset + layoutAt);
    const parentBits = layout.getUint32(8, true);
    const firstBits = new DataView(bundle.buffer, bundle.byteOffset + occupancyAt).getUint32(4, true);
    expect(firstBits).not.toBe(0);
    const firstSlot = Math.log2(firstBits & -firstBits);
    // Record 0 sits in the first occupied slot: make it the child of a free slot.
    const withParent = (parent: number): Uint8Array => {
      const copy = bundle.slice();
      const view = new DataView(copy.buffer);
      const word = view.getUint32(nodesAt, true);
      view.setUint32(nodesAt, (word - (word % 2 ** parentBits) + parent) >>> 0, true);
      return reseal(copy);
    };
    expect(firstSlot).toBeGreaterThanOrEqual(0);
    const freeSlot = Math.log2(~firstBits & (firstBits + 1));
    expect(() => loadBundle(withParent(freeSlot))).toThrow(/node parent is not a node/);
    const [dictionaryAt, dictionaryLength] = sectionAt(bundle, 5);
    expect(dictionaryLength).toBeGreaterThan(0);
    const badDictionary = bundle.slice();
    badDictionary[dictionaryAt] = 0xff; // the escape byte cannot be a code
    expect(() => loadBundle(reseal(badDictionary))).toThrow(/string dictionary: code 255/);
    const [labelDictionaryAt, labelDictionaryLength] = sectionAt(bundle, 23);
    expect(labelDictionaryLength).toBeGreaterThan(0);
    const emptyEntry = bundle.slice();
    emptyEntry[labelDictionaryAt + 1] = 0; // entries are never empty
    expect(() => loadBundle(reseal(emptyEntry))).toThrow(/string dictionary: entry/);
  });

  /** Layout words of packed column `section`: [count, bits]. */
  const columnAt = (bytes: Uint8Array, section: number): [number, number] => {
    const [layoutAt] = sectionAt(bytes, 0);
    const view = new DataView(bytes.buffer, bytes.byteOffset + layoutAt);
    const word = 7 + 2 * (section - 7);
    return [view.getUint32(word * 4, true), view.getUint32(word * 4 + 4, true)];
  };
  /** Writes field `index` of packed column `section` in place. */
  const setField = (bytes: Uint8Array, section: number, index: number, value: number): Uint8Array => {
    const [at] = sectionAt(bytes, section);
    const [, bits] = columnAt(bytes, section);
    for (let b = 0; b < bits; b++) {
      const bit = index * bits + b;
      const byte = at + (bit >>> 3);
      bytes[byte] = ((bytes[byte] as number) & ~(1 << (bit & 7))) | (((value >>> b) & 1) << (bit & 7));
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
        expect(() => loadBundle(corrupt, { verify }), `section ${section}, ${verify}`).toThrow(new RegExp(`section ${section} lies outside the buffer`));
      }
    }
  });

  it('rejects packed-column widths and counts that do not fit their sections, even for trusted bytes', () => {
    const [layoutAt] = sectionAt(bundle, 0);
    const RsName = 8;
    const RuleFrom = 16;
    const word = (section: number, field: 0 | 1) => layoutAt + (7 + 2 * (section - 7) + field) * 4;
    const [, nameBits] = columnAt(bundle, RsName);
    for (const [at, value, message] of [
      [word(RsName, 1), 0, /column layout: column 8 of/],
      [word(RsName, 1), 32, /column layout: column 8 of/],
      [word(RsName, 1), nameBits + 3, /column 8 has/],
      [word(RsName, 0), defaults.length + 1, /ruleset columns do not match/],
      [word(RuleFrom, 0), 1, /rule columns of different lengths/],
      [word(RuleFrom, 1), 0x7fffffff, /column layout/],
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
    const withNotes = compileBundle([{ ...first, defaultOff: 'a' }, { ...first, name: 'Second', defaultOff: 'b' }, ...defaults.slice(1)]);
    expect(() => loadBundle(reseal(withNotes.slice()))).not.toThrow();
    const NoteOwner = 9;
    expect(columnAt(withNotes, NoteOwner)[0]).toBe(2);
    expect(() => loadBundle(reseal(setField(withNotes.slice(), NoteOwner, 1, 0)))).toThrow(/sparse ruleset ids out of order/);
    const RsRuleStart = 13;
    const highest = 2 ** columnAt(bundle, RsRuleStart)[1] - 1; // above every later start
    expect(() => loadBundle(reseal(setField(bundle.slice(), RsRuleStart, 0, highest)))).toThrow(/ruleset ranges out of order/);
    expect(() => loadBundle(reseal(setField(bundle.slice(), RsRuleStart, defaults.length, 0)))).toThrow(/ruleset ranges/);
  });

  it('trusted loading skips only the checksum and cross-reference scans', () => {
    const trusted = loadBundle(bundle, { verify: 'trusted' });
    const full = loadBundle(bundle);
    for (const rs of defaults) for (const t of rs.tests) expect(trusted.rewrite(t.url)).toBe(full.rewrite(t.url));
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
      labelShift: number;
      lengthShift: number;
      lengthMask: number;
      labelEquals(word: number, src: string, start: number, end: number): boolean;
    };
    const last = index.labelPool.length - 1;
    const word = (length: number): number => ((last << index.labelShift) | (length << index.lengthShift)) >>> 0;
    const host = 'a'.repeat(200);
    expect(index.labelEquals(word(10), host, 0, 10)).toBe(false);
    expect(index.labelEquals(word(index.lengthMask), host, 0, 200)).toBe(false);
  });

  it('loads from an unaligned copy of the bytes', () => {
    const padded = new Uint8Array(bundle.length + 1);
    padded.set(bundle, 1);
    expect(loadBundle(padded.subarray(1)).rewrite('http://en.wikipedia.org/wiki/A')).toBe('https://en.wikipedia.org/wiki/A');
  });

  it('is deterministic for the same input and differs when a ruleset changes', () => {
    const again = compileBundle(defaults, { timestamp: 1_750_000_000 });
    expect(Buffer.compare(Buffer.from(bundle), Buffer.from(again))).toBe(0);
    const changed = compileBundle(defaults.slice(1), { timestamp: 1_750_000_000 });
    expect(Buffer.compare(Buffer.from(bundle), Buffer.from(changed))).not.toBe(0);
  });

  it('reads the defaults from disk in file-name order', () => {
    const names = listRulesetFiles(defaultRulesetsDir()).map((f) => parseRulesetXml(readFileSync(f, 'utf8'), f).ruleset?.name);
    expect(names).toEqual(defaults.map((rs) => rs.name));
  });
});
