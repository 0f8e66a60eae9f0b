/**
 * The main-frame handoff (Chromium). DNR cannot express every ruleset; for the hosts of those
 * that did not compile completely, a top-level http:// navigation is redirected, before any
 * request leaves the browser, to an extension page that asks the engine and then opens the
 * reference's URL. URLs with a trailing-dot host or with credentials, which no compiled rule
 * rewrites as a main frame, take the same way. This module holds the pure parts: which hosts,
 * which rules.
 */
import type { Ruleset } from '@httpsify/engine';
import type { DnrOmission, DnrRule } from '@httpsify/engine/dnr';
import type { Decision } from '../decision/decide.js';
import { HANDOFF_FORMS_PRIORITY, HANDOFF_ONCE_PRIORITY, HANDOFF_PRIORITY } from './layout.js';
import type { RuleBody } from './rules.js';
import { HANDOFF_SCOPE_PATH } from '../platform/packaged-files.js';

export const HANDOFF_PORT_NAME = 'handoff';

/** Hosts whose main frames go to the page: DNR domains (subdomains included) and wildcard patterns. */
export interface HandoffScope {
  domains: string[];
  /** Targets with a right or middle wildcard (`www.google.*`). */
  patterns: string[];
}

const DOMAIN = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;
const PATTERN = /^[a-z0-9*_-]+(\.[a-z0-9*_-]+)*$/;

/** The targets of every compiled ruleset the report says is partial or left out. */
export function handoffScope(
  rulesets: readonly Ruleset[],
  omissions: readonly DnrOmission[],
): HandoffScope {
  const incomplete = new Set(omissions.map((o) => o.ruleset));
  return rulesetsScope(rulesets.filter((rs) => incomplete.has(rs.name)));
}

/** The targets of `rulesets` as a handoff scope. */
export function rulesetsScope(rulesets: readonly Ruleset[]): HandoffScope {
  const domains = new Set<string>();
  const patterns = new Set<string>();
  for (const rs of rulesets) {
    for (const t of rs.targets) {
      const host = t.host.toLowerCase();
      const left = host.startsWith('*.') ? host.slice(2) : host;
      if (DOMAIN.test(left)) domains.add(left);
      else if (PATTERN.test(host)) patterns.add(host);
      // Anything else (non-ASCII) never appears in a canonical request URL's host.
    }
  }
  return { domains: [...domains].sort(), patterns: [...patterns].sort() };
}

/** Whether the scope covers `host`: a domain is the host or one of its parents; a pattern's `*` is one label. */
export function inHandoffScope(scope: HandoffScope, host: string): boolean {
  const h = host.toLowerCase();
  if (scope.domains.some((d) => h === d || h.endsWith(`.${d}`))) return true;
  const labels = h.split('.');
  return scope.patterns.some((p) => {
    const parts = p.split('.');
    return (
      parts.length === labels.length && parts.every((part, i) => part === '*' || part === labels[i])
    );
  });
}

/** Checks a scope read from the extension's files (the build wrote it; still, one door). */
export function parseHandoffScope(json: unknown): HandoffScope {
  const o = json as Partial<HandoffScope> | null;
  const list = (v: unknown, re: RegExp, what: string): string[] => {
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && re.test(x)))
      throw new Error(`${HANDOFF_SCOPE_PATH}: ${what} must be a list of host names`);
    return v as string[];
  };
  return {
    domains: list(o?.domains, DOMAIN, 'domains'),
    patterns: list(o?.patterns, PATTERN, 'patterns'),
  };
}

const escape = (s: string): string => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
/** A label of a canonical host (what a `*` in a target stands for). */
const LABEL = '[^./?#:@]+';
const PORT_PATH = '(:[0-9]+)?/.*';
/** One pattern per regex: with `.*` captured for the substitution, eight overflow RE2's 2 KB. */
const PATTERNS_PER_RULE = 1;

/**
 * The "handoff" layer: the dynamic rules sending main frames to the page (`regexSubstitution`
 * carries the whole URL in the page address's query, see handoffRule): the scope at
 * HANDOFF_PRIORITY, URLs with credentials or a trailing dot at HANDOFF_FORMS_PRIORITY.
 */
export function handoffRules(scope: HandoffScope, pageUrl: string): RuleBody[] {
  const rule = (priority: number, condition: DnrRule['condition']) =>
    handoffRule(pageUrl, priority, condition);
  return [
    ...handoffScopeRules(scope, pageUrl),
    // Credentials or a trailing dot: no compiled rule rewrites those main frames, whatever the host.
    rule(HANDOFF_FORMS_PRIORITY, { regexFilter: `^http://[^/]*@.*` }),
    rule(HANDOFF_FORMS_PRIORITY, { regexFilter: `^http://[^/@:]*\\.${PORT_PATH}` }),
  ];
}

/** The main frames of the scope's hosts to the page, at HANDOFF_PRIORITY. */
export function handoffScopeRules(
  scope: HandoffScope,
  pageUrl: string,
  priority = HANDOFF_PRIORITY,
): RuleBody[] {
  const conditions: DnrRule['condition'][] = [];
  if (scope.domains.length > 0) conditions.push(domainsCondition(scope.domains));
  for (let i = 0; i < scope.patterns.length; i += PATTERNS_PER_RULE) {
    const alts = scope.patterns.slice(i, i + PATTERNS_PER_RULE).map((p) =>
      p
        .split('.')
        .map((l) => (l === '*' ? LABEL : escape(l)))
        .join('\\.'),
    );
    conditions.push({ regexFilter: `^http://(?:${alts.join('|')})${PORT_PATH}` });
  }
  return conditions.map((condition) => handoffRule(pageUrl, priority, condition));
}

/**
 * A rule sending the main frames `condition` admits to the page, the whole URL after the `?` of
 * the page's address. Not in its fragment: the worker answers that navigation with a redirect
 * (main-frame-handoff.ts), which takes on the address's fragment when the target has none; in
 * the query, that fragment is the URL's own, as a site's redirect would keep it.
 */
function handoffRule(pageUrl: string, priority: number, condition: DnrRule['condition']): RuleBody {
  return {
    priority,
    action: { type: 'redirect', redirect: { regexSubstitution: `${pageUrl}?\\0` } },
    condition: { ...condition, resourceTypes: ['main_frame'] },
  };
}

const domainsCondition = (domains: string[]): DnrRule['condition'] => ({
  regexFilter: `^http://.*`,
  requestDomains: domains,
});

/**
 * The main frames of `domains` (subdomains included) to the page at `priority`: the imported
 * library's rulesets that Chromium cannot apply whole, above the library's own rules.
 */
export function handoffDomainsRule(domains: string[], pageUrl: string, priority: number): RuleBody {
  return handoffRule(pageUrl, priority, domainsCondition(domains));
}

/** The session rule ("handoffOnce" layer) that lets exactly `url` load once in one tab, without the handoff. */
export function handoffOnceRule(tabId: number, url: string): RuleBody {
  return {
    priority: HANDOFF_ONCE_PRIORITY,
    action: { type: 'allow' },
    condition: {
      regexFilter: `^${escape(url)}$`,
      isUrlFilterCaseSensitive: true,
      tabIds: [tabId],
      resourceTypes: ['main_frame'],
    },
  };
}

/** What the page does with a URL the engine was asked about. */
export type HandoffDecision =
  { ok: true; target: string; once: boolean } | { ok: false; error: string };

/**
 * The URL a handoff page's address carries: after its first `?` (the rules'), else after its
 * `#` (the rules of versions before, still stored until rewritten, and links to the page).
 */
export function handoffAddress(pageHref: string): string {
  const query = pageHref.indexOf('?');
  const fragment = pageHref.indexOf('#');
  if (query >= 0 && (fragment < 0 || query < fragment)) return pageHref.slice(query + 1);
  return fragment >= 0 ? pageHref.slice(fragment + 1) : '';
}

/**
 * The one door for a URL the page received in its address (any site can open the page with
 * any address): only absolute http:// URLs are decided.
 */
export function handoffUrl(raw: unknown): URL | null {
  if (typeof raw !== 'string' || raw.length > 32_768) return null;
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' ? u : null;
  } catch {
    return null;
  }
}

export interface HandoffInputs {
  /** The decision (decision/decide.ts) for this URL as the tab's top-level navigation. */
  decide(url: string): Decision;
}

/**
 * Where the page goes: the decision's upgrade, else the URL itself. An http:// destination
 * would come back to the page: `once` asks for the session rule letting it through.
 */
export function decideHandoff(raw: unknown, inputs: HandoffInputs): HandoffDecision {
  const u = handoffUrl(raw);
  if (u === null) return { ok: false, error: 'not an http:// URL' };
  // The request URL as the browser sent it; the rewrite sees the same string the page got.
  const url = raw as string;
  const decision = inputs.decide(url);
  let target = decision.action === 'upgrade' ? decision.url : url;
  if (handoffUrl(target) === null && !target.startsWith('https:')) target = url;
  return { ok: true, target, once: target.startsWith('http:') };
}
