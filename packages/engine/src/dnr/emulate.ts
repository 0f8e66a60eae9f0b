import { compileDnrRegexFilter, type FilterRegex } from '../regex/safe-regex.js';
import type { DnrResourceType, DnrRule } from './types.js';

export interface DnrRequest {
  url: string;
  type?: DnrResourceType;
  /** The request's initiator as an origin (`https://a.test`, `chrome-extension://id`); none for a typed address. */
  initiator?: string;
  /** The tab (-1, the default: no tab). */
  tabId?: number;
  /**
   * The documents the request is made in, outermost first (the tab's page, then any frames):
   * an `allowAllRequests` rule that matched one of them allows the request at its priority.
   * Each is the URL the frame's own request had, and its type (`main_frame` or `sub_frame`).
   */
  frames?: readonly { url: string; type: 'main_frame' | 'sub_frame' }[];
}

export interface DnrOutcome {
  /** The winning rule, or null when no rule matched. */
  rule: DnrRule | null;
  /** Where the request goes: null when it proceeds unchanged (no match, `allow`, failed redirect). */
  redirectUrl: string | null;
}

/** Chromium breaks priority ties by action: allow > allowAllRequests > block > upgradeScheme > redirect. */
const ACTION_RANK: Record<string, number> = {
  allow: 5,
  allowAllRequests: 4,
  block: 3,
  upgradeScheme: 2,
  redirect: 1,
  modifyHeaders: 0,
};

interface CompiledRule {
  rule: DnrRule;
  urlFilter: RegExp | null;
  regexFilter: FilterRegex | null;
  domains: ReadonlySet<string> | null;
  excludedDomains: ReadonlySet<string> | null;
  initiatorDomains: ReadonlySet<string> | null;
  excludedInitiatorDomains: ReadonlySet<string> | null;
  types: ReadonlySet<string> | null;
}

/** What a request is matched on, once parsed. */
interface Target {
  url: string;
  host: string;
  type: DnrResourceType;
  /** The initiator's host ('' when there is none or it is opaque). */
  initiatorHost: string;
  tabId: number;
}

/**
 * Evaluates declarativeNetRequest rules the way Chromium does for one extension: every
 * condition must hold (url/regex filter with the rule's case sensitivity, request domains
 * including subdomains and ignoring the host's trailing dots, resource types with main_frame
 * excluded by default, initiator domains, tab ids), the highest priority wins, ties go by
 * action, an `allowAllRequests` that matched an enclosing frame counts as an allow at its
 * priority, then the action is
 * applied (upgradeScheme, redirect by url / transform / RE2 substitution, allow). One request
 * stage: Chromium matches a redirected request again (see `follow`). Used to measure compiled
 * rules offline.
 */
export class DnrEmulator {
  private readonly byHost = new Map<string, CompiledRule[]>();
  private readonly unindexed: CompiledRule[] = [];
  private readonly compiled = new Map<DnrRule, CompiledRule>();

  constructor(rules: readonly DnrRule[]) {
    for (const rule of rules) {
      const c = compileRule(rule);
      this.compiled.set(rule, c);
      const keys = rule.condition.requestDomains ?? hostOfUrlFilter(rule.condition.urlFilter);
      if (!keys || keys.length === 0) {
        this.unindexed.push(c);
        continue;
      }
      for (const k of new Set(keys)) {
        let list = this.byHost.get(k);
        if (!list) this.byHost.set(k, (list = []));
        list.push(c);
      }
    }
  }

  match(request: DnrRequest): DnrOutcome {
    const parsed = parseAsChromium(request.url);
    if (parsed === null) return { rule: null, redirectUrl: null };
    // Requests carry no fragment; a navigation keeps it (even an empty `#`) across a redirect
    // that sets none.
    const hashAt = parsed.href.indexOf('#');
    const fragment = hashAt < 0 ? '' : parsed.href.slice(hashAt);
    parsed.hash = '';
    const url = parsed.href;
    // Chromium 156 matches request domains without the host's trailing dots (`a.b.` is `a.b`);
    // url and regex filters see the URL as it is.
    const host = parsed.hostname.replace(/\.+$/, '');
    const target: Target = {
      url,
      host,
      type: request.type ?? 'main_frame',
      initiatorHost: initiatorHost(request.initiator),
      tabId: request.tabId ?? -1,
    };
    let winner = this.best(target);
    // The frames the request is made in: the highest allowAllRequests among them.
    let inherited: CompiledRule | null = null;
    const frames = request.frames ?? [];
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i] as { url: string; type: 'main_frame' | 'sub_frame' };
      const outcome = this.match({
        url: f.url,
        type: f.type,
        tabId: request.tabId,
        initiator: request.initiator,
        frames: frames.slice(0, i),
      });
      const r = outcome.rule;
      if (
        r !== null &&
        r.action.type === 'allowAllRequests' &&
        (inherited === null || r.priority > inherited.rule.priority)
      )
        inherited = this.compiled.get(r) ?? null;
    }
    if (inherited !== null && (winner === null || !outranks(winner.rule, inherited.rule)))
      winner = inherited;
    if (!winner) return { rule: null, redirectUrl: null };
    const to = applyAction(winner, parsed, url);
    if (to === null) return { rule: winner.rule, redirectUrl: null };
    const withFragment = fragment && !to.includes('#') ? to + fragment : to;
    return { rule: winner.rule, redirectUrl: withFragment };
  }

  private best(t: Target): CompiledRule | null {
    let best: CompiledRule | null = null;
    const consider = (c: CompiledRule): void => {
      if (best && !outranks(c.rule, best.rule)) return;
      if (matches(c, t)) best = c;
    };
    const labels = t.host.split('.');
    const keys = new Set<string>();
    for (let i = 0; i < labels.length; i++) keys.add(labels.slice(i).join('.'));
    keys.add(leadingRun(t.url));
    for (const key of keys) {
      const list = this.byHost.get(key);
      if (list) for (const c of list) consider(c);
    }
    for (const c of this.unindexed) consider(c);
    return best;
  }
}

/** The host of an initiator origin, as initiatorDomains compares it ('' for none or opaque). */
function initiatorHost(initiator: string | undefined): string {
  if (initiator === undefined || initiator === 'null') return '';
  try {
    return new URL(initiator).hostname.replace(/\.+$/, '');
  } catch {
    return '';
  }
}

/**
 * A URL as Chromium's parser (GURL) reads it, through the WHATWG parser: the two agree but for a
 * few spellings, checked against Chromium itself (test/e2e-dnr-emulator-chromium.test.ts). GURL
 * decodes percent escapes inside an IPv6 literal (`[::ffff:0%2E0%2E0%2E1]` is `[::ffff:0:1]`),
 * which WHATWG refuses.
 */
export function parseAsChromium(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    const decoded = url.replace(/\[[^\]/?#]*%[^\]/?#]*\]/, (literal) => {
      try {
        return decodeURIComponent(literal);
      } catch {
        return literal;
      }
    });
    if (decoded === url) return null;
    try {
      return new URL(decoded);
    } catch {
      return null;
    }
  }
}

/**
 * Where a request ends after Chromium has matched each redirected request again, up to `hops`
 * redirects: null when the first stage leaves it alone.
 */
export function follow(emulator: DnrEmulator, request: DnrRequest, hops = 4): string | null {
  let url: string | null = null;
  for (let at = request.url, i = 0; i < hops; i++) {
    const next = emulator.match({ ...request, url: at }).redirectUrl;
    if (next === null || next === at) break;
    url = at = next;
  }
  return url;
}

function outranks(a: DnrRule, b: DnrRule): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  return (ACTION_RANK[a.action.type] ?? 0) > (ACTION_RANK[b.action.type] ?? 0);
}

function compileRule(rule: DnrRule): CompiledRule {
  const c = rule.condition;
  const flags = c.isUrlFilterCaseSensitive ? '' : 'i';
  return {
    rule,
    urlFilter: c.urlFilter !== undefined ? urlFilterToRegExp(c.urlFilter, flags) : null,
    regexFilter:
      c.regexFilter !== undefined ? compileDnrRegexFilter(c.regexFilter, flags === 'i') : null,
    domains: c.requestDomains ? new Set(c.requestDomains) : null,
    excludedDomains: c.excludedRequestDomains ? new Set(c.excludedRequestDomains) : null,
    initiatorDomains: c.initiatorDomains ? new Set(c.initiatorDomains) : null,
    excludedInitiatorDomains: c.excludedInitiatorDomains
      ? new Set(c.excludedInitiatorDomains)
      : null,
    types: c.resourceTypes ? new Set(c.resourceTypes) : null,
  };
}

/** `requestDomains` semantics: the host itself or any parent domain is listed. */
function domainListed(host: string, domains: ReadonlySet<string>): boolean {
  for (let at = -1; ;) {
    if (domains.has(host.slice(at + 1))) return true;
    at = host.indexOf('.', at + 1);
    if (at < 0) return false;
  }
}

function matches(c: CompiledRule, t: Target): boolean {
  const cond = c.rule.condition;
  if (c.types ? !c.types.has(t.type) : t.type === 'main_frame') return false;
  if (cond.tabIds && !cond.tabIds.includes(t.tabId)) return false;
  if (cond.excludedTabIds?.includes(t.tabId)) return false;
  if (c.domains && !domainListed(t.host, c.domains)) return false;
  if (c.excludedDomains && domainListed(t.host, c.excludedDomains)) return false;
  if (
    c.initiatorDomains &&
    (t.initiatorHost === '' || !domainListed(t.initiatorHost, c.initiatorDomains))
  )
    return false;
  if (
    c.excludedInitiatorDomains &&
    t.initiatorHost !== '' &&
    domainListed(t.initiatorHost, c.excludedInitiatorDomains)
  )
    return false;
  if (c.urlFilter && !c.urlFilter.test(t.url)) return false;
  if (c.regexFilter && !c.regexFilter.test(t.url)) return false;
  return true;
}

/** urlFilter syntax: `||` domain anchor, `|` start/end anchors, `*` anything, `^` a separator. */
export function urlFilterToRegExp(filter: string, flags: string): RegExp {
  let f = filter;
  let prefix = '';
  let suffix = '';
  if (f.startsWith('||')) {
    // The host's start or a label boundary inside the host (never in the credentials).
    prefix = '^[a-z][a-z0-9+.-]*:\\/\\/(?:[^/?#]*@)?(?![^/?#]*@)(?:[^/?#@:[\\]]*\\.)?';
    f = f.slice(2);
  } else if (f.startsWith('|')) {
    prefix = '^';
    f = f.slice(1);
  }
  if (f.endsWith('|')) {
    suffix = '$';
    f = f.slice(0, -1);
  }
  let body = '';
  for (const ch of f) {
    if (ch === '*') body += '.*';
    else if (ch === '^') body += '(?:[^A-Za-z0-9_\\-.%]|$)';
    else body += ch.replace(/[\\^$.|?*+()[\]{}/]/g, '\\$&');
  }
  return new RegExp(prefix + body + suffix, flags);
}

/**
 * The index key of a urlFilter `|http://name` followed by a separator, `/`, `:` or the end
 * anchor: it matches only URLs whose text after `://` starts with exactly `name` then a
 * character outside [a-z0-9_.%-] (the host, or credentials: `match` looks both up).
 */
function hostOfUrlFilter(filter: string | undefined): string[] | null {
  const m = filter ? /^\|https?:\/\/([a-z0-9.-]+)(?=[\^/:|])/i.exec(filter) : null;
  return m ? [m[1]!.toLowerCase()] : null;
}

/** The text after `://` up to the first character a urlFilter host key cannot run into. */
function leadingRun(url: string): string {
  const at = url.indexOf('://');
  return at < 0 ? '' : (/^[a-z0-9_.%-]*/i.exec(url.slice(at + 3))?.[0] ?? '').toLowerCase();
}

function applyAction(c: CompiledRule, parsed: URL, url: string): string | null {
  const action = c.rule.action;
  switch (action.type) {
    case 'allow':
    case 'allowAllRequests':
      return null;
    case 'upgradeScheme': {
      if (parsed.protocol !== 'http:') return null;
      return `https:${url.slice('http:'.length)}`;
    }
    case 'redirect': {
      const r = action.redirect;
      let target: string | null = null;
      if (r.url !== undefined) target = r.url;
      else if (r.transform) {
        const next = new URL(url);
        if (r.transform.host !== undefined) next.hostname = r.transform.host;
        if (r.transform.scheme !== undefined) next.protocol = `${r.transform.scheme}:`;
        if (r.transform.path !== undefined) next.pathname = r.transform.path;
        target = next.href;
      } else if (r.regexSubstitution !== undefined && c.regexFilter) {
        const m = c.regexFilter.exec(url);
        if (!m) return null;
        const replacement = re2Substitute(r.regexSubstitution, m);
        target = url.slice(0, m.index) + replacement + url.slice(m.index + (m[0] ?? '').length);
      }
      // Chromium silently drops a redirect to an invalid URL.
      if (target === null) return null;
      try {
        return new URL(target).href;
      } catch {
        return null;
      }
    }
  }
}

/** RE2::Rewrite: `\0`–`\9` are groups, `\\` is a backslash. */
function re2Substitute(template: string, m: { [group: number]: string | undefined }): string {
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const ch = template[i]!;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const next = template[i + 1];
    if (next === '\\') out += '\\';
    else if (next !== undefined && next >= '0' && next <= '9') out += m[Number(next)] ?? '';
    i++;
  }
  return out;
}
