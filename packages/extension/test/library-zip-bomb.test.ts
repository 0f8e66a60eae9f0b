import { deflateSync, strToU8 } from 'fflate';
import { describe, expect, it } from 'vitest';
import { LIBRARY_LIMITS, LibraryRefused, readArchive } from '../src/library/archive.js';

interface RawEntry {
  name: string;
  /** Compressed bytes (deflate), stored once per distinct `data` object. */
  data: Uint8Array;
  /** The size the archive claims once inflated. */
  declared: number;
}

/**
 * A zip written by hand, so it can lie: declared sizes are whatever the entry says, and entries
 * with the same `data` object point at one local header (the "overlapping" zip bomb).
 */
function rawZip(entries: RawEntry[]): Uint8Array {
  const parts: number[] = [];
  /** Little-endian fields, each [width in bytes, value]. */
  const put = (...fields: [2 | 4, number][]): void => {
    for (const [width, n] of fields) for (let i = 0; i < width; i++) parts.push((n >>> (8 * i)) & 0xff);
  };
  const offsets = new Map<Uint8Array, number>();
  for (const e of entries) {
    if (offsets.has(e.data)) continue;
    offsets.set(e.data, parts.length);
    const name = strToU8(e.name);
    put([4, 0x04034b50], [2, 20], [2, 0], [2, 8], [2, 0], [2, 0], [4, 0], [4, e.data.length], [4, e.declared], [2, name.length], [2, 0]);
    parts.push(...name, ...e.data);
  }
  const cd = parts.length;
  for (const e of entries) {
    const name = strToU8(e.name);
    put([4, 0x02014b50], [2, 20], [2, 20], [2, 0], [2, 8], [2, 0], [2, 0], [4, 0], [4, e.data.length], [4, e.declared]);
    put([2, name.length], [2, 0], [2, 0], [2, 0], [2, 0], [4, 0], [4, offsets.get(e.data) as number]);
    parts.push(...name);
  }
  const cdSize = parts.length - cd;
  put([4, 0x06054b50], [2, 0], [2, 0], [2, entries.length], [2, entries.length], [4, cdSize], [4, cd], [2, 0]);
  return Uint8Array.from(parts);
}

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LibraryRefused);
    return (e as Error).message;
  }
  throw new Error('expected a refusal');
}

const RULESET = strToU8('<ruleset name="A"><target host="a.test"/><rule from="^http:" to="https:"/></ruleset>');

describe('zip import is bounded by real bytes, not declared sizes', () => {
  it('reads an honest hand-written zip (the helper is sound)', () => {
    const got = readArchive(rawZip([{ name: 'A.xml', data: deflateSync(RULESET), declared: RULESET.length }]));
    expect(got.files).toEqual([{ path: 'A.xml', text: new TextDecoder().decode(RULESET) }]);
  });

  it('refuses an entry that decodes into more than it declares, without inflating it all', () => {
    // 4 MB of zeros in ~4 KB, declared as 100 bytes: under every declared limit.
    const bomb = deflateSync(new Uint8Array(4 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(8_000);
    expect(refusal(() => readArchive(rawZip([{ name: 'small.xml', data: bomb, declared: 100 }])))).toMatch(/small\.xml expands past the 100 bytes it declares/);
  });

  it('refuses many entries that share the same compressed data', () => {
    const shared = deflateSync(RULESET);
    const entries = Array.from({ length: 2000 }, (_, i) => ({ name: `r${i}.xml`, data: shared, declared: RULESET.length }));
    expect(refusal(() => readArchive(rawZip(entries)))).toMatch(/share their data \(a zip bomb\?\)/);
  });

  it('stops at the time limit, whatever the archive declares', () => {
    const zip = rawZip([{ name: 'A.xml', data: deflateSync(RULESET), declared: RULESET.length }]);
    expect(refusal(() => readArchive(zip, { ...LIBRARY_LIMITS, timeMs: -1 }))).toMatch(/took longer than/);
  });
});
