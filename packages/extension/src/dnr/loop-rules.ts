/**
 * The "loops" session layer: hosts the redirect-loop guard gave up on are never upgraded again
 * this session (decide() step 4, `allowHttp` / `loop-guard`). The layer is exactly the guard's
 * list, so adding, forgetting and clearing are one operation: declare the list.
 */
import { ALL_RESOURCE_TYPES } from '@httpsify/engine/dnr';
import { LOOP_ALLOW_PRIORITY } from './layout.js';
import type { RuleBody } from './rules.js';

/** The `allow` rule for a host in a redirect loop: exact host, any port, http only. */
export function loopAllowRule(host: string): RuleBody {
  return {
    priority: LOOP_ALLOW_PRIORITY,
    action: { type: 'allow' },
    condition: { urlFilter: `|http://${host}^`, resourceTypes: [...ALL_RESOURCE_TYPES] },
  };
}

export function loopAllowRules(blockedHosts: readonly string[]): RuleBody[] {
  return [...new Set(blockedHosts)].sort().map(loopAllowRule);
}
