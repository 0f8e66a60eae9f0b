import type { Engine } from '@httpsify/engine';
import { ext } from '../platform/browser-api.js';
import type { LoopGuard } from '../https-first/loop-guard.js';
import { exposeForTests, TEST_HOOKS } from '../platform/test-hooks.js';
import { classifySender, messageAllowed } from './ui-senders.js';

/**
 * What pages of the extension (popup, options) may ask the background. Every request gets a
 * response object; errors come back as `{ error }`.
 */
export type BackgroundRequest =
  | { type: 'getState' }
  | { type: 'rewrite'; url: string }
  | { type: 'setRulesetActive'; name: string; active: boolean | null }
  | { type: 'clearLoopGuard' };

export interface BackgroundState {
  rulesetCount: number;
  overrides: Record<string, boolean>;
  loopBlockedHosts: string[];
}

export interface BackgroundContext {
  engine: Engine;
  guard: LoopGuard;
  /**
   * Switch a ruleset (null: back to its default) the way the popup does: through the settings
   * store's lock, so a concurrent change of the options page is never lost. `{ error }` when refused.
   */
  setRuleset(name: string, active: boolean | null): Promise<unknown>;
  /** The loop guard was reset: drop whatever kept those hosts on HTTP. */
  loopGuardCleared(): Promise<void>;
}

export function createMessageHandler(
  context: () => Promise<BackgroundContext>,
): (request: BackgroundRequest) => Promise<unknown> {
  return async (request) => {
    const ctx = await context();
    switch (request.type) {
      case 'getState':
        return state(ctx);
      case 'rewrite': {
        const outcome = ctx.engine.rewriteWithRuleset(request.url);
        let host = '';
        try {
          host = new URL(request.url).hostname;
        } catch {
          // Not a URL: no host has a verdict.
        }
        // Whether a loop verdict holds for a URL of this host (in some tab).
        return { ...outcome, loopBlocked: host !== '' && ctx.guard.isHostBlocked(host) };
      }
      case 'setRulesetActive': {
        const result = await ctx.setRuleset(request.name, request.active);
        if (typeof result === 'object' && result !== null && 'error' in result) return result;
        return state(ctx);
      }
      case 'clearLoopGuard':
        ctx.guard.clear();
        await ctx.loopGuardCleared();
        return state(ctx);
      default:
        return { error: `unknown request ${(request as { type?: unknown }).type}` };
    }
  };
}

function state(ctx: BackgroundContext): BackgroundState {
  return {
    rulesetCount: ctx.engine.rulesetCount,
    overrides: Object.fromEntries(ctx.engine.activeOverrides()),
    loopBlockedHosts: ctx.guard.blockedHosts(),
  };
}

/**
 * The background's message API for the test suite (test builds only: no page of ours sends
 * runtime messages; they use the port, ui-port.ts), also as `globalThis.httpsify`.
 */
export function listenForMessages(
  ready: Promise<Engine>,
  context: Omit<BackgroundContext, 'engine'>,
): void {
  if (!TEST_HOOKS) return;
  const handleMessage = createMessageHandler(async () => ({ ...context, engine: await ready }));
  ext.runtime.onMessage.addListener((request: BackgroundRequest, sender, sendResponse) => {
    if (!messageAllowed(classifySender(sender))) {
      sendResponse({ error: 'not an httpsify page' });
      return false;
    }
    handleMessage(request).then(sendResponse, (err: unknown) =>
      sendResponse({ error: String(err) }),
    );
    return true;
  });
  exposeForTests('httpsify', { handleMessage, ready });
}
