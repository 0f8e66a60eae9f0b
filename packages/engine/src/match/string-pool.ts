import { readLength } from '../bundle/pool.js';
import { expand, expandedLength, readDictionary } from '../bundle/string-dictionary.js';

/**
 * The bundle's coded string pool (StrBytes, expanded through its Dictionary section), decoded on
 * demand. Strings used on every rewrite (replacements, names) are cached; regex sources are
 * decoded once, to compile them, and not kept.
 */
export class StringPool {
  private readonly codedBytes: Uint8Array;
  private readonly dictionarySection: Uint8Array;
  /** Dictionary entries (views into the bundle), read on the first decode. */
  private dictionary: (Uint8Array | undefined)[] | null = null;
  /** Scratch buffer strings are expanded into before decoding; grows as needed. */
  private expanded = new Uint8Array(256);
  private readonly decoded = new Map<number, string>();
  private readonly decoder = new TextDecoder();

  constructor(codedBytes: Uint8Array, dictionarySection: Uint8Array) {
    this.codedBytes = codedBytes;
    this.dictionarySection = dictionarySection;
  }

  /** Decoded string, cached: for strings used on every rewrite (replacements, names). */
  cached(id: number): string {
    let s = this.decoded.get(id);
    if (s === undefined) {
      s = this.decode(id);
      this.decoded.set(id, s);
    }
    return s;
  }

  /** Decoded string, not cached: regex sources are needed once, to compile them. */
  decode(id: number): string {
    const bytes = this.codedBytes;
    const meta = readLength(bytes, id);
    const from = id + (meta & 7);
    const to = Math.min(bytes.length, from + Math.floor(meta / 8));
    const dictionary =
      this.dictionary ?? (this.dictionary = dictionaryTable(this.dictionarySection));
    const needed = expandedLength(bytes, from, to, dictionary);
    if (this.expanded.length < needed)
      this.expanded = new Uint8Array(Math.max(needed, this.expanded.length * 2));
    const length = expand(bytes, from, to, dictionary, this.expanded);
    return this.decoder.decode(this.expanded.subarray(0, length));
  }
}

/** The code table of a dictionary section; a malformed (trusted) one codes nothing. */
export function dictionaryTable(section: Uint8Array): (Uint8Array | undefined)[] {
  const table = readDictionary(section);
  return typeof table === 'string' ? [] : table;
}
