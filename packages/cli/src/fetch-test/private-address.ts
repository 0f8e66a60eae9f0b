import { BlockList, isIP } from 'node:net';
import type { LookupFunction } from './resolve-option.js';
import { RequestFailure } from './single-request.js';

/**
 * Addresses a document's link must not make us fetch (lychee's `--exclude-private` covers the
 * same ground): this host, private networks, link-local and unique-local ones, and other
 * non-public ranges. IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) match their IPv4 ranges.
 */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 127], // unspecified and loopback
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv6');

/** Whether `address` (an IP address, IPv6 with or without brackets) is loopback, private or otherwise not public. */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(ip);
  if (family === 0) return false;
  return PRIVATE.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

const refusal = (host: string, address: string): RequestFailure =>
  new RequestFailure(
    'connect',
    address === host
      ? `refused: ${host} is a loopback, private or link-local address (--allow-private fetches it)`
      : `refused: ${host} resolves to ${address}, a loopback, private or link-local address (--allow-private fetches it)`,
  );

/** Why a URL whose host is an IP address may not be fetched, or null. Host names are judged at lookup. */
export function refuseLiteralAddress(url: URL): RequestFailure | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) !== 0 && isPrivateAddress(host) ? refusal(url.hostname, host) : null;
}

/**
 * `lookup`, refusing a host name when any address it resolves to is private: checked on the
 * resolved addresses, so a public-looking name that points at 127.0.0.1 (or is rebound to it)
 * is refused too, and all of them, so a mix of public and private answers cannot slip through.
 * Names in `trusted` (the user's own `--resolve` mappings) are not judged.
 */
export function refusingPrivateLookup(lookup: LookupFunction, trusted: ReadonlySet<string>): LookupFunction {
  return (hostname, options, callback) => {
    if (trusted.has(hostname.toLowerCase().replace(/\.$/, ''))) {
      lookup(hostname, options, callback);
      return;
    }
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err !== null) {
        callback(err, '');
        return;
      }
      const list = addresses as { address: string; family: number }[];
      const bad = list.find((a) => isPrivateAddress(a.address));
      if (bad !== undefined) {
        callback(refusal(hostname, bad.address) as unknown as NodeJS.ErrnoException, '');
        return;
      }
      if (options.all === true) callback(null, list);
      else if (list[0] === undefined) callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      else callback(null, list[0].address, list[0].family);
    });
  };
}
