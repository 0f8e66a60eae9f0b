import type { ChannelDefinition } from './definition.js';
import { gzipBytes } from './gzip.js';
import { makeDelta } from './delta.js';
import {
  bundleFileName,
  deltaFileName,
  deltaIndexFileName,
  deltaIndexSignatureFileName,
  keyCertificateFileName,
  keyCertificateSignatureFileName,
  releaseFileName,
  releaseSignatureFileName,
} from './layout.js';
import {
  type DeltaEntry,
  deltaIndexBytes,
  keyCertificateBytes,
  MAX_DELTAS,
  releaseBytes,
  sha256Hex,
} from './release.js';
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
  const bytes = keyCertificateBytes({
    channel: def.name,
    urlPrefix: def.urlPrefix,
    version,
    key: publicJwkOf(signingPublicKey),
  });
  return {
    [keyCertificateFileName(version)]: bytes,
    [keyCertificateSignatureFileName(version)]: await signBytes(rootPrivateKey, bytes),
  };
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
    bundle: {
      file: bundleFileName(timestamp),
      bytes: bundle.byteLength,
      sha256: await sha256Hex(bundle),
    },
  });
  return {
    [bundleFileName(timestamp)]: gz ?? (await gzipBytes(bundle)),
    [releaseFileName(timestamp)]: bytes,
    [releaseSignatureFileName(timestamp)]: await signBytes(signingPrivateKey, bytes),
  };
}

/** An earlier release a delta may start from: its timestamp and its (ungzipped) bundle. */
export interface DeltaBase {
  timestamp: number;
  bundle: Uint8Array;
}

/**
 * The deltas to the release `timestamp` (bundle `bundle`) from each of `bases` (at most
 * MAX_DELTAS, newest first), gzipped, with their signed index. A delta no smaller than the
 * gzipped bundle is left out: the client would be better off downloading the bundle.
 */
export async function deltaFiles(
  def: ChannelDefinition,
  bases: readonly DeltaBase[],
  bundle: Uint8Array,
  timestamp: number,
  signingPrivateKey: JsonWebKey,
  keyVersion: number,
  gzippedBundleBytes: number,
): Promise<ChannelFiles> {
  const files: ChannelFiles = {};
  const deltas: DeltaEntry[] = [];
  for (const base of bases.slice(0, MAX_DELTAS)) {
    const delta = makeDelta(base.bundle, bundle);
    const gz = await gzipBytes(delta);
    if (gz.byteLength >= gzippedBundleBytes) continue;
    const file = deltaFileName(base.timestamp, timestamp);
    files[file] = gz;
    deltas.push({
      from: base.timestamp,
      fromSha256: await sha256Hex(base.bundle),
      file,
      bytes: delta.byteLength,
      sha256: await sha256Hex(delta),
    });
  }
  if (deltas.length === 0) return files;
  const index = deltaIndexBytes({
    channel: def.name,
    urlPrefix: def.urlPrefix,
    timestamp,
    keyVersion,
    bundle: {
      file: bundleFileName(timestamp),
      bytes: bundle.byteLength,
      sha256: await sha256Hex(bundle),
    },
    deltas,
  });
  files[deltaIndexFileName(timestamp)] = index;
  files[deltaIndexSignatureFileName(timestamp)] = await signBytes(signingPrivateKey, index);
  return files;
}
