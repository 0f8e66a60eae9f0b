import type { Engine } from '../match/engine.js';
import { readDestination } from './destination-reading.js';
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
    throw new ChannelError(
      'invalid-definition',
      `${JSON.stringify(value)} is not a host name such as "cdn.example.net" or "*.example.net" (lower case, ASCII/punycode)`,
    );
  }
  return value;
}

function hostMatches(host: string, pattern: string): boolean {
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return host === pattern;
}

/**
 * A destination is allowed when both readings of it agree (readDestination) and the scope
 * matches its WHATWG serialisation, or matches it as an `http:` URL (a scope written for
 * `http://` URLs still owns their `https://` form), or when its parsed host is listed. Scopes
 * are tested on the parsed URL, not on the string, so `https://attacker.example\.example.org/`
 * is judged as the `https://attacker.example/` that browsers and Node will load.
 */
export function destinationPolicy(scope: string, destinations: readonly string[]): DestinationPolicy {
  const regex = compileScope(scope);
  return {
    allows(url: string): boolean {
      const read = readDestination(url);
      if (read === null) return false;
      if (regex === null) return true;
      if (regex.test(read.href) || regex.test(read.href.replace(/^https:/, 'http:'))) return true;
      return destinations.some((d) => hostMatches(read.hostname, d));
    },
  };
}

/** What a rule's `to` says about where it sends URLs. */
export type RuleDestination =
  /** Only the scheme changes (`^http:` → `https:`): the URL stays where the scope let it in. */
  | { kind: 'same-url' }
  /**
   * Scheme and host are known: literal, or from groups of `from` that are alternations of
   * literals (`(www\.)?`, `(com|net)`). Each URL is the `to` up to its first `$` in the path.
   */
  | { kind: 'literal'; urls: string[] }
  /** The host is some subdomain of `of` (`https://$1.example.org/` with `([a-z0-9-]+)`): known as a domain only. */
  | { kind: 'subdomain'; of: string }
  /** The host comes from the matched URL in a way not analysed: known only when rewriting. */
  | { kind: 'computed' };

/** Most combinations of alternatives expanded for one rule; beyond, the host counts as computed. */
const MAX_EXPANSIONS = 64;

/**
 * The capture groups of a regex source, in order: their source, and whether they may not take
 * part in a match (then `$n` is replaced by nothing): a `?`, `*` or `{0,…}` on the group or on an
 * enclosing one, an alternation beside it, or a negative lookaround around it. Escapes and
 * character classes are skipped so their parentheses do not count.
 */
function captureGroups(source: string): { body: string; optional: boolean }[] {
  interface Group {
    start: number;
    end: number;
    capture: number;
    optional: boolean;
    parent: number;
    /** Contains a `|` directly. */
    branches: boolean;
  }
  const all: Group[] = [];
  const stack: number[] = [];
  let captures = 0;
  let topBranches = false;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '|') {
      const top = stack[stack.length - 1];
      if (top === undefined) topBranches = true;
      else (all[top] as Group).branches = true;
    } else if (c === '(') {
      const capturing = source[i + 1] !== '?';
      const negative = source.startsWith('(?!', i) || source.startsWith('(?<!', i);
      all.push({ start: i + 1, end: -1, capture: capturing ? captures++ : -1, optional: negative, parent: stack[stack.length - 1] ?? -1, branches: false });
      stack.push(all.length - 1);
    } else if (c === ')') {
      const g = all[stack.pop() ?? -1];
      if (g === undefined) continue;
      g.end = i;
      const q = source.slice(i + 1, i + 4);
      if (q.startsWith('?') || q.startsWith('*') || /^\{0[,}]/.test(q)) g.optional = true;
    }
  }
  const out: { body: string; optional: boolean }[] = [];
  for (const g of all) {
    if (g.capture < 0) continue;
    let optional = g.optional || topBranches;
    for (let p = g.parent; p !== -1 && !optional; p = (all[p] as Group).parent) optional = (all[p] as Group).optional || (all[p] as Group).branches;
    out[g.capture] = { body: source.slice(g.start, g.end < 0 ? source.length : g.end), optional };
  }
  return out;
}

const LITERAL_ALTERNATIVES = /^(?:\\\.|[A-Za-z0-9-])+(?:\|(?:\\\.|[A-Za-z0-9-])+)*$/;
/** Groups that can only match host-name characters: a class of [a-z0-9._-] or \w / \d, repeated. */
const LABEL_GROUP = /^(?:\[(?:[a-z]-[a-z]|[A-Z]-[A-Z]|[0-9]-[0-9]|\\[wd.-]|[a-zA-Z0-9_.-])+\]|\\w|\\d)[+*]?$/;

function alternatives(group: { body: string; optional: boolean } | undefined): string[] | null {
  if (group === undefined || !LITERAL_ALTERNATIVES.test(group.body)) return null;
  const alts = group.body.split('|').map((a) => a.replace(/\\\./g, '.'));
  return group.optional ? ['', ...alts] : alts;
}

export function ruleDestination(to: string, from = ''): RuleDestination {
  if (/^https?:$/.test(to)) return { kind: 'same-url' };
  const m = /^(https?):\/\/([^/?#]*)(.*)$/s.exec(to);
  if (m === null) return { kind: 'computed' };
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const dollar = rest.indexOf('$');
  const path = dollar === -1 ? rest : rest.slice(0, dollar);
  const url = (host: string): string => `${scheme}://${host}${path.startsWith('/') ? path : `/${path}`}`;
  if (authority === '') return { kind: 'computed' };
  if (!authority.includes('$')) return { kind: 'literal', urls: [url(authority)] };
  const groups = captureGroups(from);
  // Expand $n from groups that are alternations of literals.
  let hosts = [''];
  const parts = authority.split(/(\$[0-9])/);
  let finite = true;
  for (const part of parts) {
    if (/^\$[0-9]$/.test(part)) {
      const alts = alternatives(groups[Number(part[1]) - 1]);
      if (alts === null || hosts.length * alts.length > MAX_EXPANSIONS) {
        finite = false;
        break;
      }
      hosts = hosts.flatMap((h) => alts.map((a) => h + a));
    } else if (part.includes('$')) {
      return { kind: 'computed' };
    } else hosts = hosts.map((h) => h + part);
  }
  if (finite) return { kind: 'literal', urls: hosts.map(url) };
  // `$n.example.org` with a group of host-name characters: some subdomain of example.org.
  const sub = /^\$([0-9])\.([a-z0-9-]+(?:\.[a-z0-9-]+)+)$/i.exec(authority);
  if (sub !== null && LABEL_GROUP.test(groups[Number(sub[1]) - 1]?.body ?? '')) return { kind: 'subdomain', of: (sub[2] as string).toLowerCase() };
  return { kind: 'computed' };
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
      const dest = ruleDestination(rule.to, rule.from);
      if (dest.kind === 'computed' || dest.kind === 'subdomain') computed.push({ ruleset: ruleset.name, from: rule.from, to: rule.to });
      if (dest.kind !== 'literal') continue;
      const outside = dest.urls.find((url) => !policy.allows(url));
      if (outside !== undefined) {
        throw new ChannelError(
          'destination-outside-scope',
          `ruleset "${ruleset.name}" sends URLs to ${outside}, outside the channel's scope and destination list (rule ${rule.from} → ${rule.to}); the release is refused`,
        );
      }
    }
  }
  return { computed };
}
