/**
 * Base64 for bundle bytes in storage.local (which stores JSON-like values, not binary). Works in
 * service workers, Firefox and Node alike (`btoa`/`atob`); chunked because a bundle has
 * megabytes and `String.fromCharCode(...bytes)` would overflow the argument limit.
 */
const CHUNK = 0x8000;

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK)
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}

/** Throws on anything that is not strict base64, so damaged storage is noticed, not misread. */
export function base64ToBytes(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0)
    throw new Error('not valid base64');
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
