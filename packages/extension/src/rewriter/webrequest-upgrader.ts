import type { Engine } from '@httpsify/engine';
import {
  ext,
  type FirefoxRequestDetails,
  onBeforeRequestBlocking,
} from '../platform/browser-api.js';
import type { Decision } from '../decision/decide.js';
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
 * The blocking `webRequest.onBeforeRequest` decision (Firefox) before the settings are read:
 * the engine's own rewrite, unless a loop verdict lets exactly this page load over HTTP in its tab.
 */
export function upgradeDecision(
  rewriter: Rewriter,
  guard: LoopGuard,
  d: { url: string; type: string; tabId: number },
): BlockingResponse {
  const { url } = d;
  if (d.type === 'main_frame' && guard.allows(url, d.tabId)) return {};
  const rewritten = rewriter.rewrite(url);
  return rewritten !== null && rewritten !== url ? { redirectUrl: rewritten } : {};
}

export interface BlockingSources {
  /** Resolves once the bundled engine is loaded; `engine()` is it from then on. */
  ready: Promise<Engine>;
  engine(): Engine | null;
  /** The decision (decision/decide.ts) with the settings of now; null until they are read. */
  decide(d: RequestDetails): Decision | null;
  /**
   * The request was answered as `decision` says (null: before the settings, by the bundled
   * rulesets): handed on, so that nothing decides it again (the observer, the statistics).
   */
  decided(d: RequestDetails, decision: Decision | null): void;
  /** The channels over the defaults; null until the settings are read. */
  rewriter(): Rewriter | null;
  guard: LoopGuard;
}

type RequestDetails = FirefoxRequestDetails;

/**
 * Firefox: the blocking `webRequest.onBeforeRequest` listener for every http:// request. It
 * answers with decide(); until the settings are read, the bundled rulesets alone decide (the
 * loop guard still applies). The extension's own requests go out as sent.
 */
export function listenBlocking(sources: BlockingSources): void {
  const ownOrigin = ext.runtime.getURL('');
  const answer = (e: Engine, d: RequestDetails): BlockingResponse => {
    const decision = sources.decide(d);
    const response =
      decision === null
        ? upgradeDecision(sources.rewriter() ?? e, sources.guard, d)
        : decision.action === 'upgrade'
          ? { redirectUrl: decision.url }
          : {};
    sources.decided(d, decision);
    return response;
  };
  onBeforeRequestBlocking(['http://*/*'], (d) => {
    if (isOwnRequest(d, ownOrigin)) return {};
    const engine = sources.engine();
    // Requests that arrive while the bundle is still loading wait for it (Firefox allows a promise).
    return engine !== null ? answer(engine, d) : sources.ready.then((e) => answer(e, d));
  });
}
