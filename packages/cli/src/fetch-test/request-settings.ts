import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { refuseLiteralAddress, refusingPrivateLookup } from './private-address.js';
import { lookupWithOverrides, parseResolveOptions } from './resolve-option.js';
import type { RequestSettings } from './single-request.js';

/**
 * Request settings from `--resolve HOST:IP`, `--ca FILE` and `--timeout` (shared by fetch-test
 * and links --verify). `refusePrivate` (links --verify without --allow-private) refuses loopback,
 * private and link-local addresses, named or resolved, except the user's own --resolve ones.
 */
export function requestSettings(options: {
  resolve: readonly string[];
  caFiles: readonly string[];
  timeoutMs: number;
  maxBodyBytes: number;
  refusePrivate?: boolean;
}): RequestSettings {
  const extraCa = options.caFiles.map((file) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`--ca ${file}: cannot read: ${(err as Error).message}`);
    }
  });
  const overrides = parseResolveOptions(options.resolve);
  const lookup = lookupWithOverrides(overrides);
  return {
    lookup: options.refusePrivate === true ? refusingPrivateLookup(lookup, new Set(overrides.keys())) : lookup,
    ...(options.refusePrivate === true ? { refuse: refuseLiteralAddress } : {}),
    // An explicit `ca` replaces Node's roots, so keep them alongside the extra ones.
    ca: extraCa.length > 0 ? [...rootCertificates, ...extraCa] : undefined,
    timeoutMs: options.timeoutMs,
    maxBodyBytes: options.maxBodyBytes,
  };
}
