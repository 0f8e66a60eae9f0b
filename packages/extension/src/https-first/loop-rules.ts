/**
 * The "loops" session layer: the loop guard's live verdicts (https-first/loop-guard.ts), each an
 * `allow` rule for exactly one http:// URL in exactly one tab, as its top-level page or as what
 * its pages load (decide() step 4, `allowHttp` / `loop-guard`). The layer is exactly the guard's
 * list, so adding, expiring, forgetting and clearing are one operation: declare the list.
 */
import type { StorageArea } from '../platform/browser-api.js';
import type { LoopGuard, LoopKind, LoopVerdict } from './loop-guard.js';
import { LOOP_ALLOW_PRIORITY } from '../dnr/layout.js';
import type { RuleWriter } from '../dnr/rule-writer.js';
import type { RuleBody } from '../dnr/rules.js';

/** RE2 syntax: every character that is not plainly itself is escaped. */
const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** A verdict as its rule needs it; without `kind`, the tab's page. */
export type VerdictScope = Pick<LoopVerdict, 'tabId' | 'url'> & { kind?: LoopKind };

/**
 * The `allow` rule of one verdict: the whole URL, anchored at both ends (a fragment aside, which
 * never reaches the network), in the verdict's tab only: its main frame, or (a subresource
 * verdict) every other type, which is what a rule naming no type matches and exactly what
 * decide() takes as a subresource. No other host, path, query or tab can match it: the regex
 * is the URL itself, not a pattern a host name can satisfy from another part of a URL.
 */
export function loopAllowRule(v: VerdictScope): RuleBody {
  return {
    priority: LOOP_ALLOW_PRIORITY,
    action: { type: 'allow' },
    condition: {
      // Chromium matches a request with its fragment (kept across a redirect that sets none);
      // the verdict's URL has none (decide() reads URLs without it).
      regexFilter: `^${escapeRegex(v.url)}(?:#.*)?$`,
      isUrlFilterCaseSensitive: true,
      tabIds: [v.tabId],
      ...(v.kind === 'subresource' ? {} : { resourceTypes: ['main_frame' as const] }),
    },
  };
}

export function loopAllowRules(verdicts: readonly VerdictScope[]): RuleBody[] {
  const key = (v: VerdictScope) => `${v.kind ?? 'navigation'} ${v.tabId} ${v.url}`;
  const seen = new Set<string>();
  return [...verdicts]
    .sort((a, b) => a.tabId - b.tabId || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
    .filter((v) => !seen.has(key(v)) && seen.add(key(v)))
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
