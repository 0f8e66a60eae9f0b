import { BlockList, isIP, type Socket } from 'node:net';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from '../fetch-test/resolve-option.js';

/**
 * The one outbound-request policy of every command that fetches (sweep, fetch-test,
 * links --verify, update): which addresses may be connected to, and the shared bounds.
 *
 * A library, a document or a channel names the URLs; none of them may make us reach this
 * machine or its networks (SSRF). Loopback, private, link-local, CGNAT, unique-local, multicast,
 * unspecified and reserved addresses are refused unless the user passes `--allow-private`
 * (tests of a local web). The check runs on the addresses a connection is actually made to: in
 * the lookup hook that every connection goes through (so a name rebound to 127.0.0.1, or a
 * redirect to such a name, is refused at connect time), on literal addresses before connecting,
 * and once more on the socket's remote address when it connects.
 */

/** Bounds shared by the commands that fetch pages (per request, redirects followed by hand). */
export const OUTBOUND_LIMITS = {
  /** One deadline per request: DNS, connect, TLS, headers and body. */
  timeoutMs: 10_000,
  /** Bytes of a page read; the rest is not downloaded. */
  maxBodyBytes: 256 * 1024,
  /** Redirects followed per URL. */
  maxRedirects: 10,
} as const;

const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  NON_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 127], // unspecified and loopback
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const)
  NON_PUBLIC.addSubnet(net, bits, 'ipv6');

/** The 8 groups of an IPv6 address (an embedded dotted IPv4 tail included), or null. */
function ipv6Groups(ip: string): number[] | null {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const parts = (dotted[1] as string).split('.').map(Number);
    const hex = (a: number, b: number): string => ((a << 8) | b).toString(16);
    text = `${text.slice(0, dotted.index)}${hex(parts[0] ?? 0, parts[1] ?? 0)}:${hex(parts[2] ?? 0, parts[3] ?? 0)}`;
  }
  const [head, tail, extra] = text.split('::');
  if (extra !== undefined) return null;
  const h = head === '' || head === undefined ? [] : head.split(':');
  const t = tail === undefined ? [] : tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  const groups = [...h, ...Array<string>(Math.max(0, fill)).fill('0'), ...t].map((g) =>
    parseInt(g, 16),
  );
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : null;
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), or null. */
function embeddedIpv4(ip: string): string | null {
  const g = ipv6Groups(ip);
  if (g === null) return null;
  const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated).
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return v4(g[6] as number, g[7] as number);
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6] as number, g[7] as number);
  // 64:ff9b::a.b.c.d and 64:ff9b:1::/48 (NAT64).
  if (g[0] === 0x64 && g[1] === 0xff9b) return v4(g[6] as number, g[7] as number);
  // 2002:AABB:CCDD::/48 (6to4).
  if (g[0] === 0x2002) return v4(g[1] as number, g[2] as number);
  return null;
}

/**
 * Whether `address` (IPv4 or IPv6, with or without brackets) is anything but a public unicast
 * address: loopback, private, link-local, CGNAT, unique-local, multicast, unspecified,
 * reserved or documentation ranges, and IPv6 forms that carry such an IPv4 address.
 */
export function isNonPublicAddress(address: string): boolean {
  const ip = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 4) return NON_PUBLIC.check(ip, 'ipv4');
  if (family !== 6) return false;
  if (NON_PUBLIC.check(ip, 'ipv6')) return true;
  const inner = embeddedIpv4(ip);
  return inner !== null && (inner === '0.0.0.0' || NON_PUBLIC.check(inner, 'ipv4'));
}

/** Who may be reached: everything public, plus non-public addresses only when allowed. */
export interface OutboundPolicy {
  /** `--allow-private`: also loopback, private and the rest (tests of a local web). */
  allowPrivate: boolean;
  /** Names the user mapped to an address themselves (`--resolve HOST:IP`, exact names only). */
  trustedNames?: ReadonlySet<string>;
}

/** The error a refused connection fails with: code ERR_HTTPSIFY_NOT_PUBLIC. */
export class NotPublicError extends Error {
  readonly code = 'ERR_HTTPSIFY_NOT_PUBLIC';

  constructor(host: string, address: string) {
    super(
      address === host
        ? `refused: ${host} is a loopback, private or link-local address (--allow-private fetches it)`
        : `refused: ${host} resolves to ${address}, a loopback, private or link-local address (--allow-private fetches it)`,
    );
  }
}

/** `localhost` and names below it are this machine whatever a resolver says (RFC 6761). */
const isLocalhostName = (host: string): boolean => /(^|\.)localhost$/.test(nameKey(host));

const bare = (host: string): string => host.replace(/^\[(.*)\]$/, '$1');
const nameKey = (host: string): string => host.toLowerCase().replace(/\.+$/, '');

/** Why `url` (as the WHATWG parser reads it) may not be fetched at all, or null. */
export function refusedUrl(url: URL, policy: OutboundPolicy): NotPublicError | null {
  if (policy.allowPrivate) return null;
  const host = bare(url.hostname);
  if (isLocalhostName(host)) return new NotPublicError(url.hostname, '127.0.0.1');
  if (isIP(host) !== 0)
    return isNonPublicAddress(host) ? new NotPublicError(url.hostname, host) : null;
  return null;
}

/**
 * `lookup` under the policy: a name is refused when any address it resolves to is not public
 * (all of them are checked, so a mix of public and private answers cannot slip through; Node
 * may try each of them). Every connection resolves through this hook, so a cached answer, a
 * rebound name or a redirect's new host is judged on the address about to be connected to.
 */
export function policyLookup(lookup: LookupFunction, policy: OutboundPolicy): LookupFunction {
  if (policy.allowPrivate) return lookup;
  return (hostname, options, callback) => {
    const literal = bare(hostname);
    if (isIP(literal) !== 0) {
      if (isNonPublicAddress(literal))
        return void process.nextTick(() =>
          callback(new NotPublicError(hostname, literal) as never, ''),
        );
      return void lookup(hostname, options, callback);
    }
    const trusted = policy.trustedNames?.has(nameKey(hostname)) === true;
    if (!trusted && isLocalhostName(hostname))
      return void process.nextTick(() =>
        callback(new NotPublicError(hostname, '127.0.0.1') as never, ''),
      );
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err !== null) return void callback(err, '');
      const list = (
        Array.isArray(addresses)
          ? addresses
          : [{ address: String(addresses), family: isIP(String(addresses)) }]
      ) as LookupAddress[];
      const bad = trusted ? undefined : list.find((a) => isNonPublicAddress(a.address));
      if (bad !== undefined)
        return void callback(new NotPublicError(hostname, bad.address) as never, '');
      if (options.all === true) return void callback(null, list);
      const first = list[0];
      if (first === undefined)
        return void callback(
          Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }),
          '',
        );
      callback(null, first.address, first.family);
    });
  };
}

/**
 * A last check on a socket once it connects: its remote address must be allowed. The lookup
 * hook and the literal check refuse before any packet is sent; this catches any path that
 * skipped them. `host` is the name asked for (trusted names are not judged).
 */
export function guardSocket(socket: Socket, host: string, policy: OutboundPolicy): void {
  if (policy.allowPrivate || policy.trustedNames?.has(nameKey(host)) === true) return;
  const check = (): void => {
    const remote = socket.remoteAddress;
    if (remote !== undefined && isNonPublicAddress(remote))
      socket.destroy(new NotPublicError(host, remote));
  };
  if (socket.remoteAddress !== undefined) check();
  else socket.once('connect', check);
}

/** Exact names of `--resolve HOST:IP` values: the user chose their address. Wildcards are not. */
export function trustedResolveNames(map: ReadonlyMap<string, string>): Set<string> {
  return new Set([...map.keys()].filter((k) => !k.includes('*')).map(nameKey));
}
