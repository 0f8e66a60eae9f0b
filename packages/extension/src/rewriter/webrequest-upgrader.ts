import type { Engine } from '@httpsify/engine';
import {
  ext,
  type FirefoxRequestDetails,
  onBeforeRequestBlocking,
} from '../platform/browser-api.js';
import { decide, type Decision } from '../decision/decide.js';
import { bundledOnlySnapshot, snapshotState } from '../decision/snapshot.js';
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
 * The decision (Firefox's blocking listener) before the settings are read: decide() over the
 * bundled rulesets alone, so the loop guard still applies (a verdict lets exactly this URL
 * load over HTTP in its tab) and the rest is the engine's own rewrite.
 */
export function bundledDecision(
  rewriter: Rewriter,
  guard: Pick<LoopGuard, 'allows'>,
  d: { url: string; type: string; tabId: number },
): Decision {
  return decide({
    url: d.url,
    kind: d.type === 'main_frame' ? 'navigation' : 'subresource',
    tab: { tabId: d.tabId },
    state: snapshotState(
      bundledOnlySnapshot(rewriter, (url, tabId, kind) => guard.allows(url, tabId, kind)),
    ),
  });
}

export interface BlockingSources {
  /** Resolves once the bundled engine is loaded. */
  ready: Promise<Engine>;
  /** Resolves once the settings and the installed channels are read, or could not be (bounded). */
  settled: Promise<unknown>;
  /** The decision (decision/decide.ts) with the settings of now; null until they are read. */
  decide(d: RequestDetails): Decision | null;
  /**
   * The request was answered as `decision` says: handed on, so that nothing decides it again
   * (the observer, the statistics, the fallback).
   */
  decided(d: RequestDetails, decision: Decision): void;
  /** The channels over the defaults; null until the settings are read. */
  rewriter(): Rewriter | null;
  guard: LoopGuard;
}

type RequestDetails = FirefoxRequestDetails;

/**
 * Firefox: the blocking `webRequest.onBeforeRequest` listener for every http:// request. It
 * answers with decide() over the user's settings. Firefox stops an idle background (an event
 * page) and the request that wakes it arrives before they are read: it waits for them and for
 * the installed channels (Firefox takes a promise), as answering without them would ignore
 * HTTPS-first, the global switch, the sites switched off and the channels' rules. Only if they
 * cannot be read (an error, or the bound of `settled`) is it decide() over the bundled rulesets
 * alone (`bundledDecision`). The extension's own requests go out as sent.
 */
export function listenBlocking(sources: BlockingSources): void {
  const ownOrigin = ext.runtime.getURL('');
  const respond = (d: RequestDetails, decision: Decision): BlockingResponse => {
    sources.decided(d, decision);
    return decision.action === 'upgrade' ? { redirectUrl: decision.url } : {};
  };
  let settled = false;
  const settle = () => {
    settled = true;
  };
  const settling = sources.settled.then(settle, settle);
  const answer = (d: RequestDetails): BlockingResponse | Promise<BlockingResponse> => {
    const decision = settled ? sources.decide(d) : null;
    if (decision !== null) return respond(d, decision);
    return Promise.all([sources.ready, settling]).then(([e]) =>
      respond(d, sources.decide(d) ?? bundledDecision(sources.rewriter() ?? e, sources.guard, d)),
    );
  };
  onBeforeRequestBlocking(['http://*/*'], (d) => {
    if (isOwnRequest(d, ownOrigin)) return {};
    return answer(d);
  });
}
