import { readCaFile } from '../net/ca-file.js';
import { rootCertificates } from 'node:tls';
import { trustedResolveNames } from '../net/outbound-policy.js';
import { lookupWithOverrides, parseResolveOptions } from './resolve-option.js';
import type { RequestSettings } from './single-request.js';

/**
 * Request settings from `--resolve HOST:IP`, `--ca FILE` and `--timeout` (shared by fetch-test
 * and links --verify), under the outbound policy: loopback, private and link-local addresses,
 * named, resolved or redirected to, are refused unless `allowPrivate` (--allow-private); the
 * user's own exact --resolve names are theirs to point anywhere.
 */
export function requestSettings(options: {
  resolve: readonly string[];
  caFiles: readonly string[];
  timeoutMs: number;
  maxBodyBytes: number;
  allowPrivate: boolean;
}): RequestSettings {
  const extraCa = options.caFiles.map(readCaFile);
  const overrides = parseResolveOptions(options.resolve);
  return {
    lookup: lookupWithOverrides(overrides),
    policy: { allowPrivate: options.allowPrivate, trustedNames: trustedResolveNames(overrides) },
    // An explicit `ca` replaces Node's roots, so keep them alongside the extra ones.
    ca: extraCa.length > 0 ? [...rootCertificates, ...extraCa] : undefined,
    timeoutMs: options.timeoutMs,
    maxBodyBytes: options.maxBodyBytes,
  };
}
