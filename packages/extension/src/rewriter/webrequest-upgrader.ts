import type { LoopGuard } from '../https-first/loop-guard.js';

/** Anything that rewrites: the default Engine, or the ScopedEngine of channels over the defaults. */
export interface Rewriter {
  rewrite(url: string): string | null;
}

export interface BlockingResponse {
  redirectUrl?: string;
}

/** What Firefox tells about where a request comes from. */
export interface RequestOrigin {
  tabId: number;
  /** The document or worker that made the request (Firefox only). */
  originUrl?: string;
}

/**
 * A request our own background (or one of our pages outside a tab) sent: the fallback's and
 * the captive-portal check's probes, the channels' downloads. They go out as sent; a ruleset
 * upgrading `http://host/` would otherwise turn "does it answer over HTTP?" into another
 * HTTPS attempt. `ownOrigin` is `moz-extension://<uuid>/`.
 */
export function isOwnRequest(d: RequestOrigin, ownOrigin: string): boolean {
  return d.tabId < 0 && d.originUrl !== undefined && d.originUrl.startsWith(ownOrigin);
}

/**
 * The blocking `webRequest.onBeforeRequest` decision (Firefox): the engine's own rewrite,
 * unless the URL's host is in a redirect loop this session.
 */
export function upgradeDecision(rewriter: Rewriter, guard: LoopGuard, url: string): BlockingResponse {
  if (guard.isUrlBlocked(url)) return {};
  const rewritten = rewriter.rewrite(url);
  return rewritten !== null && rewritten !== url ? { redirectUrl: rewritten } : {};
}
