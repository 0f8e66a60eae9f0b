import type { Engine } from '@httpsify/engine';
import type { LoopGuard } from './loop-guard.js';

export interface BlockingResponse {
  redirectUrl?: string;
}

/**
 * The blocking `webRequest.onBeforeRequest` decision (Firefox): the engine's own rewrite,
 * unless the URL's host is in a redirect loop this session.
 */
export function upgradeDecision(engine: Engine, guard: LoopGuard, url: string): BlockingResponse {
  if (guard.isUrlBlocked(url)) return {};
  const rewritten = engine.rewrite(url);
  return rewritten !== null && rewritten !== url ? { redirectUrl: rewritten } : {};
}
