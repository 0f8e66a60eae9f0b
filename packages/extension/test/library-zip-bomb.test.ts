import { deflateSync, strToU8 } from 'fflate';
import { describe, expect, it } from 'vitest';
import { LIBRARY_LIMITS, LibraryRefused } from '../src/library/archive-entries.js';
import { readArchive } from '../src/library/archive.js';
import { rawZip } from './support/raw-zip.js';

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LibraryRefused);
    return (e as Error).message;
  }
  throw new Error('expected a refusal');
}

const RULESET = strToU8(
  '<ruleset name="A"><target host="a.test"/><rule from="^http:" to="https:"/></ruleset>',
);

describe('zip import is bounded by real bytes, not declared sizes', () => {
  it('reads an honest hand-written zip (the helper is sound)', () => {
    const got = readArchive(
      rawZip([{ name: 'A.xml', data: deflateSync(RULESET), declared: RULESET.length }]),
    );
    expect(got.files).toEqual([{ path: 'A.xml', text: new TextDecoder().decode(RULESET) }]);
  });

  it('refuses an entry that decodes into more than it declares, without inflating it all', () => {
    // 4 MB of zeros in ~4 KB, declared as 100 bytes: under every declared limit.
    const bomb = deflateSync(new Uint8Array(4 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(8_000);
    expect(
      refusal(() => readArchive(rawZip([{ name: 'small.xml', data: bomb, declared: 100 }]))),
    ).toMatch(/small\.xml expands past the 100 bytes it declares/);
  });

  it('refuses many entries that share the same compressed data', () => {
    const shared = deflateSync(RULESET);
    const entries = Array.from({ length: 2000 }, (_, i) => ({
      name: `r${i}.xml`,
      data: shared,
      declared: RULESET.length,
    }));
    expect(refusal(() => readArchive(rawZip(entries)))).toMatch(
      /share their data \(a zip bomb\?\)/,
    );
  });

  it('stops at the time limit, whatever the archive declares', () => {
    const zip = rawZip([{ name: 'A.xml', data: deflateSync(RULESET), declared: RULESET.length }]);
    expect(refusal(() => readArchive(zip, { ...LIBRARY_LIMITS, timeMs: -1 }))).toMatch(
      /took longer than/,
    );
  });
});
