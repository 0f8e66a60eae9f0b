import { describe, expect, it } from 'vitest';
import { LoopGuard } from '../src/https-first/loop-guard.js';

const upgrade = (u: string) => u.replace(/^http:/, 'https:');

/** One subresource loop seen to its verdict: https://URL answers with a redirect to http://URL. */
function loop(guard: LoopGuard, tabId: number, http: string, id: string): void {
  const https = upgrade(http);
  for (let round = 0; round < 3; round++)
    guard.noteSubresourceRedirect(
      { requestId: id, tabId, type: 'image', url: https, redirectUrl: http },
      upgrade,
    );
}

/**
 * Attack (b): verdicts are bounded per tab (4 subresources) and in all (8), oldest pushed out.
 * A hostile site open in two tabs (a page and the window it opened) answers four images per
 * tab with HTTPS->HTTP loops, fresh URLs each round: the total bound then pushes out the
 * verdict of an unrelated site in a third tab, whose image loops again on its next request.
 * The guard's own comment says a site "pushes out its own tab's first": here it pushes out
 * another tab's, and keeps doing so for as long as it runs.
 */
describe("attack: a site's loop verdicts push out another tab's", () => {
  it("keeps an unrelated tab's verdict while a site in two other tabs floods", () => {
    const guard = new LoopGuard();
    const victim = 'http://cdn.victim.test/logo.png';
    loop(guard, 7, victim, 'victim');
    expect(guard.allows(victim, 7, 'subresource')).toBe(true);
    for (let round = 0; round < 3; round++)
      for (const tabId of [11, 12])
        for (let i = 0; i < 4; i++)
          loop(
            guard,
            tabId,
            `http://evil.test/${round}/${tabId}/${i}.gif`,
            `e${round}-${tabId}-${i}`,
          );
    // The hostile site's verdicts stay within its own tabs' share…
    expect(guard.live().filter((v) => v.tabId !== 7).length).toBeLessThanOrEqual(8);
    // …yet the victim's one verdict, in a tab the hostile site never touched, is gone.
    expect(guard.allows(victim, 7, 'subresource')).toBe(true);
  });
});
