import type { Ruleset } from '@httpsify/engine';
import {
  compiledDestination,
  type RuleDestination,
  ruleDestination,
} from '@httpsify/engine/channels';
import { compileDnr } from '@httpsify/engine/dnr';

/** A site a user rule applies to, as the preview says it. */
export type RuleTarget =
  /** exactly this host */
  | { kind: 'host'; host: string }
  /** every subdomain of `domain` (`*.example.org`) */
  | { kind: 'subdomains'; domain: string }
  /** `name` with any ending (`example.*`) */
  | { kind: 'any-ending'; name: string };

/** Where one rule of a user rule sends the addresses it matches. */
export type RuleSendsTo =
  /** the same address over HTTPS */
  | { kind: 'same' }
  /** these sites, all among the rule's own targets */
  | { kind: 'hosts'; hosts: string[]; elsewhere: false }
  /** these sites, at least one of them not a site the rule applies to */
  | { kind: 'hosts'; hosts: string[]; elsewhere: true }
  /** some site under `domain` */
  | { kind: 'under'; domain: string; elsewhere: boolean }
  /** a site made from the visited address: could be any site */
  | { kind: 'computed' };

/** A user rule in plain words: what it matches and where it sends (settings import preview). */
export interface UserRuleSummary {
  targets: RuleTarget[];
  sendsTo: RuleSendsTo[];
  /** True when some rule may send a visit to a site the rule does not apply to. */
  leavesItsSites: boolean;
}

function targetOf(host: string): RuleTarget {
  if (host.startsWith('*.')) return { kind: 'subdomains', domain: host.slice(2) };
  if (host.endsWith('.*')) return { kind: 'any-ending', name: host.slice(0, -2) };
  return { kind: 'host', host };
}

/** `a` is `b`, or one of them is a subdomain of the other (`www.example.org` and `example.org`). */
const related = (a: string, b: string): boolean =>
  a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);

/** Whether `host` is one of the rule's own sites (a target, or the same site with or without a subdomain). */
function covered(host: string, targets: readonly RuleTarget[]): boolean {
  return targets.some((t) =>
    t.kind === 'host'
      ? related(host, t.host)
      : t.kind === 'subdomains'
        ? related(host, t.domain)
        : host.startsWith(`${t.name}.`) && !host.slice(t.name.length + 1).includes('.'),
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/**
 * What a user rule matches and where it sends, worked out from its targets and each rule's `to`
 * (the same reading the channel destination check uses). A user rule outranks every ruleset
 * and has no destination list, so a rule that sends visits to another site is called out.
 */
export function summariseUserRule(ruleset: Ruleset): UserRuleSummary {
  const targets = ruleset.targets.map((t) => targetOf(t.host));
  const said = (dest: RuleDestination): RuleSendsTo => {
    if (dest.kind === 'same-url') return { kind: 'same' };
    if (dest.kind === 'computed') return { kind: 'computed' };
    if (dest.kind === 'subdomain')
      return { kind: 'under', domain: dest.of, elsewhere: !covered(`x.${dest.of}`, targets) };
    const hosts = [...new Set(dest.urls.map(hostOf))];
    return hosts.every((h) => covered(h, targets))
      ? { kind: 'hosts', hosts, elsewhere: false }
      : { kind: 'hosts', hosts, elsewhere: true };
  };
  const sendsTo: RuleSendsTo[] = ruleset.rules.map((rule) =>
    said(ruleDestination(rule.to, rule.from)),
  );
  // Chromium runs the rules compiled: where that form may go elsewhere, the summary says so too.
  for (const r of compileDnr([ruleset], { isActive: () => true }).rules) {
    const dest = compiledDestination(r);
    if (dest === null) continue;
    const s = said(dest);
    const seen = sendsTo.some((t) => JSON.stringify(t) === JSON.stringify(s));
    if (
      !seen &&
      (s.kind === 'computed' || ((s.kind === 'hosts' || s.kind === 'under') && s.elsewhere))
    )
      sendsTo.push(s);
  }
  const leavesItsSites = sendsTo.some(
    (s) => s.kind === 'computed' || ((s.kind === 'hosts' || s.kind === 'under') && s.elsewhere),
  );
  return { targets, sendsTo, leavesItsSites };
}
