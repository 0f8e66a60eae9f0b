/**
 * Sites left on HTTP ("rulesets only") are not left there forever: after a period each exact
 * entry is probed over HTTPS (origin only, no cookies), and one that answers goes back to
 * "upgrade everything". Wildcard entries name no host to probe and stay as they are.
 * The clocks live in storage.local, machine-local like the known hosts.
 */
import { parseSitePattern } from '../site-rules/site-pattern.js';

export const RECHECK_STORAGE_KEY = 'httpRecheck';
export const RECHECK_PERIOD_MS = 14 * 24 * 60 * 60 * 1000;
const MAX_RESTORED = 20;

export interface RecheckState {
  v: 1;
  /** Entry -> when its clock started or it was last probed. */
  checked: Record<string, number>;
  /** Entries taken off the list because HTTPS answered, newest last (shown on the options page). */
  restored: { entry: string; at: number }[];
}

export function parseRecheckState(raw: unknown): RecheckState {
  const state: RecheckState = { v: 1, checked: {}, restored: [] };
  if (typeof raw !== 'object' || raw === null || (raw as { v?: unknown }).v !== 1) return state;
  const o = raw as { checked?: unknown; restored?: unknown };
  if (typeof o.checked === 'object' && o.checked !== null) {
    for (const [entry, at] of Object.entries(o.checked))
      if (typeof at === 'number' && Number.isFinite(at)) state.checked[entry] = at;
  }
  if (Array.isArray(o.restored)) {
    for (const r of o.restored) {
      const x = r as { entry?: unknown; at?: unknown } | null;
      if (typeof x?.entry === 'string' && typeof x.at === 'number')
        state.restored.push({ entry: x.entry, at: x.at });
    }
  }
  state.restored = state.restored.slice(-MAX_RESTORED);
  return state;
}

/** Which entries are due now; entries seen for the first time start their clock. */
export function dueForRecheck(
  state: RecheckState,
  entries: readonly string[],
  now: number,
  periodMs = RECHECK_PERIOD_MS,
): { due: string[]; state: RecheckState } {
  const checked: Record<string, number> = {};
  const due: string[] = [];
  for (const entry of entries) {
    const p = parseSitePattern(entry);
    if (p === null || p.wildcard) continue;
    const at = state.checked[p.text];
    // A clock in the future (a changed system clock) restarts.
    if (at === undefined || at > now) checked[p.text] = now;
    else {
      checked[p.text] = at;
      if (now - at >= periodMs) due.push(p.text);
    }
  }
  return { due, state: { ...state, checked } };
}

export function recordRecheck(
  state: RecheckState,
  entry: string,
  httpsAnswers: boolean,
  now: number,
): RecheckState {
  const checked = { ...state.checked };
  if (httpsAnswers) {
    delete checked[entry];
    return {
      ...state,
      checked,
      restored: [...state.restored, { entry, at: now }].slice(-MAX_RESTORED),
    };
  }
  checked[entry] = now;
  return { ...state, checked };
}
