import {
  isNonPublicAddress,
  policyLookup,
  refusedUrl,
  trustedResolveNames,
} from '../net/outbound-policy.js';
import type { LookupFunction } from './resolve-option.js';
import { RequestFailure } from './single-request.js';

// The outbound policy lives in net/outbound-policy.ts; these names stay for their old callers.

/** Whether `address` is loopback, private or otherwise not public (net/outbound-policy.ts). */
export const isPrivateAddress = isNonPublicAddress;

/** Why a URL whose host is an IP address may not be fetched, or null. Host names are judged at lookup. */
export function refuseLiteralAddress(url: URL): RequestFailure | null {
  const refused = refusedUrl(url, { allowPrivate: false });
  return refused === null ? null : new RequestFailure('not-public', refused.message);
}

/** `lookup` refusing names that resolve to a non-public address, except the names in `trusted`. */
export function refusingPrivateLookup(
  lookup: LookupFunction,
  trusted: ReadonlySet<string>,
): LookupFunction {
  return policyLookup(lookup, { allowPrivate: false, trustedNames: trusted });
}

export { trustedResolveNames };
