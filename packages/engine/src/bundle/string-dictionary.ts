/**
 * Static dictionary coding for the bundle's strings (regex sources, replacements, names, cookie
 * patterns; host labels with a dictionary of their own): they are mostly ASCII and full of repeats
 * (`^http://`, `(?:www\.)?`, `\.com/`), so every byte value the strings never use as ASCII (all of
 * 0x80-0xFE, and unused ASCII such as control characters) stands for a dictionary entry, 0xFF
 * escapes one raw byte, and the other bytes are themselves. The dictionary is learned per bundle by
 * byte-pair merging (deterministic: ties go to the smallest pair), and each string stays decodable
 * on its own, so lookups stay random-access.
 */

export const ESCAPE = 0xff;
/** A code is a byte value below ESCAPE, so there are at most this many entries. */
export const MAX_ENTRIES = ESCAPE;
/** Entry lengths are stored in one byte. */
const MAX_ENTRY_BYTES = 255;

/** Token values while learning: 0-255 raw bytes, 256 + k dictionary entry k. */
const TOKEN_LIMIT = 256 + MAX_ENTRIES;
const SEPARATOR = -1;
/** A merge must save at least this many bytes over its own dictionary entry to be worth it. */
const MIN_GAIN = 4;

export interface CodedStrings {
  /** The dictionary section: per entry, in ascending code order, its code byte, length byte, bytes. */
  dictionary: Uint8Array;
  /** Coded bytes of each input string, in input order. */
  coded: Uint8Array[];
}

/** Learns a dictionary from `strings` (distinct, in a deterministic order) and codes them with it. */
export function codeStrings(strings: readonly string[]): CodedStrings {
  const encoder = new TextEncoder();
  const raw = strings.map((s) => encoder.encode(s));
  let length = raw.length;
  for (const r of raw) length += r.length;
  // All strings in one token stream, separated so that no pair spans two strings.
  let tokens = new Int32Array(length);
  const literal = new Uint8Array(256);
  let at = 0;
  for (const r of raw) {
    tokens.set(r, at);
    at += r.length;
    tokens[at++] = SEPARATOR;
    for (const b of r) if (b < 0x80) literal[b] = 1;
  }
  // Codes: every byte that is not a literal; bytes >= 0x80 in the input are escaped instead.
  const codes: number[] = [];
  for (let b = 0; b < ESCAPE; b++) if (literal[b] === 0) codes.push(b);
  const entries: Uint8Array[] = [];
  const expansion = (t: number): Uint8Array =>
    t < 256 ? Uint8Array.of(t) : (entries[t - 256] as Uint8Array);
  const counts = new Int32Array(TOKEN_LIMIT * TOKEN_LIMIT);
  while (entries.length < codes.length) {
    counts.fill(0);
    for (let i = 0; i + 1 < length; i++) {
      const a = tokens[i] as number;
      const b = tokens[i + 1] as number;
      if (a >= 0 && b >= 0) counts[a * TOKEN_LIMIT + b]++;
    }
    let best = -1;
    let bestGain = MIN_GAIN - 1;
    for (let key = 0; key < counts.length; key++) {
      const c = counts[key] as number;
      if (c <= bestGain) continue;
      const size =
        expansion(Math.floor(key / TOKEN_LIMIT)).length + expansion(key % TOKEN_LIMIT).length;
      const gain = c - (size + 2);
      if (gain > bestGain && size <= MAX_ENTRY_BYTES) {
        bestGain = gain;
        best = key;
      }
    }
    if (best < 0) break;
    const a = Math.floor(best / TOKEN_LIMIT);
    const b = best % TOKEN_LIMIT;
    const merged = 256 + entries.length;
    const ea = expansion(a);
    const eb = expansion(b);
    const entry = new Uint8Array(ea.length + eb.length);
    entry.set(ea);
    entry.set(eb, ea.length);
    entries.push(entry);
    // Replace left to right, compacting in place.
    let w = 0;
    for (let r = 0; r < length; r++) {
      const t = tokens[r] as number;
      if (t === a && tokens[r + 1] === b && r + 1 < length) {
        tokens[w++] = merged;
        r++;
      } else {
        tokens[w++] = t;
      }
    }
    length = w;
  }
  tokens = tokens.subarray(0, length);
  const coded: Uint8Array[] = [];
  const out: number[] = [];
  for (let i = 0; i < length; i++) {
    const t = tokens[i] as number;
    if (t === SEPARATOR) {
      coded.push(Uint8Array.from(out));
      out.length = 0;
    } else if (t >= 256) out.push(codes[t - 256] as number);
    else if (literal[t] === 0) out.push(ESCAPE, t);
    else out.push(t);
  }
  let size = 0;
  for (const e of entries) size += 2 + e.length;
  const dictionary = new Uint8Array(size);
  at = 0;
  entries.forEach((e, k) => {
    dictionary[at] = codes[k] as number;
    dictionary[at + 1] = e.length;
    dictionary.set(e, at + 2);
    at += 2 + e.length;
  });
  return { dictionary, coded };
}

/**
 * The entry of each code byte (undefined: the byte is itself), as views into a dictionary
 * section; returns an error message when the section is malformed (codes not ascending, an
 * entry running past the end). At most MAX_ENTRIES entries, so this is O(1) per bundle.
 */
export function readDictionary(section: Uint8Array): (Uint8Array | undefined)[] | string {
  const table: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(256).fill(undefined);
  let previous = -1;
  for (let at = 0; at < section.length;) {
    const code = section[at] as number;
    const length = section[at + 1];
    if (length === undefined || length === 0 || at + 2 + length > section.length)
      return 'entry runs past the end';
    if (code <= previous || code >= ESCAPE) return `code ${code} out of order`;
    table[code] = section.subarray(at + 2, at + 2 + length);
    previous = code;
    at += 2 + length;
  }
  return table;
}

/**
 * Expands `src[from, to)` into `out` (which must hold the expansion; see expandedLength) and
 * returns the expanded length. `dictionary` is a readDictionary table. Malformed input (a cut-off
 * escape) expands to nothing rather than throwing: only a garbled string can result.
 */
export function expand(
  src: Uint8Array,
  from: number,
  to: number,
  dictionary: readonly (Uint8Array | undefined)[],
  out: Uint8Array,
): number {
  let w = 0;
  for (let i = from; i < to; i++) {
    const b = src[i] as number;
    const entry = dictionary[b];
    if (entry !== undefined) {
      out.set(entry, w);
      w += entry.length;
    } else if (b === ESCAPE) {
      if (++i < to) out[w++] = src[i] as number;
    } else out[w++] = b;
  }
  return w;
}

/** Length of the expansion of `src[from, to)`, as expand would write it. */
export function expandedLength(
  src: Uint8Array,
  from: number,
  to: number,
  dictionary: readonly (Uint8Array | undefined)[],
): number {
  let length = 0;
  for (let i = from; i < to; i++) {
    const b = src[i] as number;
    const entry = dictionary[b];
    if (entry !== undefined) length += entry.length;
    else if (b === ESCAPE) {
      if (++i < to) length++;
    } else length++;
  }
  return length;
}
