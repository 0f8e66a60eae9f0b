/**
 * What decide() reads of the settings and the learned state, taken at one moment: the settings
 * controller builds a new snapshot each time its state changes (routing/settings-controller.ts)
 * and never changes one it handed out, so a request is decided with one consistent state. Before
 * the settings are read, the bundled rulesets alone make one (`bundledOnlySnapshot`).
 *
 * Two parts stay live, read through the snapshot: the rulesets (their engines are swapped whole
 * when a channel or the library changes, never edited) and what expires with time (loop
 * verdicts, known HTTPS hosts), asked at the moment of the request.
 */
import type { Ruleset } from '@httpsify/engine';
import type { DecisionState, RequestKind } from './decide.js';

/** A site list (disabledSites, httpAllowedSites) as the decision reads it. */
export interface SiteEntries {
  /** The entry covering the URL's host, or null. */
  matchUrl(url: string): string | null;
  /** The entry covering `host` (with `port`, "" for none), or null. */
  matchHost(host: string, port: string): string | null;
}

export interface ProtectionSnapshot {
  readonly globalEnabled: boolean;
  readonly httpsFirst: boolean;
  /** The "off" entries (disabledSites). */
  readonly disabled: SiteEntries;
  /** The "rulesets only" entries (httpAllowedSites). */
  readonly httpAllowed: SiteEntries;
  /** Hosts opened over HTTP "this time" in every tab (this session). */
  readonly httpOnce: ReadonlySet<string>;
  /** Hosts opened over HTTP for one tab only, by tab. */
  readonly httpOnceInTabs: ReadonlyMap<number, ReadonlySet<string>>;
  /** The user's own rules, or null when there are none. */
  readonly userRules: {
    rewriteWithRuleset(url: string): { rewritten: string | null; ruleset: string | null };
  } | null;
  /** The rulesets (user rules, channels within their scopes, library, defaults). */
  readonly rulesets: {
    rewrite(url: string): { rewritten: string | null; ruleset: string | null };
    /** The active ruleset whose exclusion matches the URL, or null. */
    excludedBy(url: string): string | null;
  };
  /** A live loop verdict lets this URL load over HTTP in the tab, as this kind of request. */
  loopVerdict(url: string, tabId: number, kind: RequestKind): boolean;
  /**
   * The same entries and rules as Chromium's settings rules compile them (dnr/settings-rules.ts),
   * so that what DNR enforces is built from what decide() reads.
   */
  readonly dnr: {
    readonly disabledSites: readonly string[];
    readonly httpAllowedSites: readonly string[];
    /** The user's rulesets that are switched on. */
    readonly activeUserRulesets: readonly Ruleset[];
  };
}

const NO_HOSTS: ReadonlySet<string> = new Set();
const NO_ENTRIES: SiteEntries = { matchUrl: () => null, matchHost: () => null };

/**
 * Before the settings are read: the bundled rulesets (`rewrite`) and the loop guard, nothing the
 * settings add (HTTPS-first, site entries, user rules: not known yet).
 */
export function bundledOnlySnapshot(
  rewriter: { rewrite(url: string): string | null },
  loopVerdict: (url: string, tabId: number, kind: RequestKind) => boolean,
): ProtectionSnapshot {
  return Object.freeze({
    globalEnabled: true,
    httpsFirst: false,
    disabled: NO_ENTRIES,
    httpAllowed: NO_ENTRIES,
    httpOnce: NO_HOSTS,
    httpOnceInTabs: new Map(),
    userRules: null,
    rulesets: {
      rewrite: (url: string) => ({ rewritten: rewriter.rewrite(url), ruleset: null }),
      excludedBy: () => null,
    },
    loopVerdict,
    dnr: { disabledSites: [], httpAllowedSites: [], activeUserRulesets: [] },
  });
}

/** The decision's state over a snapshot; `knownHttps`: the known-HTTPS-hosts store, now. */
export function snapshotState(
  s: ProtectionSnapshot,
  knownHttps: (host: string) => boolean = () => false,
): DecisionState {
  return {
    globalEnabled: s.globalEnabled,
    httpsFirst: s.httpsFirst,
    siteOffBy: (url) => s.disabled.matchUrl(url),
    httpAllowedBy: (url) => s.httpAllowed.matchUrl(url),
    httpOnce: (host, tabId) =>
      s.httpOnce.has(host) || (s.httpOnceInTabs.get(tabId)?.has(host) ?? false),
    loopVerdict: (url, tabId, kind) => s.loopVerdict(url, tabId, kind),
    userRewrite: (url) => {
      const r = s.userRules?.rewriteWithRuleset(url);
      return r?.rewritten ? { rewritten: r.rewritten, ruleset: r.ruleset } : null;
    },
    rewrite: (url) => s.rulesets.rewrite(url),
    excludedBy: (url) => s.rulesets.excludedBy(url),
    knownHttps,
  };
}
