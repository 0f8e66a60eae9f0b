import { describe, expect, it } from 'vitest';
import { pack, PackedArray, packedWords } from '../src/bundle/packed-array.js';

describe('packed array', () => {
  it('round-trips values of every width, including fields that straddle two words', () => {
    for (let bits = 1; bits <= 31; bits++) {
      const max = 2 ** bits - 1;
      const values = Array.from({ length: 97 }, (_, i) => (i === 0 ? max : i === 1 ? 0 : (i * 2654435761) % (max + 1)));
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

  it('packs no values into no words', () => {
    expect(pack([], 5).length).toBe(0);
  });
});
