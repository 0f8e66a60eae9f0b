import { ChannelError } from './errors.js';

/**
 * Channel signatures are RSA-PSS with SHA-256 and a 32-byte salt over the exact bytes of
 * `rulesets.<ts>.bundle.gz`. RSA-PSS rather than Ed25519 because every WebCrypto
 * implementation the extension targets has it (Ed25519 only reached Chromium's WebCrypto in
 * 2025), and because it is what HTTPS Everywhere used, so publishers can keep signing on an
 * air-gapped machine with plain `openssl dgst -sha256 -sigopt rsa_padding_mode:pss
 * -sigopt rsa_pss_saltlen:32`.
 */
export const SIGNATURE_ALGORITHM = { name: 'RSA-PSS', saltLength: 32 } as const;
const KEY_ALGORITHM = { name: 'RSA-PSS', hash: 'SHA-256' } as const;

/** Keys `httpsify keygen` makes. */
export const GENERATED_MODULUS_BITS = 4096;
/** Smallest modulus a channel key may have, counted on the modulus value (NIST SP 800-57: 128-bit security). */
export const MIN_MODULUS_BITS = 3072;
/** The only public exponent accepted: 65537. A small exponent such as 1 makes forging trivial. */
const REQUIRED_EXPONENT = 65537;

/** WebCrypto's typings want ArrayBuffer-backed views; copy only in the rare other case. */
function bufferSource(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer
    ? (bytes as Uint8Array<ArrayBuffer>)
    : new Uint8Array(bytes);
}

const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const;

/** Decodes base64url (no padding) without a platform Buffer; returns null for anything else. */
export function base64UrlToBytes(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const out = new Uint8Array(Math.floor((text.length * 6) / 8));
  let acc = 0;
  let bits = 0;
  let at = 0;
  for (const ch of text) {
    acc = (acc << 6) | alphabet.indexOf(ch);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (acc >> bits) & 0xff;
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/** Bit length of a big-endian unsigned integer (leading zero bytes and bits do not count). */
export function bitLength(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  if (i === bytes.length) return 0;
  return (bytes.length - i - 1) * 8 + (32 - Math.clz32(bytes[i] as number));
}

/** Bytes of an RSA signature made with this key: the modulus value's byte length. */
export function modulusBytes(jwk: JsonWebKey): number {
  const n = base64UrlToBytes(jwk.n ?? '');
  return n === null ? 0 : Math.ceil(bitLength(n) / 8);
}

/**
 * Structural checks of a channel's public key, so a bad channel file is reported when it is
 * read rather than as a confusing verification failure later.
 */
export function checkPublicJwk(jwk: unknown): JsonWebKey {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw new ChannelError('invalid-key', 'public key must be a JWK object');
  }
  const key = jwk as Record<string, unknown>;
  if (key.kty !== 'RSA')
    throw new ChannelError(
      'invalid-key',
      `public key must be an RSA JWK (kty "RSA"), got kty ${JSON.stringify(key.kty)}`,
    );
  for (const member of PRIVATE_JWK_MEMBERS) {
    if (member in key) {
      throw new ChannelError(
        'invalid-key',
        `public key contains the private member "${member}": this is a private key, publish only the .public.jwk file`,
      );
    }
  }
  if (typeof key.n !== 'string' || !/^[A-Za-z0-9_-]+$/.test(key.n))
    throw new ChannelError('invalid-key', 'public key has no valid base64url modulus "n"');
  if (typeof key.e !== 'string' || !/^[A-Za-z0-9_-]+$/.test(key.e))
    throw new ChannelError('invalid-key', 'public key has no valid base64url exponent "e"');
  if (key.alg !== undefined && key.alg !== 'PS256') {
    throw new ChannelError(
      'invalid-key',
      `public key is for algorithm ${JSON.stringify(key.alg)}; channels use RSA-PSS with SHA-256 (PS256)`,
    );
  }
  checkKeyNumbers(key.n, key.e, 'public key');
  return { kty: 'RSA', n: key.n, e: key.e };
}

/**
 * The numbers of an RSA key, counted on their values: base64 length says nothing (leading zero
 * bytes pad it), and an exponent other than 65537 (e = 1 makes every message its own signature)
 * is refused.
 */
function checkKeyNumbers(n: string, e: string, what: string): void {
  const modulus = base64UrlToBytes(n);
  const exponent = base64UrlToBytes(e);
  if (modulus === null)
    throw new ChannelError('invalid-key', `${what} has no valid base64url modulus "n"`);
  if (exponent === null || exponent.length > 8)
    throw new ChannelError('invalid-key', `${what} has no valid base64url exponent "e"`);
  const bits = bitLength(modulus);
  if (bits < MIN_MODULUS_BITS)
    throw new ChannelError(
      'invalid-key',
      `${what} modulus has ${bits} bits; at least ${MIN_MODULUS_BITS} are required`,
    );
  if (((modulus[modulus.length - 1] as number) & 1) === 0)
    throw new ChannelError('invalid-key', `${what} modulus is even, so it is not an RSA modulus`);
  let value = 0;
  for (const b of exponent) value = value * 256 + b;
  if (value !== REQUIRED_EXPONENT)
    throw new ChannelError(
      'invalid-key',
      `${what} exponent is ${value}; channels require 65537 ("AQAB")`,
    );
}

/** Imports a channel's public key for verification, keeping only the members that matter. */
export async function importVerifyKey(jwk: JsonWebKey): Promise<CryptoKey> {
  const clean = checkPublicJwk(jwk);
  try {
    return await crypto.subtle.importKey('jwk', { ...clean, ext: true }, KEY_ALGORITHM, false, [
      'verify',
    ]);
  } catch (err) {
    throw new ChannelError(
      'invalid-key',
      `public key could not be imported: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

/**
 * Verifies `signature` over `data`; throws `bad-signature` unless it is valid. The length is
 * checked first: an RSA signature is exactly as long as the modulus.
 */
export async function verifySignature(
  jwk: JsonWebKey,
  signature: Uint8Array,
  data: Uint8Array,
): Promise<void> {
  const key = await importVerifyKey(jwk);
  const expected = modulusBytes(jwk);
  if (signature.byteLength !== expected) {
    throw new ChannelError(
      'bad-signature',
      `signature is ${signature.byteLength} bytes; this channel's key makes ${expected}-byte signatures`,
    );
  }
  const ok = await crypto.subtle.verify(
    SIGNATURE_ALGORITHM,
    key,
    bufferSource(signature),
    bufferSource(data),
  );
  if (!ok)
    throw new ChannelError(
      'bad-signature',
      "signature does not match the bundle and this channel's public key",
    );
}

export interface SigningKeyPair {
  privateKey: JsonWebKey;
  publicKey: JsonWebKey;
}

/** A fresh RSA-PSS 4096 key pair as JWKs (the channel file embeds the public one). */
export async function generateSigningKeyPair(
  modulusBits = GENERATED_MODULUS_BITS,
): Promise<SigningKeyPair> {
  const pair = await crypto.subtle.generateKey(
    { ...KEY_ALGORITHM, modulusLength: modulusBits, publicExponent: new Uint8Array([1, 0, 1]) },
    true,
    ['sign', 'verify'],
  );
  const privateKey = await crypto.subtle.exportKey('jwk', pair.privateKey);
  const publicKey = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return { privateKey, publicKey: { kty: 'RSA', n: publicKey.n, e: publicKey.e, alg: 'PS256' } };
}

/** Signs `data` with a private JWK made by {@link generateSigningKeyPair} (or any RSA private JWK). */
export async function signBytes(privateJwk: JsonWebKey, data: Uint8Array): Promise<Uint8Array> {
  if (privateJwk.kty !== 'RSA' || typeof privateJwk.d !== 'string') {
    throw new ChannelError(
      'invalid-key',
      'signing key must be an RSA private JWK (with "d"); did you pass the public key?',
    );
  }
  checkKeyNumbers(privateJwk.n ?? '', privateJwk.e ?? '', 'signing key');
  let key: CryptoKey;
  try {
    const { key_ops: _ops, alg: _alg, use: _use, ...members } = privateJwk;
    key = await crypto.subtle.importKey('jwk', { ...members, ext: true }, KEY_ALGORITHM, false, [
      'sign',
    ]);
  } catch (err) {
    throw new ChannelError(
      'invalid-key',
      `signing key could not be imported: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  return new Uint8Array(await crypto.subtle.sign(SIGNATURE_ALGORITHM, key, bufferSource(data)));
}

/** The public half of a private JWK, for checking that a key matches a channel. */
export function publicJwkOf(privateJwk: JsonWebKey): JsonWebKey {
  return { kty: 'RSA', n: privateJwk.n, e: privateJwk.e, alg: 'PS256' };
}
