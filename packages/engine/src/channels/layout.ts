/**
 * File layout of a channel directory, as written by `httpsify publish` and read by clients.
 * Only `latest-timestamp` is mutable; the other files are immutable once published, so a
 * client that reads a timestamp always finds the matching files.
 *
 *   latest-timestamp                 decimal unix seconds (a hint: everything is checked against the signed release)
 *   rulesets.<ts>.release.json       the signed release: channel, URL prefix, scope, destinations, timestamp, key version, bundle digest
 *   rulesets.<ts>.release.sig        RSA-PSS signature of the release bytes by the online key
 *   rulesets.<ts>.bundle.gz          gzip of the compiled bundle
 *   rulesets.<ts>.deltas.json, .sig  optional signed list of deltas to <ts> from earlier releases
 *   rulesets.<from>-<ts>.delta.gz    gzip of one delta (delta.ts)
 *   key.<version>.json               certificate of an online signing key
 *   key.<version>.sig                RSA-PSS signature of the certificate bytes by the root key
 */
export const LATEST_TIMESTAMP_FILE = 'latest-timestamp';

export function bundleFileName(timestamp: number): string {
  return `rulesets.${timestamp}.bundle.gz`;
}

export function deltaIndexFileName(timestamp: number): string {
  return `rulesets.${timestamp}.deltas.json`;
}

export function deltaIndexSignatureFileName(timestamp: number): string {
  return `rulesets.${timestamp}.deltas.sig`;
}

export function deltaFileName(from: number, timestamp: number): string {
  return `rulesets.${from}-${timestamp}.delta.gz`;
}

export function releaseFileName(timestamp: number): string {
  return `rulesets.${timestamp}.release.json`;
}

export function releaseSignatureFileName(timestamp: number): string {
  return `rulesets.${timestamp}.release.sig`;
}

export function keyCertificateFileName(version: number): string {
  return `key.${version}.json`;
}

export function keyCertificateSignatureFileName(version: number): string {
  return `key.${version}.sig`;
}

/** Joins a channel URL prefix and a file name with exactly one slash (the old extension produced `//`). */
export function channelFileUrl(urlPrefix: string, fileName: string): string {
  return urlPrefix.endsWith('/') ? urlPrefix + fileName : `${urlPrefix}/${fileName}`;
}
