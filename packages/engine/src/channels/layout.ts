/**
 * File layout of a channel directory, as written by `httpsify publish` and read by clients.
 * Only `latest-timestamp` is mutable; the other files are immutable once published, so a
 * client that reads a timestamp always finds the matching pair of files.
 */
export const LATEST_TIMESTAMP_FILE = 'latest-timestamp';

export function bundleFileName(timestamp: number): string {
  return `rulesets.${timestamp}.bundle.gz`;
}

export function signatureFileName(timestamp: number): string {
  return `rulesets.${timestamp}.sig`;
}

/** Joins a channel URL prefix and a file name with exactly one slash (the old extension produced `//`). */
export function channelFileUrl(urlPrefix: string, fileName: string): string {
  return urlPrefix.endsWith('/') ? urlPrefix + fileName : `${urlPrefix}/${fileName}`;
}
