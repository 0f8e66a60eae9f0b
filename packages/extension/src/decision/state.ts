/**
 * The decision's view of the background: settings, site lists, rulesets, the loop guard and the
 * known HTTPS hosts, read live (each request decides with what holds at that moment).
 */
import type { DecisionState } from './decide.js';

/** What the state is read from (the settings controller; narrow, so tests can build one). */
export interface DecisionSources {
  settings: { globalEnabled: boolean; httpsFirst: boolean };
  disabled: { matchUrl(url: string): string | null };
  httpAllowed: { matchUrl(url: string): string | null };
  httpOnce: ReadonlySet<string>;
  /** Hosts opened over HTTP for one tab only. */
  httpOnceInTab(tabId: number): ReadonlySet<string>;
  userEngine: {
    rewriteWithRuleset(url: string): { rewritten: string | null; ruleset: string | null };
  } | null;
  rewrite(url: string): { rewritten: string | null; ruleset: string | null };
  excludedBy(url: string): string | null;
  /** A loop verdict lets this URL load over HTTP as the tab's page. */
  loopVerdict(url: string, tabId: number): boolean;
}

export function decisionState(
  c: DecisionSources,
  knownHttps: (host: string) => boolean = () => false,
): DecisionState {
  return {
    globalEnabled: c.settings.globalEnabled,
    httpsFirst: c.settings.httpsFirst,
    siteOffBy: (url) => c.disabled.matchUrl(url),
    httpAllowedBy: (url) => c.httpAllowed.matchUrl(url),
    httpOnce: (host, tabId) => c.httpOnce.has(host) || c.httpOnceInTab(tabId).has(host),
    loopVerdict: (url, tabId) => c.loopVerdict(url, tabId),
    userRewrite: (url) => {
      const r = c.userEngine?.rewriteWithRuleset(url);
      return r?.rewritten ? { rewritten: r.rewritten, ruleset: r.ruleset } : null;
    },
    rewrite: (url) => c.rewrite(url),
    excludedBy: (url) => c.excludedBy(url),
    knownHttps,
  };
}
