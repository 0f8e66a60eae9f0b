/**
 * A rewritten URL as its consumers will read it. Browsers and Node parse a URL with the WHATWG
 * parser, which treats some characters in the authority specially (`\` ends it, `@` splits off
 * credentials, tabs and newlines vanish, `%xx` decodes, numbers become IPv4 addresses), while
 * a human reviewing a signed rule, or a scope regex, reads the string. A destination is judged
 * only when both readings name the same scheme, host and port and no credentials; any other
 * URL is refused, whatever the characters involved.
 */
export interface DestinationReading {
  /** The WHATWG serialisation: what scopes are tested against. */
  href: string;
  /** Host name as parsed (lower case, no port). */
  hostname: string;
}

/** Scheme, then the authority up to the first character that ends it in a plain reading. */
const PLAIN = /^(https?):\/\/([^/?#]*)(?:[/?#].*)?$/s;
/** An authority made only of characters no parser reads differently: host-name characters and a port. */
const AUTHORITY = /^([A-Za-z0-9._-]+)(?::([0-9]{1,5}))?$/;
const DEFAULT_PORT: Readonly<Record<string, string>> = { http: '80', https: '443' };

/** The URL as both readings agree on it, or null when they differ or it does not parse. */
export function readDestination(url: string): DestinationReading | null {
  const plain = PLAIN.exec(url);
  if (plain === null) return null;
  const scheme = plain[1] as string;
  const authority = AUTHORITY.exec(plain[2] as string);
  if (authority === null) return null;
  const host = (authority[1] as string).toLowerCase();
  const port = authority[2];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== `${scheme}:` || parsed.username !== '' || parsed.password !== '')
    return null;
  const expected = port === undefined || port === DEFAULT_PORT[scheme] ? host : `${host}:${port}`;
  if (parsed.host !== expected) return null;
  return { href: parsed.href, hostname: parsed.hostname };
}
