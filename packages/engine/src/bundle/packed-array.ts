/**
 * Fixed-width unsigned fields packed low-bit first into a Uint32Array: element i occupies bits
 * [i * bits, (i + 1) * bits) of the word stream, so a field may straddle two words. Bundles use
 * it for per-ruleset and per-rule columns whose values need far fewer than 32 bits (string
 * offsets ~20, item starts ~15, flags 2-3), with the width chosen per bundle.
 */

/** Widest field: values stay non-negative small integers after `>>>`-free masking. */
export const MAX_PACKED_BITS = 31;

/** Words holding `count` fields of `bits` bits. */
export function packedWords(count: number, bits: number): number {
  return Math.ceil((count * bits) / 32);
}

/** Packs `values` (each below 2^bits) into words. */
export function pack(values: ArrayLike<number>, bits: number): Uint32Array {
  if (!Number.isInteger(bits) || bits < 1 || bits > MAX_PACKED_BITS) throw new Error(`packed field of ${bits} bits`);
  const limit = 2 ** bits;
  const words = new Uint32Array(packedWords(values.length, bits));
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (!Number.isInteger(v) || v < 0 || v >= limit) throw new Error(`value ${v} does not fit a ${bits}-bit field`);
    const bit = i * bits;
    const w = Math.floor(bit / 32);
    const shift = bit % 32;
    words[w] = ((words[w] as number) | (v << shift)) >>> 0;
    if (shift + bits > 32) words[w + 1] = ((words[w + 1] as number) | (v >>> (32 - shift))) >>> 0;
  }
  return words;
}

/**
 * A read-only view of packed fields. `get` is small and monomorphic so V8 inlines it into the
 * matcher; callers keep indexes below `length` (a bundle's verified counts).
 */
export class PackedArray {
  private readonly mask: number;

  constructor(
    readonly words: Uint32Array,
    readonly bits: number,
    readonly length: number,
  ) {
    this.mask = 2 ** bits - 1;
  }

  get(i: number): number {
    const bit = i * this.bits;
    const w = bit >>> 5;
    const shift = bit & 31;
    let v = (this.words[w] as number) >>> shift;
    // Only a field that crosses the word boundary reads the next word (always in bounds then).
    if (shift + this.bits > 32) v |= (this.words[w + 1] as number) << (32 - shift);
    return v & this.mask;
  }
}
