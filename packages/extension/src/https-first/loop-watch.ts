/**
 * Feeds the loop guard (loop-guard.ts) every redirect the browser reports, and ends each
 * request chain's count when the chain ends. Both browsers; what a verdict changes is theirs.
 */
import { ALL_URLS, ext } from '../platform/browser-api.js';
import { httpVersion } from './tracker.js';
import type { LoopGuard } from './loop-guard.js';

export interface LoopWatchOptions {
  /** The guard gave up on `host`: stop upgrading it this session. */
  looping(host: string): void;
  /**
   * Chromium: the browser may give up on the loop ("too many redirects") before the allow rule
   * lands; the page is then loaded once more, over HTTP. The rule is in place by then, so this
   * cannot loop again.
   */
  reloadGivenUp?: boolean;
}

export function watchForLoops(guard: LoopGuard, options: LoopWatchOptions): void {
  ext.webRequest.onBeforeRedirect.addListener(
    (d) => {
      const host = guard.noteRedirect(d);
      if (host !== null) options.looping(host);
    },
    { urls: ALL_URLS },
  );
  ext.webRequest.onCompleted.addListener((d) => guard.finish(d.requestId), { urls: ALL_URLS });
  ext.webRequest.onErrorOccurred.addListener(
    (d) => {
      guard.finish(d.requestId);
      if (options.reloadGivenUp !== true) return;
      if (d.type === 'main_frame' && d.error === 'net::ERR_TOO_MANY_REDIRECTS' && d.tabId >= 0 && guard.isUrlBlocked(d.url)) {
        void ext.tabs.update(d.tabId, { url: httpVersion(d.url) });
      }
    },
    { urls: ALL_URLS },
  );
}
