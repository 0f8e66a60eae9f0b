import { parse } from 'tldts';

/**
 * The list's source. tldts is pinned to an exact version in package.json on purpose: findings
 * must not drift with the list (docs/writing-rulesets.md); lint.test.ts fails when the installed
 * version and this line disagree.
 */
export const PSL_SNAPSHOT = { source: 'npm tldts@7.5.4' } as const;

export type SuffixSection = 'icann' | 'private';

export interface PublicSuffixMatch {
  /** The public suffix of the host (e.g. `co.uk` for `www.example.co.uk`). */
  suffix: string;
  /** Which section of the list the deciding rule sits in; null when only the implicit `*` rule applied. */
  section: SuffixSection | null;
}

/** Host names only: the callers pass lower-case ASCII (punycode) names, never URLs or IPs. */
const HOST_ONLY = {
  extractHostname: false,
  validateHostname: false,
  detectIp: false,
  mixedInputs: false,
} as const;

/**
 * The public suffix of a lower-case ASCII host name by the PSL algorithm (exception rules win,
 * then the rule with the most labels, else the implicit `*` rule). With `privateDomains: false`
 * only the ICANN section counts, as registrars see it.
 */
export function publicSuffix(
  host: string,
  options: { privateDomains?: boolean } = {},
): PublicSuffixMatch {
  const result = parse(host, { ...HOST_ONLY, allowPrivateDomains: options.privateDomains ?? true });
  const section = result.isPrivate === true ? 'private' : result.isIcann === true ? 'icann' : null;
  return { suffix: result.publicSuffix ?? host.slice(host.lastIndexOf('.') + 1), section };
}

/** The registrable domain (public suffix plus one label), or null when the host is itself a suffix. */
export function registrableDomain(
  host: string,
  options: { privateDomains?: boolean } = {},
): string | null {
  const { suffix } = publicSuffix(host, options);
  if (suffix === host) return null;
  const rest = host.slice(0, host.length - suffix.length - 1);
  const label = rest.slice(rest.lastIndexOf('.') + 1);
  return `${label}.${suffix}`;
}

/**
 * The section whose rules make `host` a public suffix on its own (e.g. `co.uk`, `github.io`), or
 * null. A single label that only the implicit `*` rule covers is not reported here.
 */
export function bareSuffixSection(host: string): SuffixSection | null {
  const icann = publicSuffix(host, { privateDomains: false });
  if (icann.suffix === host && icann.section !== null) return 'icann';
  const any = publicSuffix(host);
  if (any.suffix === host && any.section !== null) return any.section;
  return null;
}
