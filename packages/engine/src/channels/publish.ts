import type { ChannelDefinition } from './definition.js';
import { gzipBytes } from './gzip.js';
import { bundleFileName, keyCertificateFileName, keyCertificateSignatureFileName, releaseFileName, releaseSignatureFileName } from './layout.js';
import { keyCertificateBytes, releaseBytes, sha256Hex } from './release.js';
import { publicJwkOf, signBytes } from './signature.js';

/** File name → bytes, to be written into the channel directory. */
export type ChannelFiles = Record<string, Uint8Array>;

/**
 * The certificate of an online signing key: the root key vouches that `signingPublicKey`
 * signs releases of this channel as key `version`. Made once per key, on the offline machine.
 */
export async function keyCertificateFiles(
  def: ChannelDefinition,
  rootPrivateKey: JsonWebKey,
  signingPublicKey: JsonWebKey,
  version: number,
): Promise<ChannelFiles> {
  const bytes = keyCertificateBytes({ channel: def.name, urlPrefix: def.urlPrefix, version, key: publicJwkOf(signingPublicKey) });
  return { [keyCertificateFileName(version)]: bytes, [keyCertificateSignatureFileName(version)]: await signBytes(rootPrivateKey, bytes) };
}

/**
 * The immutable files of one release: the gzipped bundle, and the release (binding the channel
 * name, URL prefix, scope, destinations, timestamp, key version and the bundle's digest)
 * with its signature. `latest-timestamp` is the caller's to write, last.
 */
export async function releaseFiles(
  def: ChannelDefinition,
  bundle: Uint8Array,
  timestamp: number,
  signingPrivateKey: JsonWebKey,
  keyVersion: number,
  gz?: Uint8Array,
): Promise<ChannelFiles> {
  const bytes = releaseBytes({
    channel: def.name,
    urlPrefix: def.urlPrefix,
    scope: def.scope,
    destinations: def.destinations,
    timestamp,
    keyVersion,
    bundle: { file: bundleFileName(timestamp), bytes: bundle.byteLength, sha256: await sha256Hex(bundle) },
  });
  return {
    [bundleFileName(timestamp)]: gz ?? (await gzipBytes(bundle)),
    [releaseFileName(timestamp)]: bytes,
    [releaseSignatureFileName(timestamp)]: await signBytes(signingPrivateKey, bytes),
  };
}
