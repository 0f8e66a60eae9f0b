/**
 * The one table of names and addresses that only exist locally, where no certificate can be had:
 * HTTPS-first leaves them on HTTP. Both readings are generated from it: the code check decide()
 * asks (exempt.ts) and Chromium's `allow` rules (dnr/local-name-rules.ts); a property test
 * (test/local-names.test.ts) holds them equal on generated hosts. Browsers exempt the same set
 * (Chrome's "Always use secure connections", Firefox's `upgrade_local` / `upgrade_onion`).
 */

/** Special-use domains: the name itself and every name under it. */
export const LOCAL_DOMAINS: readonly string[] = [
  'localhost',
  'onion',
  'local',
  'internal',
  'home.arpa',
];

/** IPv4 blocks, as base address and prefix length. */
export const LOCAL_IPV4: readonly (readonly [base: number, bits: number])[] = [
  [0x00000000, 8], // 0.0.0.0/8 "this network"
  [0x0a000000, 8], // 10/8
  [0x64400000, 10], // 100.64/10 carrier-grade NAT
  [0x7f000000, 8], // 127/8 loopback
  [0xa9fe0000, 16], // 169.254/16 link-local
  [0xac100000, 12], // 172.16/12
  [0xc0a80000, 16], // 192.168/16
];

/**
 * IPv6: exact addresses (`::` unspecified, `::1` loopback) and blocks by their first 16 bits
 * (fc00::/7 unique-local, fe80::/10 link-local). IPv4-mapped addresses (::ffff:0:0/96) are
 * local when the IPv4 address is.
 */
export const LOCAL_IPV6_EXACT: readonly string[] = ['::', '::1'];
export const LOCAL_IPV6_FIRST_HEXTET: readonly (readonly [base: number, bits: number])[] = [
  [0xfc00, 7],
  [0xfe80, 10],
];

/** Single-label names ("intranet", "printer") resolve through local search domains. */
export const SINGLE_LABEL_IS_LOCAL = true;

/** The inclusive range of numbers a block of `width` bits covers. */
export function blockRange(base: number, bits: number, width: number): [number, number] {
  const size = 2 ** (width - bits);
  const lo = Math.floor(base / size) * size;
  return [lo, lo + size - 1];
}
