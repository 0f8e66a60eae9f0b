/**
 * The HTTP allowlist in the syntax of Chrome's `HttpAllowlist` enterprise policy, so admins can
 * move one list between the browser and httpsify: a JSON array of canonical host names, each
 * optionally prefixed with `[*.]` (the host and every subdomain). Blanket wildcards (`*`,
 * `[*]`) are refused, as the policy refuses them; ports do not exist in its syntax.
 */
import { parseSitePattern } from './site-pattern.js';

export interface PolicyImport {
  /** Our entries (`[*.]x` becomes `x` and `*.x`), normalised, without duplicates. */
  entries: string[];
  /** One line per refused item: its position and why. */
  problems: string[];
}

export function parseHttpAllowlistPolicy(text: string): PolicyImport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { entries: [], problems: [`not JSON: ${e instanceof Error ? e.message : String(e)}`] };
  }
  if (!Array.isArray(value))
    return {
      entries: [],
      problems: [
        'not a JSON array of host names (the policy takes ["example.com", "[*.]example.org"])',
      ],
    };
  const entries: string[] = [];
  const problems: string[] = [];
  const add = (e: string) => {
    if (!entries.includes(e)) entries.push(e);
  };
  value.forEach((item, i) => {
    const where = `item ${i + 1}`;
    if (typeof item !== 'string') return void problems.push(`${where}: not a string`);
    const raw = item.trim();
    if (raw === '*' || raw === '[*]' || raw === '[*.]')
      return void problems.push(
        `${where}: "${raw}" would allow HTTP everywhere; turn the protection off instead`,
      );
    const subdomains = raw.startsWith('[*.]');
    const host = subdomains ? raw.slice(4) : raw;
    const exact = parseSitePattern(host);
    if (exact === null || exact.wildcard || exact.port !== null)
      return void problems.push(`${where}: "${raw}" is not a host name or [*.]host name`);
    add(exact.text);
    if (subdomains) {
      const wild = parseSitePattern(`*.${exact.text}`);
      if (wild === null)
        return void problems.push(`${where}: "${raw}": subdomains of an address cannot be listed`);
      add(wild.text);
    }
  });
  return { entries: entries.sort(), problems };
}

export interface PolicyExport {
  /** The JSON text to hand to the policy. */
  json: string;
  /** Entries the policy syntax cannot say exactly, and what was written instead. */
  notes: string[];
}

export function exportHttpAllowlistPolicy(entries: readonly string[]): PolicyExport {
  const notes: string[] = [];
  const hosts = new Set<string>();
  const wild = new Set<string>();
  for (const e of entries) {
    const p = parseSitePattern(e);
    if (p === null) continue;
    if (p.port !== null) notes.push(`${p.text}: the policy has no ports; written for every port`);
    (p.wildcard ? wild : hosts).add(p.host);
  }
  const out: string[] = [];
  for (const h of wild) {
    if (!hosts.has(h))
      notes.push(
        `*.${h}: the policy cannot leave out ${h} itself; written as [*.]${h}, which includes it`,
      );
    out.push(`[*.]${h}`);
  }
  for (const h of hosts) if (!wild.has(h)) out.push(h);
  out.sort((a, b) => a.replace('[*.]', '').localeCompare(b.replace('[*.]', '')));
  return { json: JSON.stringify(out, null, 2), notes };
}
