import type { AST } from '@eslint-community/regexpp';
import { compileDnr } from '../dnr/compile.js';
import type { DnrRule } from '../dnr/types.js';
import type { Engine } from '../match/engine.js';
import { parsePattern } from '../regex/pattern-ast.js';
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

const HOST =
  /^(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

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
  if (pattern.startsWith('*.'))
    return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return host === pattern;
}

/**
 * A destination is allowed when both readings of it agree (readDestination) and the scope
 * matches its WHATWG serialisation, or matches it as an `http:` URL (a scope written for
 * `http://` URLs still owns their `https://` form), or when its parsed host is listed. Scopes
 * are tested on the parsed URL, not on the string, so `https://attacker.example\.example.org/`
 * is judged as the `https://attacker.example/` that browsers and Node will load.
 */
export function destinationPolicy(
  scope: string,
  destinations: readonly string[],
): DestinationPolicy {
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
 * The capture groups of a regex source, in order, read with the regex parser every other
 * analysis uses: their source, and whether they may not take part in a match (then `$n` is
 * replaced by nothing): a quantifier with minimum 0 on the group or an enclosing one, an
 * alternation beside it, or a negative lookaround around it. A source that does not parse has
 * no groups the reading can rely on (every `$n` is then computed).
 */
function captureGroups(source: string): { body: string; optional: boolean }[] {
  const pattern = parsePattern(source);
  if (pattern === null) return [];
  const groups: AST.CapturingGroup[] = [];
  const visit = (node: AST.Node): void => {
    if (node.type === 'CapturingGroup') groups.push(node);
    if ('alternatives' in node) for (const a of node.alternatives) visit(a);
    if (node.type === 'Alternative') for (const e of node.elements) visit(e);
    if (node.type === 'Quantifier') visit(node.element);
  };
  visit(pattern);
  groups.sort((x, y) => x.start - y.start);
  return groups.map((g) => ({
    body: g.alternatives.map((a) => a.raw).join('|'),
    optional: mayNotTakePart(g),
  }));
}

function mayNotTakePart(node: AST.Node): boolean {
  for (let n: AST.Node | null = node; n !== null && n.type !== 'Pattern'; n = n.parent) {
    const p = n.parent;
    if (p === null) break;
    if (p.type === 'Quantifier' && p.min === 0) return true;
    if (p.type === 'Alternative' && p.parent.alternatives.length > 1) return true;
    if (p.type === 'Assertion' && (p.kind === 'lookahead' || p.kind === 'lookbehind') && p.negate)
      return true;
  }
  return false;
}

const LITERAL_ALTERNATIVES = /^(?:\\\.|[A-Za-z0-9-])+(?:\|(?:\\\.|[A-Za-z0-9-])+)*$/;
/** Groups that can only match host-name characters: a class of [a-z0-9._-] or \w / \d, repeated. */
const LABEL_GROUP =
  /^(?:\[(?:[a-z]-[a-z]|[A-Z]-[A-Z]|[0-9]-[0-9]|\\[wd.-]|[a-zA-Z0-9_.-])+\]|\\w|\\d)[+*]?$/;

function alternatives(group: { body: string; optional: boolean } | undefined): string[] | null {
  if (group === undefined || !LITERAL_ALTERNATIVES.test(group.body)) return null;
  const alts = group.body.split('|').map((a) => a.replace(/\\\./g, '.'));
  return group.optional ? ['', ...alts] : alts;
}

/**
 * Where a rule (`from` → `to`, `$n` for groups) sends URLs. Only the rule that replaces the
 * scheme and nothing else (`^http:` → `https:`) keeps the URL: `to` = `https:` after a `from`
 * that matched more (`^http://bank\.test`) makes `https:/path`, whose first path segment the
 * URL parser reads as the host. A `to` whose authority is not ended inside it (`https://a.test`)
 * is continued by what follows the match in the URL: computed too.
 */
export function ruleDestination(to: string, from = ''): RuleDestination {
  if (/^https?:$/i.test(to)) return from === '^http:' ? { kind: 'same-url' } : { kind: 'computed' };
  if (/^https?:\/\/$/i.test(to) && from === '^http://') return { kind: 'same-url' };
  const m = /^(https?):\/\/([^/?#]*)(.*)$/s.exec(to);
  if (m === null) return { kind: 'computed' };
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  if (rest === '') return { kind: 'computed' };
  const dollar = rest.indexOf('$');
  const path = dollar === -1 ? rest : rest.slice(0, dollar);
  const url = (host: string): string =>
    `${scheme}://${host}${path.startsWith('/') ? path : `/${path}`}`;
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
  if (sub !== null && LABEL_GROUP.test(groups[Number(sub[1]) - 1]?.body ?? ''))
    return { kind: 'subdomain', of: (sub[2] as string).toLowerCase() };
  return { kind: 'computed' };
}

/**
 * Where a compiled DNR rule sends the requests it matches, read from the action Chromium runs:
 * `upgradeScheme` and a scheme-only transform keep the URL; a `url` or a transform's host (and
 * path) is literal; a `regexSubstitution` is read as a `to` over its `regexFilter` (its `\\n` are `$n`),
 * when the filter is anchored at the start (else the unmatched prefix stays in front of it).
 * Rules that send nowhere (`allow`) answer null.
 */
export function compiledDestination(
  rule: Pick<DnrRule, 'action' | 'condition'>,
): RuleDestination | null {
  const a = rule.action;
  if (a.type === 'upgradeScheme') return { kind: 'same-url' };
  if (a.type !== 'redirect') return null;
  const r = a.redirect;
  if (r.url !== undefined) return { kind: 'literal', urls: [r.url] };
  if (r.transform !== undefined) {
    const { scheme, host, path, ...others } = r.transform;
    if (Object.keys(others).length > 0 || (path !== undefined && host === undefined))
      return { kind: 'computed' };
    return host === undefined
      ? { kind: 'same-url' }
      : { kind: 'literal', urls: [`${scheme ?? 'http'}://${host}${path ?? '/'}`] };
  }
  const template = r.regexSubstitution;
  const filter = rule.condition.regexFilter;
  if (
    template === undefined ||
    filter === undefined ||
    !filter.startsWith('^') ||
    template.includes('$')
  )
    return { kind: 'computed' };
  // RE2::Rewrite: \\ is a backslash, \n a group.
  let to = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i] as string;
    if (c !== '\\') {
      to += c;
      continue;
    }
    const next = template[i + 1] ?? '';
    if (next !== '\\' && !/[0-9]/.test(next)) return { kind: 'computed' };
    to += next === '\\' ? '\\' : `$${next}`;
    i++;
  }
  return ruleDestination(to, filter);
}

export interface DestinationFinding {
  ruleset: string;
  from: string;
  to: string;
}

/**
 * Whether compiling the ruleset cannot change what its rules say about destinations, so the
 * compiled check is skipped (it costs a compile per ruleset): every rule is the scheme-only
 * `^http:` → `https:`, or a `to` without `$` whose authority ends inside it (a literal URL: the
 * compiler has nothing to substitute into it, checked above as written).
 */
const compiledAsWritten = (rules: readonly { from: string; to: string }[]): boolean =>
  rules.every(
    (r) =>
      (r.from === '^http:' && r.to === 'https:') ||
      (!r.to.includes('$') && ruleDestination(r.to, r.from).kind === 'literal'),
  );

/**
 * Install-time check of every rule of a signed bundle, as written (the engine's rewrite) and as
 * compiled for Chromium (compileDnr, one ruleset at a time so a finding names its ruleset). A
 * rule whose literal destination, in either form, lies outside the scope and the destination
 * list refuses the whole release (see docs/update-channels.md, "Destinations": the signer tried
 * to send users elsewhere, which is a stolen key or a publishing mistake, and either way the
 * previous rules are the safe state). Rules whose host is computed from the URL are returned:
 * they are checked on every rewrite (engine clients) or left out (Chromium, which cannot check a
 * redirect it does not see).
 */
export function checkBundleDestinations(
  engine: Engine,
  policy: DestinationPolicy,
): { computed: DestinationFinding[] } {
  const computed: DestinationFinding[] = [];
  const refuse = (ruleset: string, outside: string, rule: string): never => {
    throw new ChannelError(
      'destination-outside-scope',
      `ruleset "${ruleset}" sends URLs to ${outside}, outside the channel's scope and destination list (rule ${rule}); the release is refused`,
    );
  };
  for (let id = 0; id < engine.rulesetCount; id++) {
    const ruleset = engine.ruleset(id);
    for (const rule of ruleset.rules) {
      const dest = ruleDestination(rule.to, rule.from);
      if (dest.kind === 'computed' || dest.kind === 'subdomain')
        computed.push({ ruleset: ruleset.name, from: rule.from, to: rule.to });
      if (dest.kind !== 'literal') continue;
      const outside = dest.urls.find((url) => !policy.allows(url));
      if (outside !== undefined) refuse(ruleset.name, outside, `${rule.from} → ${rule.to}`);
    }
    if (compiledAsWritten(ruleset.rules)) continue;
    // What Chromium will run: the same rules, compiled.
    for (const r of compileDnr([ruleset], { isActive: () => true }).rules) {
      const dest = compiledDestination(r);
      if (dest === null || dest.kind === 'same-url') continue;
      const shown = `compiled for Chromium: ${r.condition.regexFilter ?? r.condition.urlFilter ?? ''} → ${JSON.stringify(r.action)}`;
      if (dest.kind !== 'literal') {
        computed.push({
          ruleset: ruleset.name,
          from: r.condition.regexFilter ?? r.condition.urlFilter ?? '',
          to: JSON.stringify(r.action),
        });
        continue;
      }
      const outside = dest.urls.find((url) => !policy.allows(url));
      if (outside !== undefined) refuse(ruleset.name, outside, shown);
    }
  }
  return { computed };
}
