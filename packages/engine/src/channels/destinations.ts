import type { Engine } from '../match/engine.js';
import { ChannelError } from './errors.js';
import { compileScope } from './scope.js';

/**
 * Where a channel's rules may send a URL: inside its scope, or to a host of its signed
 * destination list. Scope alone limits which URLs a channel rewrites, not where they go: a
 * bundle scoped to example.org could otherwise send `http://www.example.org/login` to
 * `https://attacker.example/`.
 */
export interface DestinationPolicy {
  /** Whether a rewritten URL may be used. */
  allows(url: string): boolean;
}

const HOST = /^(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** Checks one entry of `destinations`: a lower-case host name, optionally `*.` for its subdomains. */
export function parseDestinationHost(value: unknown): string {
  if (typeof value !== 'string' || !HOST.test(value)) {
    throw new ChannelError('invalid-definition', `${JSON.stringify(value)} is not a host name such as "cdn.example.net" or "*.example.net" (lower case, ASCII/punycode)`);
  }
  return value;
}

function hostMatches(host: string, pattern: string): boolean {
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return host === pattern;
}

/**
 * A destination is allowed when the scope matches it, or matches it as an `http:` URL (a scope
 * written for `http://` URLs still owns their `https://` form), or when its host is listed.
 */
export function destinationPolicy(scope: string, destinations: readonly string[]): DestinationPolicy {
  const regex = compileScope(scope);
  return {
    allows(url: string): boolean {
      if (regex === null) return true;
      if (regex.test(url) || regex.test(url.replace(/^https:/, 'http:'))) return true;
      if (destinations.length === 0) return false;
      let host: string;
      try {
        const parsed = new URL(url);
        if (parsed.username !== '' || parsed.password !== '') return false;
        host = parsed.hostname;
      } catch {
        return false;
      }
      return destinations.some((d) => hostMatches(host, d));
    },
  };
}

/** What a rule's `to` says about where it sends URLs. */
export type RuleDestination =
  /** Only the scheme changes (`^http:` → `https:`): the URL stays where the scope let it in. */
  | { kind: 'same-url' }
  /** Scheme and host are literal: `url` is the `to` up to its first `$` group. */
  | { kind: 'literal'; url: string }
  /** The host comes from the matched URL (`https://$1.example.org/`): known only when rewriting. */
  | { kind: 'computed' };

export function ruleDestination(to: string): RuleDestination {
  if (/^https?:$/.test(to)) return { kind: 'same-url' };
  const m = /^(https?):\/\/([^/?#]*)(.*)$/s.exec(to);
  if (m === null) return { kind: 'computed' };
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  if (authority.includes('$') || authority === '') return { kind: 'computed' };
  const dollar = rest.indexOf('$');
  const path = dollar === -1 ? rest : rest.slice(0, dollar);
  return { kind: 'literal', url: `${scheme}://${authority}${path.startsWith('/') ? path : `/${path}`}` };
}

export interface DestinationFinding {
  ruleset: string;
  from: string;
  to: string;
}

/**
 * Install-time check of every rule of a signed bundle. A rule whose literal destination lies
 * outside the scope and the destination list refuses the whole release (see
 * docs/update-channels.md, "Destinations": the signer tried to send users elsewhere, which is a
 * stolen key or a publishing mistake, and either way the previous rules are the safe state).
 * Rules whose host is computed from the URL are returned: they are checked on every rewrite
 * (engine clients) or left out (Chromium, which cannot check a redirect it does not see).
 */
export function checkBundleDestinations(engine: Engine, policy: DestinationPolicy): { computed: DestinationFinding[] } {
  const computed: DestinationFinding[] = [];
  for (let id = 0; id < engine.rulesetCount; id++) {
    const ruleset = engine.ruleset(id);
    for (const rule of ruleset.rules) {
      const dest = ruleDestination(rule.to);
      if (dest.kind === 'computed') computed.push({ ruleset: ruleset.name, from: rule.from, to: rule.to });
      else if (dest.kind === 'literal' && !policy.allows(dest.url)) {
        throw new ChannelError(
          'destination-outside-scope',
          `ruleset "${ruleset.name}" sends URLs to ${dest.url}, outside the channel's scope and destination list (rule ${rule.from} → ${rule.to}); the release is refused`,
        );
      }
    }
  }
  return { computed };
}
