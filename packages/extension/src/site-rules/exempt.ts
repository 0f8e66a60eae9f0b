/**
 * Hosts HTTPS-first never tries to upgrade: names that only exist locally, where a certificate
 * cannot be had (loopback, private and link-local addresses, `.onion`, single-label intranet
 * names). Browsers exempt the same set (Chrome's "Always use secure connections" default,
 * Firefox's `upgrade_local` / `upgrade_onion`); HTTPS Everywhere missed IPv6, 169.254/16 and
 * 100.64/10 (a known bug of the old extension).
 */
export function isHttpsFirstExempt(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.+$/, '');
  if (host === '') return true;
  if (host.startsWith('[') || host.includes(':')) return isLocalIpv6(host.replace(/^\[|\]$/g, ''));
  const v4 = parseIpv4(host);
  if (v4 !== null) return isLocalIpv4(v4);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host.endsWith('.onion') || host === 'onion') return true;
  if (host.endsWith('.local') || host.endsWith('.internal') || host.endsWith('.home.arpa')) return true;
  // Single-label names ("intranet", "printer") resolve through local search domains.
  return !host.includes('.');
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

const V4_LOCAL: [number, number][] = [
  [0x00000000, 8], // 0.0.0.0/8 "this network"
  [0x0a000000, 8], // 10/8
  [0x64400000, 10], // 100.64/10 carrier-grade NAT
  [0x7f000000, 8], // 127/8 loopback
  [0xa9fe0000, 16], // 169.254/16 link-local
  [0xac100000, 12], // 172.16/12
  [0xc0a80000, 16], // 192.168/16
];

export function isLocalIpv4(addr: number): boolean {
  return V4_LOCAL.some(([base, bits]) => Math.floor(addr / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
}

/** Loopback, unspecified, unique-local (fc00::/7), link-local (fe80::/10), v4-mapped local. */
export function isLocalIpv6(addr: string): boolean {
  const a = addr.toLowerCase().split('%')[0] ?? '';
  if (a === '::1' || a === '::') return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) {
    const v4 = parseIpv4(mapped[1] as string);
    return v4 !== null && isLocalIpv4(v4);
  }
  // The URL parser writes mapped addresses in hex: ::ffff:c0a8:1.
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (hexMapped) return isLocalIpv4(parseInt(hexMapped[1] as string, 16) * 65536 + parseInt(hexMapped[2] as string, 16));
  const first = parseInt(a.split(':')[0] || '0', 16);
  if (Number.isNaN(first)) return false;
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80;
}
