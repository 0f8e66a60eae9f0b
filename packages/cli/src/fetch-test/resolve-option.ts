import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';

/** The `lookup` function signature node:net accepts (one address, or all of them when asked). */
export type LookupFunction = (
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: (
    err: NodeJS.ErrnoException | null,
    address: string | LookupAddress[],
    family?: number,
  ) => void,
) => void;

/**
 * Parses repeatable `--resolve HOST:IP` values (like curl's, without the port) into a map from
 * lower-case host name to address. The first colon splits, so IPv6 addresses work unbracketed.
 */
export function parseResolveOptions(values: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const value of values) {
    const colon = value.indexOf(':');
    const host = colon < 0 ? '' : value.slice(0, colon).toLowerCase().replace(/\.$/, '');
    const address = colon < 0 ? '' : value.slice(colon + 1).replace(/^\[(.*)\]$/, '$1');
    if (host === '' || isIP(address) === 0)
      throw new Error(
        `--resolve ${JSON.stringify(value)}: expected HOST:IP, e.g. example.com:127.0.0.1`,
      );
    map.set(host, address);
  }
  return map;
}

/** A lookup that answers mapped names from `map` and everything else from the system resolver. */
export function lookupWithOverrides(map: ReadonlyMap<string, string>): LookupFunction {
  return (hostname, options, callback) => {
    const address = map.get(hostname.toLowerCase().replace(/\.$/, ''));
    if (address === undefined) {
      dnsLookup(
        hostname,
        { all: options.all === true, family: Number(options.family ?? 0) as 0 | 4 | 6 },
        callback as never,
      );
      return;
    }
    const family = isIP(address);
    // Answer asynchronously, as dns.lookup does: net sets up its handlers after calling lookup.
    process.nextTick(() => {
      // Node asks for all addresses when it races IPv4 and IPv6 (autoSelectFamily).
      if (options.all === true) callback(null, [{ address, family }]);
      else callback(null, address, family);
    });
  };
}
