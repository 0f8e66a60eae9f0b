/**
 * The "loops" session layer: hosts the redirect-loop guard gave up on are never upgraded again
 * this session (decide() step 4, `allowHttp` / `loop-guard`). The layer is exactly the guard's
 * list, so adding, forgetting and clearing are one operation: declare the list.
 */
import { ALL_RESOURCE_TYPES } from '@httpsify/engine/dnr';
import type { StorageArea } from '../platform/browser-api.js';
import type { LoopGuard } from './loop-guard.js';
import { LOOP_ALLOW_PRIORITY } from '../dnr/layout.js';
import type { RuleWriter } from '../dnr/rule-writer.js';
import type { RuleBody } from '../dnr/rules.js';

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

/** storage.session key: the guard's hosts, so a restarted service worker keeps them. */
export const LOOP_HOSTS_KEY = 'loopBlockedHosts';

/** Chromium: the loop guard's hosts as the "loops" layer, and their copy in storage.session. */
export class LoopLayer {
  constructor(
    private readonly guard: Pick<LoopGuard, 'blockedHosts' | 'restore'>,
    private readonly writer: Pick<RuleWriter, 'setLayer'>,
    private readonly session: StorageArea,
  ) {}

  /** Hosts given up on earlier this session (before the service worker stopped). */
  async restore(): Promise<void> {
    const stored = (await this.session.get(LOOP_HOSTS_KEY))[LOOP_HOSTS_KEY];
    this.guard.restore(Array.isArray(stored) ? stored : []);
  }

  /** The guard's list changed: its session rules and its stored copy follow. */
  async changed(): Promise<void> {
    await this.writer.setLayer('loops', loopAllowRules(this.guard.blockedHosts()));
    await this.session.set({ [LOOP_HOSTS_KEY]: this.guard.blockedHosts() });
  }
}
