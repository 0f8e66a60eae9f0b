/**
 * Fixed-width unsigned fields packed low-bit first into a Uint32Array: element i occupies bits
 * [i * bits, (i + 1) * bits) of the word stream, so a field may straddle two words. Bundles use
 * it for per-ruleset and per-rule columns whose values need far fewer than 32 bits (string
 * offsets ~20, item starts ~15, flags 2-3), with the width chosen per bundle.
 */

/** Widest field: values stay non-negative small integers after `>>>`-free masking. */
export const MAX_PACKED_BITS = 31;
/**
 * log2 of the entries per block of a blocked column: each block of 32 has a u32 base (its
 * smallest value), and fields hold the value minus the base. Ascending columns (ruleset ranges,
 * name offsets) then need a few bits per field instead of the width of their largest value.
 */
export const BLOCK_SHIFT = 5;

/** Base words of a blocked column of `count` fields. */
export function blockWords(count: number): number {
  return Math.ceil(count / 2 ** BLOCK_SHIFT);
}

/**
 * A column laid out blocked (bases, then fields of `bits` bits) when its fields then carry fewer
 * significant bits in all (what gzip sees: a few outliers widen every field, but the high bits
 * of the others are zeros), else plain: the section words, the field width and whether it is
 * blocked. Decided from the values alone, so the same rulesets always give the same bytes.
 */
export function packColumn(values: ArrayLike<number>): {
  words: Uint32Array;
  bits: number;
  blocked: boolean;
} {
  let max = 0;
  for (let i = 0; i < values.length; i++) max = Math.max(max, values[i] as number);
  const plainBits = widthOf(max);
  const bases = new Uint32Array(blockWords(values.length)).fill(0xffffffff);
  for (let i = 0; i < values.length; i++)
    bases[i >>> BLOCK_SHIFT] = Math.min(bases[i >>> BLOCK_SHIFT] as number, values[i] as number);
  const deltas = Array.from(values, (v, i) => v - (bases[i >>> BLOCK_SHIFT] as number));
  const blockedBits = widthOf(deltas.reduce((a, b) => Math.max(a, b), 0));
  let plainCost = 0;
  let blockedCost = 32 * bases.length;
  for (let i = 0; i < values.length; i++) {
    plainCost += 32 - Math.clz32(values[i] as number);
    blockedCost += 32 - Math.clz32(deltas[i] as number);
  }
  if (blockedCost >= plainCost) {
    return { words: pack(values, plainBits), bits: plainBits, blocked: false };
  }
  const fields = pack(deltas, blockedBits);
  const words = new Uint32Array(bases.length + fields.length);
  words.set(bases);
  words.set(fields, bases.length);
  return { words, bits: blockedBits, blocked: true };
}

function widthOf(max: number): number {
  let bits = 1;
  while (2 ** bits <= max) bits++;
  return bits;
}

/** Words holding `count` fields of `bits` bits. */
export function packedWords(count: number, bits: number): number {
  return Math.ceil((count * bits) / 32);
}

/** Packs `values` (each below 2^bits) into words. */
export function pack(values: ArrayLike<number>, bits: number): Uint32Array {
  if (!Number.isInteger(bits) || bits < 1 || bits > MAX_PACKED_BITS)
    throw new Error(`packed field of ${bits} bits`);
  const limit = 2 ** bits;
  const words = new Uint32Array(packedWords(values.length, bits));
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (!Number.isInteger(v) || v < 0 || v >= limit)
      throw new Error(`value ${v} does not fit a ${bits}-bit field`);
    const bit = i * bits;
    const w = Math.floor(bit / 32);
    const shift = bit % 32;
    words[w] = ((words[w] as number) | (v << shift)) >>> 0;
    if (shift + bits > 32) words[w + 1] = ((words[w + 1] as number) | (v >>> (32 - shift))) >>> 0;
  }
  return words;
}

/**
 * A read-only view of packed fields, plain or blocked (`bases` non-empty: see BLOCK_SHIFT). `get`
 * is small and monomorphic so V8 inlines it into the matcher; callers keep indexes below
 * `length` (a bundle's verified counts).
 */
export class PackedArray {
  private readonly mask: number;
  private readonly blocked: boolean;

  constructor(
    readonly words: Uint32Array,
    readonly bits: number,
    readonly length: number,
    readonly bases: Uint32Array = new Uint32Array(0),
  ) {
    this.mask = 2 ** bits - 1;
    this.blocked = bases.length > 0;
  }

  get(i: number): number {
    const bit = i * this.bits;
    const w = bit >>> 5;
    const shift = bit & 31;
    let v = (this.words[w] as number) >>> shift;
    // Only a field that crosses the word boundary reads the next word (always in bounds then).
    if (shift + this.bits > 32) v |= (this.words[w + 1] as number) << (32 - shift);
    v &= this.mask;
    return this.blocked ? v + (this.bases[i >>> BLOCK_SHIFT] as number) : v;
  }
}
