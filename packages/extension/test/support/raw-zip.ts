import { strToU8 } from 'fflate';

export interface RawEntry {
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
export function rawZip(entries: RawEntry[]): Uint8Array {
  const parts: number[] = [];
  /** Little-endian fields, each [width in bytes, value]. */
  const put = (...fields: [2 | 4, number][]): void => {
    for (const [width, n] of fields)
      for (let i = 0; i < width; i++) parts.push((n >>> (8 * i)) & 0xff);
  };
  const offsets = new Map<Uint8Array, number>();
  for (const e of entries) {
    if (offsets.has(e.data)) continue;
    offsets.set(e.data, parts.length);
    const name = strToU8(e.name);
    put(
      [4, 0x04034b50],
      [2, 20],
      [2, 0],
      [2, 8],
      [2, 0],
      [2, 0],
      [4, 0],
      [4, e.data.length],
      [4, e.declared],
      [2, name.length],
      [2, 0],
    );
    parts.push(...name, ...e.data);
  }
  const cd = parts.length;
  for (const e of entries) {
    const name = strToU8(e.name);
    put(
      [4, 0x02014b50],
      [2, 20],
      [2, 20],
      [2, 0],
      [2, 8],
      [2, 0],
      [2, 0],
      [4, 0],
      [4, e.data.length],
      [4, e.declared],
    );
    put(
      [2, name.length],
      [2, 0],
      [2, 0],
      [2, 0],
      [2, 0],
      [4, 0],
      [4, offsets.get(e.data) as number],
    );
    parts.push(...name);
  }
  const cdSize = parts.length - cd;
  put(
    [4, 0x06054b50],
    [2, 0],
    [2, 0],
    [2, entries.length],
    [2, entries.length],
    [4, cdSize],
    [4, cd],
    [2, 0],
  );
  return Uint8Array.from(parts);
}
