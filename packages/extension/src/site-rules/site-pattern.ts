/**
 * Per-site entries ("disable on this site", "always allow HTTP"): an exact host with an optional
 * port (`example.com`, `example.com:8080`, `[::1]:8443`) or a left wildcard (`*.example.com`,
 * any depth of subdomain, not the bare domain). An entry without a port covers every port.
 */
export interface SitePattern {
  /** Normalised text as stored and shown. */
  text: string;
  wildcard: boolean;
  /** Host without port, lowercase ASCII (punycode); for wildcards the part after `*.`. */
  host: string;
  /** Port as written, or null for "any port". */
  port: string | null;
}

/** Parses and normalises an entry; null when it is not a host, host:port or `*.domain`. */
export function parseSitePattern(input: string): SitePattern | null {
  let text = input.trim().toLowerCase();
  if (text === '' || /[\s/?#@\\]/.test(text)) return null;
  const wildcard = text.startsWith('*.');
  if (wildcard) text = text.slice(2);
  if (text.includes('*')) return null;
  let url: URL;
  try {
    url = new URL(`http://${text}/`);
  } catch {
    return null;
  }
  // Trailing dots name the same host; "example.com." is stored as "example.com".
  const host = url.hostname.replace(/\.+$/, '');
  if (host === '' || host.includes('..')) return null;
  // The URL parser drops the default port 80; keep what the user typed so ":80" still means "only 80".
  const portMatch = /:(\d+)$/.exec(text);
  const port =
    url.port !== ''
      ? url.port
      : portMatch && !text.endsWith(']')
        ? String(Number(portMatch[1]))
        : null;
  if (wildcard && (host.startsWith('[') || /^[\d.]+$/.test(host) || !host.includes('.')))
    return null;
  const hostPart = wildcard ? `*.${host}` : host;
  return { text: port === null ? hostPart : `${hostPart}:${port}`, wildcard, host, port };
}

/** Host and port of a URL the way entries are compared (port empty for the scheme default). */
export function siteOf(url: string): { host: string; port: string; hostWithPort: string } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const host = u.hostname.replace(/\.+$/, '');
  return { host, port: u.port, hostWithPort: u.port === '' ? host : `${host}:${u.port}` };
}

export function patternMatches(pattern: SitePattern, host: string, port: string): boolean {
  if (pattern.port !== null && pattern.port !== port) return false;
  return pattern.wildcard ? host.endsWith(`.${pattern.host}`) : host === pattern.host;
}

/** A compiled list of entries for quick checks of many URLs. */
export class SiteList {
  private readonly exact = new Set<string>();
  private readonly patterns: SitePattern[] = [];

  constructor(entries: Iterable<string>) {
    for (const e of entries) {
      const p = parseSitePattern(e);
      if (p === null) continue;
      this.patterns.push(p);
      if (!p.wildcard) this.exact.add(p.text);
    }
  }

  /** The entry that covers the URL's site, or null. */
  matchUrl(url: string): string | null {
    const site = siteOf(url);
    return site === null ? null : this.matchHost(site.host, site.port);
  }

  matchHost(host: string, port: string): string | null {
    host = host.toLowerCase().replace(/\.+$/, '');
    if (this.exact.has(host)) return host;
    if (port !== '' && this.exact.has(`${host}:${port}`)) return `${host}:${port}`;
    for (const p of this.patterns) if (p.wildcard && patternMatches(p, host, port)) return p.text;
    return null;
  }

  get size(): number {
    return this.patterns.length;
  }
}

/** Adds an entry to a list (normalised, no duplicates); null when the entry is invalid. */
export function addSite(list: readonly string[], entry: string): string[] | null {
  const p = parseSitePattern(entry);
  if (p === null) return null;
  return list.includes(p.text) ? [...list] : [...list, p.text].sort();
}

export function removeSite(list: readonly string[], entry: string): string[] {
  const p = parseSitePattern(entry);
  const text = p === null ? entry : p.text;
  return list.filter((e) => e !== text);
}
