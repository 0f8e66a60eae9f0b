import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { lookupWithOverrides, parseResolveOptions } from './resolve-option.js';
import type { RequestSettings } from './single-request.js';

/** Request settings from `--resolve HOST:IP`, `--ca FILE` and `--timeout` (shared by fetch-test and links --verify). */
export function requestSettings(options: { resolve: readonly string[]; caFiles: readonly string[]; timeoutMs: number; maxBodyBytes: number }): RequestSettings {
  const extraCa = options.caFiles.map((file) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`--ca ${file}: cannot read: ${(err as Error).message}`);
    }
  });
  return {
    lookup: lookupWithOverrides(parseResolveOptions(options.resolve)),
    // An explicit `ca` replaces Node's roots, so keep them alongside the extra ones.
    ca: extraCa.length > 0 ? [...rootCertificates, ...extraCa] : undefined,
    timeoutMs: options.timeoutMs,
    maxBodyBytes: options.maxBodyBytes,
  };
}
