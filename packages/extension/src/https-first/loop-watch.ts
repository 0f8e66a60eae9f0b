/**
 * Feeds the loop guard (loop-guard.ts) every redirect the browser reports, and ends each
 * request chain's count when the chain ends. Both browsers; what a verdict changes is theirs.
 */
import { ALL_URLS, ext } from '../platform/browser-api.js';
import type { LoopGuard, LoopVerdict } from './loop-guard.js';

export interface LoopWatchOptions {
  /** The guard reached a verdict: this URL may load over HTTP in this tab for a while. */
  looping(verdict: LoopVerdict): void;
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

export function watchForLoops(guard: LoopGuard, options: LoopWatchOptions): void {
  ext.webRequest.onBeforeRedirect.addListener((d) => {
    const verdict = guard.noteRedirect(d);
    if (verdict !== null) options.looping(verdict);
  }, MAIN_FRAMES);
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
