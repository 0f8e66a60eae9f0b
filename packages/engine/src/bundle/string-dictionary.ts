/**
 * Static dictionary coding for the bundle's cold strings (regex sources, replacements, names,
 * cookie patterns): they are mostly ASCII and full of repeats (`^http://`, `(?:www\.)?`, `\.com/`),
 * so bytes 0x80-0xFE stand for dictionary entries, 0xFF escapes one raw byte, and 0x00-0x7F are
 * themselves. The dictionary is learned per bundle by byte-pair merging (deterministic: ties go to
 * the smallest pair), and each string stays decodable on its own, so lookups stay random-access.
 */

export const FIRST_CODE = 0x80;
export const ESCAPE = 0xff;
export const MAX_ENTRIES = ESCAPE - FIRST_CODE;

/** Token values while learning: 0-255 raw bytes, 256 + k dictionary entry k. */
const TOKEN_LIMIT = 256 + MAX_ENTRIES;
const SEPARATOR = -1;
/** A merge must save at least this many bytes over its own dictionary entry to be worth it. */
const MIN_GAIN = 4;

export interface CodedStrings {
  /** Entry k expands to these bytes. */
  dictionary: Uint8Array[];
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
  let at = 0;
  for (const r of raw) {
    tokens.set(r, at);
    at += r.length;
    tokens[at++] = SEPARATOR;
  }
  const dictionary: Uint8Array[] = [];
  const expansion = (t: number): Uint8Array => (t < 256 ? Uint8Array.of(t) : (dictionary[t - 256] as Uint8Array));
  const counts = new Int32Array(TOKEN_LIMIT * TOKEN_LIMIT);
  while (dictionary.length < MAX_ENTRIES) {
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
      const gain = c - (expansion(Math.floor(key / TOKEN_LIMIT)).length + expansion(key % TOKEN_LIMIT).length + 1);
      if (gain > bestGain) {
        bestGain = gain;
        best = key;
      }
    }
    if (best < 0) break;
    const a = Math.floor(best / TOKEN_LIMIT);
    const b = best % TOKEN_LIMIT;
    const merged = 256 + dictionary.length;
    const ea = expansion(a);
    const eb = expansion(b);
    const entry = new Uint8Array(ea.length + eb.length);
    entry.set(ea);
    entry.set(eb, ea.length);
    dictionary.push(entry);
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
    } else if (t >= 256) out.push(FIRST_CODE + t - 256);
    else if (t >= FIRST_CODE) out.push(ESCAPE, t);
    else out.push(t);
  }
  return { dictionary, coded };
}

/**
 * Expands `src[from, to)` into `out` (which must hold the expansion; see expandedLength) and
 * returns the expanded length. Malformed input (a code past the dictionary, a cut-off escape)
 * expands to nothing rather than throwing: only a garbled string can result.
 */
export function expand(src: Uint8Array, from: number, to: number, dictionary: readonly Uint8Array[], out: Uint8Array): number {
  let w = 0;
  for (let i = from; i < to; i++) {
    const b = src[i] as number;
    if (b < FIRST_CODE) out[w++] = b;
    else if (b === ESCAPE) {
      if (++i < to) out[w++] = src[i] as number;
    } else {
      const entry = dictionary[b - FIRST_CODE];
      if (entry === undefined) continue;
      out.set(entry, w);
      w += entry.length;
    }
  }
  return w;
}

/** Length of the expansion of `src[from, to)`, as expand would write it. */
export function expandedLength(src: Uint8Array, from: number, to: number, dictionary: readonly Uint8Array[]): number {
  let length = 0;
  for (let i = from; i < to; i++) {
    const b = src[i] as number;
    if (b < FIRST_CODE) length++;
    else if (b === ESCAPE) {
      if (++i < to) length++;
    } else length += dictionary[b - FIRST_CODE]?.length ?? 0;
  }
  return length;
}
