import type { LoopGuard } from './loop-guard.js';

/** Anything that rewrites: the default Engine, or the ScopedEngine of channels over the defaults. */
export interface Rewriter {
  rewrite(url: string): string | null;
}

export interface BlockingResponse {
  redirectUrl?: string;
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
