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
/** Smallest modulus a channel may use; below this RSA is no longer considered safe. */
export const MIN_MODULUS_BITS = 2048;

/** WebCrypto's typings want ArrayBuffer-backed views; copy only in the rare other case. */
function bufferSource(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
}

const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const;

/** Bytes of the RSA modulus of a JWK, from the length of its base64url `n` (leading zeros are not allowed by RFC 7518). */
export function modulusBytes(jwk: JsonWebKey): number {
  const n = jwk.n ?? '';
  return Math.floor((n.length * 6) / 8);
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
  if (key.kty !== 'RSA') throw new ChannelError('invalid-key', `public key must be an RSA JWK (kty "RSA"), got kty ${JSON.stringify(key.kty)}`);
  for (const member of PRIVATE_JWK_MEMBERS) {
    if (member in key) {
      throw new ChannelError('invalid-key', `public key contains the private member "${member}": this is a private key, publish only the .public.jwk file`);
    }
  }
  if (typeof key.n !== 'string' || !/^[A-Za-z0-9_-]+$/.test(key.n)) throw new ChannelError('invalid-key', 'public key has no valid base64url modulus "n"');
  if (typeof key.e !== 'string' || !/^[A-Za-z0-9_-]+$/.test(key.e)) throw new ChannelError('invalid-key', 'public key has no valid base64url exponent "e"');
  if (key.alg !== undefined && key.alg !== 'PS256') {
    throw new ChannelError('invalid-key', `public key is for algorithm ${JSON.stringify(key.alg)}; channels use RSA-PSS with SHA-256 (PS256)`);
  }
  const bits = modulusBytes({ n: key.n }) * 8;
  if (bits < MIN_MODULUS_BITS) throw new ChannelError('invalid-key', `public key modulus has ${bits} bits; at least ${MIN_MODULUS_BITS} are required`);
  return { kty: 'RSA', n: key.n, e: key.e };
}

/** Imports a channel's public key for verification, keeping only the members that matter. */
export async function importVerifyKey(jwk: JsonWebKey): Promise<CryptoKey> {
  const clean = checkPublicJwk(jwk);
  try {
    return await crypto.subtle.importKey('jwk', { ...clean, ext: true }, KEY_ALGORITHM, false, ['verify']);
  } catch (err) {
    throw new ChannelError('invalid-key', `public key could not be imported: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/**
 * Verifies `signature` over `data`; throws `bad-signature` unless it is valid. The length is
 * checked first: an RSA signature is exactly as long as the modulus.
 */
export async function verifySignature(jwk: JsonWebKey, signature: Uint8Array, data: Uint8Array): Promise<void> {
  const key = await importVerifyKey(jwk);
  const expected = modulusBytes(jwk);
  if (signature.byteLength !== expected) {
    throw new ChannelError('bad-signature', `signature is ${signature.byteLength} bytes; this channel's key makes ${expected}-byte signatures`);
  }
  const ok = await crypto.subtle.verify(SIGNATURE_ALGORITHM, key, bufferSource(signature), bufferSource(data));
  if (!ok) throw new ChannelError('bad-signature', "signature does not match the bundle and this channel's public key");
}

export interface SigningKeyPair {
  privateKey: JsonWebKey;
  publicKey: JsonWebKey;
}

/** A fresh RSA-PSS 4096 key pair as JWKs (the channel file embeds the public one). */
export async function generateSigningKeyPair(modulusBits = GENERATED_MODULUS_BITS): Promise<SigningKeyPair> {
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
    throw new ChannelError('invalid-key', 'signing key must be an RSA private JWK (with "d"); did you pass the public key?');
  }
  if (modulusBytes(privateJwk) * 8 < MIN_MODULUS_BITS) {
    throw new ChannelError('invalid-key', `signing key modulus is below ${MIN_MODULUS_BITS} bits`);
  }
  let key: CryptoKey;
  try {
    const { key_ops: _ops, alg: _alg, use: _use, ...members } = privateJwk;
    key = await crypto.subtle.importKey('jwk', { ...members, ext: true }, KEY_ALGORITHM, false, ['sign']);
  } catch (err) {
    throw new ChannelError('invalid-key', `signing key could not be imported: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return new Uint8Array(await crypto.subtle.sign(SIGNATURE_ALGORITHM, key, bufferSource(data)));
}

/** The public half of a private JWK, for checking that a key matches a channel. */
export function publicJwkOf(privateJwk: JsonWebKey): JsonWebKey {
  return { kty: 'RSA', n: privateJwk.n, e: privateJwk.e, alg: 'PS256' };
}
