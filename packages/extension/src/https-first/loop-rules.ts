/**
 * The "loops" session layer: the loop guard's live verdicts (https-first/loop-guard.ts), each an
 * `allow` rule for exactly one http:// URL as the top-level page of exactly one tab (decide()
 * step 4, `allowHttp` / `loop-guard`). The layer is exactly the guard's list, so adding,
 * expiring, forgetting and clearing are one operation: declare the list.
 */
import type { StorageArea } from '../platform/browser-api.js';
import type { LoopGuard, LoopVerdict } from './loop-guard.js';
import { LOOP_ALLOW_PRIORITY } from '../dnr/layout.js';
import type { RuleWriter } from '../dnr/rule-writer.js';
import type { RuleBody } from '../dnr/rules.js';

/** RE2 syntax: every character that is not plainly itself is escaped. */
const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * The `allow` rule of one verdict: the whole URL, anchored at both ends (a fragment aside, which
 * never reaches the network), main frames of the verdict's tab only. No other host, path, query
 * or tab can match it: the regex is the URL itself, not a pattern a host name can satisfy from
 * another part of a URL.
 */
export function loopAllowRule(v: Pick<LoopVerdict, 'tabId' | 'url'>): RuleBody {
  return {
    priority: LOOP_ALLOW_PRIORITY,
    action: { type: 'allow' },
    condition: {
      regexFilter: `^${escapeRegex(v.url)}$`,
      isUrlFilterCaseSensitive: true,
      tabIds: [v.tabId],
      resourceTypes: ['main_frame'],
    },
  };
}

export function loopAllowRules(
  verdicts: readonly Pick<LoopVerdict, 'tabId' | 'url'>[],
): RuleBody[] {
  const seen = new Set<string>();
  return [...verdicts]
    .sort((a, b) => a.tabId - b.tabId || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0))
    .filter((v) => !seen.has(`${v.tabId} ${v.url}`) && seen.add(`${v.tabId} ${v.url}`))
    .map(loopAllowRule);
}

/** storage.session key: the guard's verdicts, so a restarted service worker keeps them. */
export const LOOP_VERDICTS_KEY = 'loopVerdicts';
/** The alarm that takes ended verdicts' rules away (alarms wake a stopped service worker). */
export const LOOP_ALARM = 'httpsify-loop-verdicts';

/** Chromium: the loop guard's verdicts as the "loops" layer, and their copy in storage.session. */
export class LoopLayer {
  constructor(
    private readonly guard: Pick<LoopGuard, 'live' | 'restore' | 'prune' | 'nextExpiry'>,
    private readonly writer: Pick<RuleWriter, 'setLayer'>,
    private readonly session: StorageArea,
    private readonly alarms?: Pick<typeof chrome.alarms, 'create' | 'clear'>,
  ) {}

  /** Verdicts reached earlier this session (before the service worker stopped). */
  async restore(): Promise<void> {
    this.guard.restore((await this.session.get(LOOP_VERDICTS_KEY))[LOOP_VERDICTS_KEY]);
    await this.changed();
  }

  /** The guard's list changed (or a verdict ended): its session rules and stored copy follow. */
  async changed(): Promise<void> {
    this.guard.prune();
    const live = this.guard.live();
    await this.writer.setLayer('loops', loopAllowRules(live));
    await this.session.set({ [LOOP_VERDICTS_KEY]: live });
    const next = this.guard.nextExpiry();
    if (next === null) await this.alarms?.clear(LOOP_ALARM);
    else await this.alarms?.create(LOOP_ALARM, { when: next + 1000 });
  }
}
