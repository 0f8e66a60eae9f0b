import { describe, expect, it } from 'vitest';
import {
  blockWords,
  pack,
  packColumn,
  PackedArray,
  packedWords,
} from '../src/bundle/packed-array.js';

describe('packed array', () => {
  it('round-trips values of every width, including fields that straddle two words', () => {
    for (let bits = 1; bits <= 31; bits++) {
      const max = 2 ** bits - 1;
      const values = Array.from({ length: 97 }, (_, i) =>
        i === 0 ? max : i === 1 ? 0 : (i * 2654435761) % (max + 1),
      );
      const words = pack(values, bits);
      expect(words.length).toBe(packedWords(values.length, bits));
      const view = new PackedArray(words, bits, values.length);
      expect(Array.from({ length: values.length }, (_, i) => view.get(i))).toEqual(values);
    }
  });

  it('refuses widths out of range and values that do not fit', () => {
    expect(() => pack([1], 0)).toThrow(/0 bits/);
    expect(() => pack([1], 32)).toThrow(/32 bits/);
    expect(() => pack([4], 2)).toThrow(/does not fit/);
    expect(() => pack([-1], 8)).toThrow(/does not fit/);
  });

  it('lays an ascending column out in blocks with a base each, and a random one plain', () => {
    // Like ruleset ranges: ascending by a few per entry.
    const ascending = Array.from({ length: 1000 }, (_, i) => 4 * i + (i % 3));
    const column = packColumn(ascending);
    expect(column.blocked).toBe(true);
    expect(column.bits).toBeLessThan(8);
    const bases = blockWords(ascending.length);
    expect(column.words.length).toBe(bases + packedWords(ascending.length, column.bits));
    const view = new PackedArray(
      column.words.subarray(bases),
      column.bits,
      ascending.length,
      column.words.subarray(0, bases),
    );
    expect(Array.from({ length: ascending.length }, (_, i) => view.get(i))).toEqual(ascending);
    const random = Array.from({ length: 1000 }, (_, i) => (i * 2654435761) % 100_000);
    const plain = packColumn(random);
    expect(plain.blocked).toBe(false);
    const plainView = new PackedArray(plain.words, plain.bits, random.length);
    expect(Array.from({ length: random.length }, (_, i) => plainView.get(i))).toEqual(random);
    expect(packColumn([]).words.length).toBe(0);
  });

  it('packs no values into no words', () => {
    expect(pack([], 5).length).toBe(0);
  });
});
