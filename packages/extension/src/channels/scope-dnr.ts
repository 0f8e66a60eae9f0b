import { compileDnrRegexFilter } from '@httpsify/engine/parse';
import { type DnrRule } from '@httpsify/engine/dnr';
import { type HostScope, parseHostScope } from './scope-pattern.js';

/**
 * A channel scope as declarativeNetRequest conditions. `requestDomains` is the scope's hosts
 * (DNR domains include their subdomains); when some hosts are exact or ports are excluded,
 * `requestDomains` alone would be wider, and `restrictRulesToScope` narrows each rule further.
 */
export type DnrScope =
  | { kind: 'everything' }
  | { kind: 'hosts'; requestDomains: string[]; scope: HostScope; needsNarrowing: boolean };

export type ScopeToDnrResult = { ok: true; dnr: DnrScope } | { ok: false; reason: string };

export function scopeToDnr(scope: string): ScopeToDnrResult {
  if (scope === '') return { ok: true, dnr: { kind: 'everything' } };
  const parsed = parseHostScope(scope);
  if (!parsed.ok) return parsed;
  const s = parsed.scope;
  return {
    ok: true,
    dnr: {
      kind: 'hosts',
      requestDomains: s.hosts.map((h) => h.host),
      scope: s,
      needsNarrowing: !s.anyPort || s.hosts.some((h) => !h.subdomains),
    },
  };
}

export type RestrictResult = { ok: true; rules: DnrRule[] } | { ok: false; reason: string };

/**
 * Confines compiled rules to a scope, exactly: every rule keeps its action and priority but
 * fires only on in-scope URLs; rules with no in-scope URL are dropped. Refuses (with the
 * reason) when a rule cannot be confined exactly, rather than applying it more widely.
 */
export function restrictRulesToScope(rules: readonly DnrRule[], dnr: DnrScope): RestrictResult {
  if (dnr.kind === 'everything') return { ok: true, rules: [...rules] };
  const out: DnrRule[] = [];
  for (const rule of rules) {
    const restricted = restrictRule(rule, dnr);
    if (typeof restricted === 'string') return { ok: false, reason: restricted };
    out.push(...restricted);
  }
  return { ok: true, rules: out };
}

/** The domains both lists cover (each entry standing for itself and its subdomains). */
export function intersectDomains(a: readonly string[] | undefined, b: readonly string[]): string[] {
  if (a === undefined) return [...b];
  const out = new Set<string>();
  for (const x of a) {
    for (const y of b) {
      if (x === y || x.endsWith(`.${y}`)) out.add(x);
      else if (y.endsWith(`.${x}`)) out.add(y);
    }
  }
  return [...out].sort();
}

const within = (host: string, domain: string): boolean =>
  host === domain || host.endsWith(`.${domain}`);

/** Whether a scope admits a host (ports and schemes aside). */
function hostInScope(host: string, scope: HostScope): boolean {
  return scope.hosts.some((h) => (h.subdomains ? within(host, h.host) : host === h.host));
}

/**
 * Whether a ruleset target may name an in-scope host. Used to compile only the rulesets that
 * can matter, so the regex budget goes to them; wildcards in the middle or on the right are
 * kept (the rule restriction still confines them).
 */
export function targetMayBeInScope(target: string, dnr: DnrScope): boolean {
  if (dnr.kind === 'everything') return true;
  const host = target.toLowerCase().replace(/\.+$/, '');
  if (!host.includes('*')) return hostInScope(host, dnr.scope);
  if (!host.startsWith('*.') || host.slice(2).includes('*')) return true;
  const suffix = host.slice(2);
  // `*.suffix` meets a scope host that lies below the suffix, or a scope domain above it.
  return dnr.scope.hosts.some(
    (h) => h.host.endsWith(`.${suffix}`) || (h.subdomains && within(suffix, h.host)),
  );
}

/** What compiled rules put after the host in a host-only regex (`labelCountRegex`, `patternHostsRegex`). */
const AFTER_HOST = '(?:[:/?#]|$)';
const AFTER_HOST_NO_PORT = '(?:[/?#]|$)';

/** `^http://<host pattern>(?:[:/?#]|$)`: the rule depends on nothing but the host. */
function isHostOnlyRegex(regex: string): boolean {
  if (!regex.startsWith('^http://') || !regex.endsWith(AFTER_HOST)) return false;
  // Without character classes and group openers, a host pattern has no "/", "?", "#", ":" or "$".
  const hostPart = regex
    .slice('^http://'.length, -AFTER_HOST.length)
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\(\?:/g, '(');
  return !/[/?#:$]/.test(hostPart);
}

/** Only the http: scheme can match (compiled rules are anchored there; a scope may exclude https:). */
function httpOnly(rule: DnrRule): boolean {
  const c = rule.condition;
  if (c.urlFilter !== undefined)
    return c.urlFilter.startsWith('|http://') || c.urlFilter.startsWith('|http:');
  if (c.regexFilter !== undefined)
    return c.regexFilter.startsWith('^http://') || c.regexFilter.startsWith('^http:');
  return false;
}

function describe(rule: DnrRule): string {
  const c = rule.condition;
  return c.regexFilter !== undefined
    ? `regexFilter ${c.regexFilter}`
    : c.urlFilter !== undefined
      ? `urlFilter ${c.urlFilter}`
      : `rule ${rule.id}`;
}

function restrictRule(
  rule: DnrRule,
  dnr: Extract<DnrScope, { kind: 'hosts' }>,
): DnrRule[] | string {
  const { scope } = dnr;
  const c = rule.condition;
  // An `allow` for https:// URLs only guards rules such a scope refuses anyway.
  if (!scope.https && rule.action.type === 'allow' && c.urlFilter?.startsWith('|https://') === true)
    return [];
  if (!scope.https && !httpOnly(rule))
    return `a rule (${describe(rule)}) can also match https:// URLs, which the scope leaves out`;
  const domains = intersectDomains(c.requestDomains, dnr.requestDomains);
  if (domains.length === 0) return [];
  // A URL prefix names its host: out of scope, the rule could never fire (and would only use up the limits).
  const literalHost =
    c.urlFilter === undefined ? null : (/^\|http:\/\/([a-z0-9.-]+)/.exec(c.urlFilter)?.[1] ?? null);
  if (literalHost !== null && !hostInScope(literalHost, scope)) return [];
  if (!dnr.needsNarrowing) return [{ ...rule, condition: { ...c, requestDomains: domains } }];

  // A URL prefix names its host literally: keep it or drop it, and pin "no port" with "/".
  if (c.urlFilter !== undefined) {
    const m = /^\|http:\/\/([a-z0-9.-]+)(.*)$/.exec(c.urlFilter);
    if (m === null) return `a rule (${describe(rule)}) does not name its host`;
    const host = m[1]!;
    let rest = m[2]!;
    if (!hostInScope(host, scope)) return [];
    if (!scope.anyPort) {
      if (rest.startsWith(':')) return [];
      // `^` after the host is "/" or ":port" in a normalised http: URL.
      if (rest.startsWith('^')) rest = `/${rest.slice(1)}`;
      else if (!rest.startsWith('/'))
        return `a rule (${describe(rule)}) cannot be kept off URLs with a port`;
    }
    return [{ ...rule, condition: { ...c, urlFilter: `|http://${host}${rest}` } }];
  }

  // Host-only upgrades: exact hosts become one URL prefix each, domains keep the regex.
  if (
    c.regexFilter !== undefined &&
    isHostOnlyRegex(c.regexFilter) &&
    rule.action.type === 'upgradeScheme'
  ) {
    const regex = compileDnrRegexFilter(c.regexFilter, false);
    const out: DnrRule[] = [];
    for (const h of scope.hosts) {
      if (h.subdomains) {
        const d = intersectDomains(c.requestDomains, [h.host]);
        if (d.length === 0) continue;
        const regexFilter = scope.anyPort
          ? c.regexFilter
          : c.regexFilter.slice(0, -AFTER_HOST.length) + AFTER_HOST_NO_PORT;
        out.push({ ...rule, condition: { ...c, regexFilter, requestDomains: d } });
      } else if (
        (c.requestDomains === undefined || c.requestDomains.some((d) => within(h.host, d))) &&
        regex.test(`http://${h.host}/`)
      ) {
        const { regexFilter: _regex, requestDomains: _domains, ...others } = c;
        out.push({
          ...rule,
          condition: { ...others, urlFilter: `|http://${h.host}${scope.anyPort ? '^' : '/'}` },
        });
      }
    }
    return out;
  }

  // Any other rule needs its own regex; it can still be confined to whole domains of the scope.
  const exactCovered = scope.hosts.some(
    (h) =>
      !h.subdomains &&
      (c.requestDomains === undefined || c.requestDomains.some((d) => within(h.host, d))),
  );
  if (!scope.anyPort || exactCovered) {
    return `a rule (${describe(rule)}) needs its own regular expression, and Chromium cannot combine that with ${
      scope.anyPort ? 'an exact host' : 'excluding ports'
    } in the scope; a scope such as ^https?://([^/]*\\.)?example\\.org[:/] can be enforced`;
  }
  const subdomainDomains = scope.hosts.filter((h) => h.subdomains).map((h) => h.host);
  const confined = intersectDomains(c.requestDomains, subdomainDomains);
  return confined.length === 0 ? [] : [{ ...rule, condition: { ...c, requestDomains: confined } }];
}
