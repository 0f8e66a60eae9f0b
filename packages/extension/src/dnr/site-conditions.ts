/**
 * Conditions that match requests to exactly the hosts of site entries, keyed by the request's
 * own authority, never by a substring: a host named in the credentials, path, query or fragment
 * of a URL to another host does not satisfy them (issue 37). Entries are grouped so a list costs
 * a few regex rules, not one per entry:
 * - names: `requestDomains` (the host or a subdomain, Chromium ignoring trailing dots) with a
 *   regex fixing how many labels the host has, so `requestDomains: ["a.test"]` plus "exactly two
 *   labels" is `a.test` alone and "three labels or more" is `*.a.test`; the regex is anchored at
 *   the scheme, skips credentials and ends the host at the port or the path;
 * - IP literals (no subdomains): one anchored regex of the exact address per entry.
 * An entry with a port matches that port only, as decide() reads it (the scheme's default port
 * never appears in a URL, so `a.test:80` matches no http:// URL there either).
 */
import type { DnrCondition } from '@httpsify/engine/dnr';
import { parseSitePattern } from '../site-rules/site-pattern.js';

/** Scheme(s), then any credentials (everything up to the authority's last `@`). */
const START = { http: '^http://(?:[^/?#]*@)?', any: '^https?://(?:[^/?#]*@)?' } as const;
/** One label of a canonical host name (no dot, no port, no credentials, no brackets). */
const LABEL = '[^./:@[\\]]+';
const ANY_PORT = '(?::[0-9]+)?';

const escape = (s: string): string => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
const isIp = (host: string): boolean => host.startsWith('[') || /^[0-9.]+$/.test(host);

export type Schemes = keyof typeof START;

/**
 * Conditions (without resource types) matching requests to the entries' hosts and ports. Invalid
 * entries are left out (the settings door already refuses them).
 */
export function siteEntryConditions(entries: readonly string[], schemes: Schemes): DnrCondition[] {
  const groups = new Map<string, { regexFilter: string; domains: Set<string> }>();
  const ips: DnrCondition[] = [];
  for (const entry of entries) {
    const p = parseSitePattern(entry);
    if (p === null) continue;
    const port = p.port === null ? ANY_PORT : `:${p.port}`;
    if (isIp(p.host)) {
      ips.push({ regexFilter: `${START[schemes]}${escape(p.host)}${port}/` });
      continue;
    }
    const labels = p.host.split('.').length;
    // Exactly the entry's labels, or (a wildcard) at least one more; trailing dots name the same host.
    const more = p.wildcard
      ? `(?:\\.${LABEL}){${labels},}`
      : labels > 1
        ? `(?:\\.${LABEL}){${labels - 1}}`
        : '';
    const regexFilter = `${START[schemes]}${LABEL}${more}\\.*${port}/`;
    const group = groups.get(regexFilter) ?? { regexFilter, domains: new Set<string>() };
    group.domains.add(p.host);
    groups.set(regexFilter, group);
  }
  const named = [...groups.values()]
    .sort((a, b) => (a.regexFilter < b.regexFilter ? -1 : a.regexFilter > b.regexFilter ? 1 : 0))
    .map((g): DnrCondition => ({
      regexFilter: g.regexFilter,
      requestDomains: [...g.domains].sort(),
    }));
  return [...named, ...ips];
}
