import { describe, expect, it } from 'vitest';
import { defaultRulesetsDir, loadRulesets } from '@httpsify/engine/node';
import {
  bundledDecision,
  isOwnRequest,
  type Rewriter,
} from '../src/rewriter/webrequest-upgrader.js';
import { LoopGuard } from '../src/https-first/loop-guard.js';

/** What the blocking listener answers before the settings are read: decide() over the bundle. */
function upgradeDecision(
  rewriter: Rewriter,
  guard: LoopGuard,
  d: { url: string; type: string; tabId: number },
): { redirectUrl?: string } {
  const decision = bundledDecision(rewriter, guard, d);
  return decision.action === 'upgrade' ? { redirectUrl: decision.url } : {};
}

/** The Firefox build decides with the engine itself: exactly the engine's rewrite. */
describe('Firefox blocking webRequest decision', () => {
  const { engine, rulesets } = loadRulesets([defaultRulesetsDir()]);
  const urls = rulesets.flatMap((rs) => rs.tests.map((t) => t.url));

  it('redirects exactly where the engine rewrites, on the default rulesets', () => {
    expect(urls.length).toBeGreaterThan(10);
    let redirected = 0;
    for (const url of urls) {
      const rewritten = engine.rewrite(url);
      const decision = upgradeDecision(engine, new LoopGuard(), {
        url,
        type: 'main_frame',
        tabId: 1,
      });
      expect(decision).toEqual(
        rewritten !== null && rewritten !== url ? { redirectUrl: rewritten } : {},
      );
      if (decision.redirectUrl) redirected++;
    }
    expect(redirected).toBeGreaterThan(0);
  });

  it('leaves on HTTP exactly the page a loop verdict is for, in its tab', () => {
    const url = new URL(urls.find((u) => engine.rewrite(u) !== null)!);
    url.hash = '';
    const target = engine.rewrite(url.href)!;
    const guard = new LoopGuard(1);
    guard.noteRedirect({
      requestId: '1',
      tabId: 1,
      type: 'main_frame',
      url: url.href,
      redirectUrl: target,
    });
    guard.noteRedirect({
      requestId: '1',
      tabId: 1,
      type: 'main_frame',
      url: target,
      redirectUrl: url.href,
    });
    expect(upgradeDecision(engine, guard, { url: url.href, type: 'main_frame', tabId: 1 })).toEqual(
      {},
    );
    // Another tab, or the same URL as a subresource: upgraded as ever.
    expect(upgradeDecision(engine, guard, { url: url.href, type: 'main_frame', tabId: 2 })).toEqual(
      { redirectUrl: target },
    );
    expect(upgradeDecision(engine, guard, { url: url.href, type: 'image', tabId: 1 })).toEqual({
      redirectUrl: target,
    });
  });

  it("lets the extension's own background requests (probes) go as sent, nothing else", () => {
    const own = 'moz-extension://0f1e2d3c/';
    expect(
      isOwnRequest({ tabId: -1, originUrl: `${own}_generated_background_page.html` }, own),
    ).toBe(true);
    // A page in a tab, another extension, a request Firefox gives no origin for: decided as usual.
    expect(isOwnRequest({ tabId: 3, originUrl: `${own}ui/options.html` }, own)).toBe(false);
    expect(
      isOwnRequest(
        { tabId: -1, originUrl: 'moz-extension://other/_generated_background_page.html' },
        own,
      ),
    ).toBe(false);
    expect(isOwnRequest({ tabId: -1 }, own)).toBe(false);
  });
});
