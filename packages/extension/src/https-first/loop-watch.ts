/**
 * Feeds the loop guard (loop-guard.ts) every redirect of a top-level page and every redirect of
 * a subresource away from https://, and ends each page chain's count when the chain ends. Both
 * browsers; what a verdict changes is theirs.
 */
import type { Decision } from '../decision/decide.js';
import type { RequestDetails } from '../decision/request-decider.js';
import { ALL_URLS, ext } from '../platform/browser-api.js';
import type { LoopGuard, LoopVerdict } from './loop-guard.js';

export interface LoopWatchOptions {
  /** The guard reached a verdict: this URL may load over HTTP in this tab for a while. */
  looping(verdict: LoopVerdict): void;
  /**
   * Where the extension's decision (decide()) sends this http:// request now, or null when it
   * leaves it alone: a subresource's loop is ours only if we upgrade its URL to where it came
   * back from.
   */
  upgradeOf(request: RequestDetails): string | null;
  /**
   * Chromium: the browser may give up on the loop ("too many redirects") before the allow rule
   * lands; the page is then loaded once more, over HTTP. The rule is in place by then, so this
   * cannot loop again.
   */
  reloadGivenUp?: boolean;
}

/**
 * The guard follows top-level chains only: its listeners take no subresource's events (each
 * is a message to the extension's one thread; a page of 300 upgraded images brought 900).
 */
const MAIN_FRAMES = { urls: ALL_URLS, types: ['main_frame' as const] };
/**
 * Subresources: only redirects of https:// URLs, the server's answer that closes a loop (our
 * own upgrades, http:// -> https://, would be one event per upgraded request).
 */
const FROM_HTTPS = { urls: ['https://*/*'] };

/** Where a decision sends its request: its https:// (or ruleset) URL when it upgrades, else null. */
export function upgradeTarget(decision: Decision | null): string | null {
  return decision?.action === 'upgrade' ? decision.url : null;
}

export function watchForLoops(guard: LoopGuard, options: LoopWatchOptions): void {
  ext.webRequest.onBeforeRedirect.addListener((d) => {
    const verdict = guard.noteRedirect(d);
    if (verdict !== null) options.looping(verdict);
  }, MAIN_FRAMES);
  ext.webRequest.onBeforeRedirect.addListener((d) => {
    if (d.type === 'main_frame') return;
    const verdict = guard.noteSubresourceRedirect(d, (url) => options.upgradeOf({ ...d, url }));
    if (verdict !== null) options.looping(verdict);
  }, FROM_HTTPS);
  ext.webRequest.onCompleted.addListener((d) => guard.finish(d.requestId), MAIN_FRAMES);
  ext.webRequest.onErrorOccurred.addListener((d) => {
    const verdict = guard.verdictOf(d.requestId);
    guard.finish(d.requestId);
    if (options.reloadGivenUp !== true || verdict === undefined) return;
    // Only the chain that reached the verdict, in its own tab, to exactly its URL.
    if (
      d.type === 'main_frame' &&
      d.error === 'net::ERR_TOO_MANY_REDIRECTS' &&
      d.tabId === verdict.tabId &&
      guard.allows(verdict.url, d.tabId)
    ) {
      void ext.tabs.update(d.tabId, { url: verdict.url });
    }
  }, MAIN_FRAMES);
}
