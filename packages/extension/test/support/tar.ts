/** A minimal ustar writer for tests: builds archives (also damaged ones) at test time. */
export interface TarEntry {
  name: string;
  data?: string | Uint8Array;
  /** '0' file (default), '5' directory, '2' symlink. */
  type?: string;
  /** Overrides the size written in the header (a lie). */
  declaredSize?: number;
  /** Written in the ustar prefix field. */
  prefix?: string;
}

function put(header: Uint8Array, offset: number, length: number, text: string): void {
  for (let i = 0; i < Math.min(length, text.length); i++) header[offset + i] = text.charCodeAt(i);
}

export function tarHeader(e: TarEntry, size: number): Uint8Array {
  const h = new Uint8Array(512);
  put(h, 0, 100, e.name);
  put(h, 100, 8, '0000644\0');
  put(h, 108, 8, '0000000\0');
  put(h, 116, 8, '0000000\0');
  put(h, 124, 12, `${(e.declaredSize ?? size).toString(8).padStart(11, '0')}\0`);
  put(h, 136, 12, '00000000000\0');
  put(h, 156, 1, e.type ?? '0');
  put(h, 257, 6, 'ustar\0');
  put(h, 263, 2, '00');
  if (e.prefix !== undefined) put(h, 345, 155, e.prefix);
  h.fill(32, 148, 156);
  const sum = h.reduce((a, b) => a + b, 0);
  put(h, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return h;
}

export function tar(entries: TarEntry[], { end = true }: { end?: boolean } = {}): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const data =
      typeof e.data === 'string' ? new TextEncoder().encode(e.data) : (e.data ?? new Uint8Array(0));
    parts.push(tarHeader(e, data.length));
    const padded = new Uint8Array(Math.ceil(data.length / 512) * 512);
    padded.set(data);
    parts.push(padded);
  }
  if (end) parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
