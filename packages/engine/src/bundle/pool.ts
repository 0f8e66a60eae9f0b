/**
 * Length-headed byte-string pools, the layout of StrBytes (cold strings) and Labels (host
 * labels): each string a varint byte length then its bytes, its id the byte offset of its header.
 * The writer (`writePool`, `writeColdStrings`) sits beside the reader (`readLength`); strings are
 * dictionary-coded first (string-dictionary.ts).
 */
import { codeStrings } from './string-dictionary.js';

/** A length header's bytes: 7 bits a byte, low first; at most 4 bytes (readLength's limit). */
export function varintBytes(n: number): number[] {
  const header: number[] = [];
  while (n >= 0x80) {
    header.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  header.push(n);
  if (header.length > 4) throw new Error(`string of ${n} bytes is too long for a bundle`);
  return header;
}

/** Decodes the varint length at `at`; returns length * 8 + header size (1..4 bytes), no allocation. */
export function readLength(bytes: Uint8Array, at: number): number {
  let length = 0;
  let shift = 0;
  let size = 0;
  for (;;) {
    const b = bytes[at + size] as number;
    length |= (b & 0x7f) << shift;
    size++;
    if (b < 0x80 || size === 4) break;
    shift += 7;
  }
  return length * 8 + size;
}

/** A pool's bytes and each string's offset (its id). */
export interface Pool {
  bytes: Uint8Array;
  offsets: number[];
}

/**
 * The byte length writePool lays `strings` out in (a header for those with `headed(i)`): the
 * pool is allocated at this size and written to its end.
 */
export function poolSize(
  strings: readonly Uint8Array[],
  headed: (i: number) => boolean = () => true,
): number {
  let size = 0;
  strings.forEach((s, i) => (size += (headed(i) ? varintBytes(s.length).length : 0) + s.length));
  return size;
}

/**
 * Lays out byte strings as varint length + bytes (only those with `headed(i)`, by default all: a
 * host label's record may say its length instead); returns the pool and each string's offset.
 */
export function writePool(
  strings: readonly Uint8Array[],
  headed: (i: number) => boolean = () => true,
): Pool {
  const bytes = new Uint8Array(poolSize(strings, headed));
  const offsets: number[] = [];
  let at = 0;
  strings.forEach((s, i) => {
    offsets.push(at);
    if (headed(i)) for (const b of varintBytes(s.length)) bytes[at++] = b;
    bytes.set(s, at);
    at += s.length;
  });
  return { bytes, offsets };
}

/**
 * Deduplicating string table: hands out dense indexes in first-use order (so output is
 * deterministic); the final ids are byte offsets, known once the whole pool is laid out.
 */
export class StringTable {
  private readonly ids = new Map<string, number>();
  readonly strings: string[] = [];
  id(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.strings.length;
      this.strings.push(s);
      this.ids.set(s, id);
    }
    return id;
  }
}

/**
 * The cold strings (Section.Dictionary and Section.StrBytes): dictionary-coded, pooled in the
 * given order; `offsets[i]` is the id of `strings[i]` (match/string-pool.ts reads it).
 */
export function writeColdStrings(strings: readonly string[]): Pool & { dictionary: Uint8Array } {
  const coded = codeStrings(strings);
  return { ...writePool(coded.coded), dictionary: coded.dictionary };
}
