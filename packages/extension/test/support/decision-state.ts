import type { DecisionState } from '../../src/decision/decide.js';

/**
 * decide()'s state with nothing relaxed and nothing known: the switch on, HTTPS-first on, no
 * ruleset, user rule, site entry, verdict or known host. Tests name only what differs.
 */
export function decisionState(differs: Partial<DecisionState> = {}): DecisionState {
  return {
    globalEnabled: true,
    httpsFirst: true,
    siteOffBy: () => null,
    httpAllowedBy: () => null,
    httpOnce: () => false,
    loopVerdict: () => false,
    userRewrite: () => null,
    rewrite: () => ({ rewritten: null, ruleset: null }),
    excludedBy: () => null,
    knownHttps: () => false,
    ...differs,
  };
}
