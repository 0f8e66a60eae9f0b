/**
 * Hosts HTTPS-first never tries to upgrade: the table in local-names.ts, read as code (its DNR
 * reading is dnr/local-name-rules.ts). HTTPS Everywhere missed IPv6, 169.254/16 and 100.64/10
 * (a known bug of the old extension).
 */
import {
  blockRange,
  LOCAL_DOMAINS,
  LOCAL_IPV4,
  LOCAL_IPV6_EXACT,
  LOCAL_IPV6_FIRST_HEXTET,
  SINGLE_LABEL_IS_LOCAL,
} from './local-names.js';

export function isHttpsFirstExempt(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.+$/, '');
  if (host === '') return true;
  if (host.startsWith('[') || host.includes(':')) return isLocalIpv6(host.replace(/^\[|\]$/g, ''));
  const v4 = parseIpv4(host);
  if (v4 !== null) return isLocalIpv4(v4);
  if (LOCAL_DOMAINS.some((d) => host === d || host.endsWith(`.${d}`))) return true;
  return SINGLE_LABEL_IS_LOCAL && !host.includes('.');
}

/** Dotted-quad IPv4 to a 32-bit number, or null. */
export function parseIpv4(host: string): number | null {
  const parts = host.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    n = n * 256 + v;
  }
  return n;
}

const inBlock = (value: number, base: number, bits: number, width: number): boolean => {
  const [lo, hi] = blockRange(base, bits, width);
  return value >= lo && value <= hi;
};

export function isLocalIpv4(addr: number): boolean {
  return LOCAL_IPV4.some(([base, bits]) => inBlock(addr, base, bits, 32));
}

/** The table's IPv6 entries, and IPv4-mapped addresses of its IPv4 blocks. */
export function isLocalIpv6(addr: string): boolean {
  const a = addr.toLowerCase().split('%')[0] ?? '';
  if (LOCAL_IPV6_EXACT.includes(a)) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) {
    const v4 = parseIpv4(mapped[1] as string);
    return v4 !== null && isLocalIpv4(v4);
  }
  // The URL parser writes mapped addresses in hex: ::ffff:c0a8:1.
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (hexMapped)
    return isLocalIpv4(
      parseInt(hexMapped[1] as string, 16) * 65536 + parseInt(hexMapped[2] as string, 16),
    );
  // The first group as written; `::` first means 0.
  const head = a.split(':')[0] ?? '';
  if (!/^[0-9a-f]{0,4}$/.test(head)) return false;
  const first = head === '' ? 0 : parseInt(head, 16);
  return LOCAL_IPV6_FIRST_HEXTET.some(([base, bits]) => inBlock(first, base, bits, 16));
}
