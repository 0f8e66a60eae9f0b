import { describe, expect, it } from 'vitest';
import { loopAllowRule, loopAllowRules } from '../src/https-first/loop-rules.js';
import {
  LOOP_RULES_MAX,
  LOOP_VERDICT_MS,
  LoopGuard,
  TAB_DOWNGRADE_WINDOW_MS,
} from '../src/https-first/loop-guard.js';
import { DnrEmulator } from '@httpsify/engine/dnr';

const redirect = (
  requestId: string,
  url: string,
  redirectUrl: string,
  more: { tabId?: number; type?: string } = {},
) => ({
  requestId,
  tabId: more.tabId ?? 1,
  type: more.type ?? 'main_frame',
  url,
  redirectUrl,
});

/** One round of a cycle in chain `id`: our upgrade of `http`, its answer sending it back. */
const round = (
  guard: LoopGuard,
  id: string,
  http: string,
  https = http.replace(/^http:/, 'https:'),
  tabId = 1,
) => {
  expect(guard.noteRedirect(redirect(id, http, https, { tabId }))).toBeNull();
  return guard.noteRedirect(redirect(id, https, http, { tabId }));
};

/*
 * Semantics changed deliberately (issue 38): a verdict is one URL as one tab's page for a while,
 * reached only by a cycle (the same URL coming back after our upgrade), never a host for the
 * session. The earlier tests asserted host-wide verdicts from `https://H/a -> http://H/b`.
 */
describe('redirect-loop guard', () => {
  it('gives a verdict after the same URL came back three times in one chain: that URL, that tab', () => {
    let now = 1000;
    const guard = new LoopGuard(3, () => now);
    expect(round(guard, '7', 'http://loop.test/p?q=1')).toBeNull();
    expect(round(guard, '7', 'http://loop.test/p?q=1')).toBeNull();
    expect(guard.allows('http://loop.test/p?q=1', 1)).toBe(false);
    expect(round(guard, '7', 'http://loop.test/p?q=1')).toEqual({
      kind: 'navigation',
      tabId: 1,
      url: 'http://loop.test/p?q=1',
      until: 1000 + LOOP_VERDICT_MS,
    });
    expect(guard.verdictOf('7')?.url).toBe('http://loop.test/p?q=1');
    expect(guard.allows('http://loop.test/p?q=1', 1)).toBe(true);
    // A fragment never reaches the network: the same page.
    expect(guard.allows('http://loop.test/p?q=1#top', 1)).toBe(true);
    // Never another URL of the host, another tab, or the host as such.
    expect(guard.allows('http://loop.test/p?q=2', 1)).toBe(false);
    expect(guard.allows('http://loop.test/', 1)).toBe(false);
    expect(guard.allows('http://loop.test/p?q=1', 2)).toBe(false);
    expect(guard.allows('http://loop.test:8080/p?q=1', 1)).toBe(false);
    // Reported once while it lasts.
    expect(round(guard, '7', 'http://loop.test/p?q=1')).toBeNull();
    expect(guard.blockedHosts()).toEqual(['loop.test']);
    // Bounded in time.
    now += LOOP_VERDICT_MS;
    expect(guard.allows('http://loop.test/p?q=1', 1)).toBe(false);
    expect(guard.blockedHosts()).toEqual([]);
  });

  it("follows a ruleset's rewrite: the cycle is the URL and the very target it was sent to", () => {
    const guard = new LoopGuard(2);
    expect(round(guard, '1', 'http://a.test/x', 'https://www.a.test/x')).toBeNull();
    expect(round(guard, '1', 'http://a.test/x', 'https://www.a.test/x')).toMatchObject({
      url: 'http://a.test/x',
    });
  });

  it('never takes an open redirect, another host, different URLs, a subresource or restarts as a loop', () => {
    const guard = new LoopGuard(2);
    for (let i = 0; i < 10; i++) {
      // The victim's own open redirect, in every shape: it sends to a URL other than its own.
      for (const [from, to] of [
        ['https://victim.test/redir?to=http://victim.test/', 'http://victim.test/'],
        [
          `https://victim.test/redir?to=${encodeURIComponent('https://victim.test/redir?to=http://victim.test/x')}`,
          'http://victim.test/x',
        ],
        ['https://victim.test:443/go#frag', 'http://victim.test/go2#frag'],
        ['https://victim.test/a', 'http://victim.test/b'],
        ['https://victim.test/b', 'http://victim.test/a'],
      ]) {
        guard.noteRedirect(
          redirect('9', to.replace(/^https?:/, 'http:'), to.replace(/^http:/, 'https:')),
        );
        expect(guard.noteRedirect(redirect('9', from, to))).toBeNull();
      }
      // An attacker's HTTPS site sending the chain to the victim's HTTP URL, again and again.
      expect(
        guard.noteRedirect(redirect('9', 'http://victim.test/', 'https://victim.test/')),
      ).toBeNull();
      expect(
        guard.noteRedirect(redirect('9', `https://evil.test/${i}`, 'http://victim.test/')),
      ).toBeNull();
      // A subresource cycling (its page's protection is not the subresource's to drop).
      guard.noteRedirect(
        redirect('10', 'http://victim.test/img', 'https://victim.test/img', { type: 'image' }),
      );
      expect(
        guard.noteRedirect(
          redirect('10', 'https://victim.test/img', 'http://victim.test/img', { type: 'image' }),
        ),
      ).toBeNull();
      // No tab: not a navigation the user sees.
      expect(round(guard, '11', 'http://victim.test/', undefined, -1)).toBeNull();
      // The downgrade without our upgrade before it in this chain (a page starting it again).
      expect(
        guard.noteRedirect(redirect(`n${i}`, 'https://victim.test/', 'http://victim.test/')),
      ).toBeNull();
      guard.finish(`n${i}`);
    }
    expect(guard.blockedHosts()).toEqual([]);
  });

  it('forgets finished chains', () => {
    const guard = new LoopGuard(2);
    expect(round(guard, '1', 'http://a.test/')).toBeNull();
    guard.finish('1');
    expect(round(guard, '1', 'http://a.test/')).toBeNull();
    expect(round(guard, '1', 'http://a.test/')).not.toBeNull();
  });

  it('remembers per tab which https:// URL sent the page to which http:// URL, for a while', () => {
    let now = 1000;
    const guard = new LoopGuard(3, () => now);
    guard.noteRedirect(redirect('1', 'https://new.test/lb', 'http://lb.test/old', { tabId: 4 }));
    guard.noteRedirect(redirect('2', 'https://new.test/lb', 'http://lb.test/old', { tabId: 4 }));
    expect(guard.recentTabDowngrades(4, 'https://new.test/lb', 'http://lb.test/old')).toBe(2);
    // Another tab, another source URL (even of the same host), another target: nothing.
    expect(guard.recentTabDowngrades(5, 'https://new.test/lb', 'http://lb.test/old')).toBe(0);
    expect(guard.recentTabDowngrades(4, 'https://new.test/', 'http://lb.test/old')).toBe(0);
    expect(guard.recentTabDowngrades(4, 'https://new.test/lb', 'http://lb.test/other')).toBe(0);
    now += TAB_DOWNGRADE_WINDOW_MS;
    expect(guard.recentTabDowngrades(4, 'https://new.test/lb', 'http://lb.test/old')).toBe(0);
  });

  it('restores live verdicts only, drops malformed ones, and ends them with the tab or on request', () => {
    const now = 5000;
    const guard = new LoopGuard(3, () => now);
    guard.restore([
      { tabId: 2, url: 'http://x.test/a', until: now + 1000 },
      { tabId: 2, url: 'http://x.test/b', until: now - 1 },
      { tabId: 2, url: 'https://x.test/c', until: now + 1000 },
      { tabId: -1, url: 'http://x.test/d', until: now + 1000 },
      { tabId: 2, url: 'http://X.test/e', until: now + 1000 },
      { tabId: 2, url: 'http://x.test/f', until: now + LOOP_VERDICT_MS * 100 },
      'x.test',
      null,
    ]);
    expect(guard.live()).toEqual([
      { kind: 'navigation', tabId: 2, url: 'http://x.test/a', until: now + 1000 },
    ]);
    expect(guard.tabClosed(2)).toBe(true);
    expect(guard.live()).toEqual([]);
    guard.restore([{ tabId: 3, url: 'http://x.test/a', until: now + 1000 }]);
    guard.forget('x.test');
    expect(guard.blockedHosts()).toEqual([]);
  });
});

/** One subresource request `id` coming back from `https` to `http`, as the browser reports it. */
const back = (
  guard: LoopGuard,
  id: string,
  http: string,
  more: { tabId?: number; type?: string; https?: string; ours?: string | null } = {},
) => {
  const https = more.https ?? http.replace(/^http:/, 'https:');
  // Our decision for the http:// URL: by default, exactly the https:// URL it came back from.
  const ours = more.ours === undefined ? https : more.ours;
  return guard.noteSubresourceRedirect(
    redirect(id, https, http, { tabId: more.tabId ?? 1, type: more.type ?? 'image' }),
    (url) => (url === http.replace(/#.*$/, '') ? ours : null),
  );
};

describe('redirect-loop guard: subresources', () => {
  it('gives a verdict when the same request came back to the URL we upgrade three times', () => {
    let now = 1000;
    const guard = new LoopGuard(3, () => now);
    const img = 'http://cdn.test/i.png?v=1';
    expect(back(guard, '4', img)).toBeNull();
    expect(back(guard, '4', img)).toBeNull();
    expect(back(guard, '4', img)).toEqual({
      kind: 'subresource',
      tabId: 1,
      url: img,
      until: 1000 + LOOP_VERDICT_MS,
    });
    expect(guard.allows(img, 1, 'subresource')).toBe(true);
    // Not as a page, not in another tab, not another URL of the host.
    expect(guard.allows(img, 1, 'navigation')).toBe(false);
    expect(guard.allows(img, 2, 'subresource')).toBe(false);
    expect(guard.allows('http://cdn.test/i.png?v=2', 1, 'subresource')).toBe(false);
    // Its host's cookies stay as they are while it lasts; the user can retry the host.
    expect(guard.isHostBlocked('cdn.test')).toBe(true);
    expect(guard.blockedHosts()).toEqual(['cdn.test']);
    now += LOOP_VERDICT_MS;
    expect(guard.allows(img, 1, 'subresource')).toBe(false);
  });

  it('takes no loop that is not ours, not one request, not in a tab, or not a subresource', () => {
    const guard = new LoopGuard(2);
    const img = 'http://b.test/x.png';
    for (let i = 0; i < 5; i++) {
      // Page A's open redirect to B's http:// URL: we upgrade that to B's own https:// URL,
      // not to A's redirector, so A's answer is not our loop.
      expect(
        back(guard, 'a', img, {
          https: `https://a.test/go?to=${encodeURIComponent(img)}`,
          ours: 'https://b.test/x.png',
        }),
      ).toBeNull();
      // Our decision leaves the URL alone (the site, not us, sends it around).
      expect(back(guard, 'b', img, { ours: null })).toBeNull();
      // A ruleset sends it elsewhere than where it came back from.
      expect(back(guard, 'c', img, { ours: 'https://www.b.test/x.png' })).toBeNull();
      // Each round a new request (a page asking again): no chain.
      expect(back(guard, `n${i}`, img)).toBeNull();
      // No tab (a worker): a rule for "no tab" would cover every worker of every site.
      expect(back(guard, 'd', img, { tabId: -1 })).toBeNull();
      // A top-level page: the page guard's, with its own evidence.
      expect(back(guard, 'e', img, { type: 'main_frame' })).toBeNull();
    }
    // An http:// -> https:// or https:// -> https:// redirect is no return.
    for (let i = 0; i < 5; i++) {
      expect(
        guard.noteSubresourceRedirect(
          redirect('f', 'https://b.test/1', 'https://b.test/2', { type: 'image' }),
          () => 'https://b.test/1',
        ),
      ).toBeNull();
    }
    expect(guard.live()).toEqual([]);
  });

  it("bounds verdicts per tab and in all, and never pushes out a page's verdict", () => {
    const guard = new LoopGuard(1);
    expect(round(guard, 'p', 'http://page.test/')).not.toBeNull();
    // One hostile tab answering 50 URLs with loops keeps its 4 newest.
    for (let i = 0; i < 50; i++)
      expect(back(guard, `h${i}`, `http://evil.test/${i}`, { tabId: 5 })).not.toBeNull();
    const ofTab = (t: number) =>
      guard.live().filter((v) => v.kind === 'subresource' && v.tabId === t);
    expect(ofTab(5).map((v) => v.url)).toEqual(
      Array.from({ length: 4 }, (_, i) => `http://evil.test/${46 + i}`),
    );
    // Many tabs: 8 subresource verdicts in all; each time the tab holding the most loses its
    // oldest, so no tab keeps more than its share once others need room.
    for (let t = 10; t < 20; t++)
      for (let i = 0; i < 4; i++)
        back(guard, `t${t}-${i}`, `http://evil.test/${t}/${i}`, { tabId: t });
    expect(guard.live().filter((v) => v.kind === 'subresource')).toHaveLength(8);
    for (let t = 5; t < 20; t++) expect(ofTab(t).length).toBeLessThanOrEqual(1);
    // A victim's one verdict outlives a flood of two other tabs filling the bound.
    const victim = new LoopGuard(1);
    back(victim, 'v', 'http://victim.test/i.gif', { tabId: 3 });
    for (const t of [5, 6])
      for (let i = 0; i < 4; i++)
        back(victim, `f${t}-${i}`, `http://evil.test/${t}/${i}`, { tabId: t });
    expect(victim.allows('http://victim.test/i.gif', 3, 'subresource')).toBe(true);
    expect(guard.allows('http://page.test/', 1)).toBe(true);
    // Never more live verdicts than the loops layer's rules held in reserve.
    expect(guard.live().length).toBeLessThanOrEqual(LOOP_RULES_MAX);
  });

  it("bounds pages' verdicts per tab and in all", () => {
    const guard = new LoopGuard(1);
    for (let i = 0; i < 30; i++) round(guard, `p${i}`, `http://loop${i}.test/`);
    const pages = guard.live().filter((v) => v.kind === 'navigation');
    expect(pages.map((v) => v.url)).toEqual(
      Array.from({ length: 8 }, (_, i) => `http://loop${22 + i}.test/`),
    );
    expect(guard.live().length).toBeLessThanOrEqual(LOOP_RULES_MAX);
  });

  it('restores subresource verdicts as subresource verdicts, and drops unknown kinds', () => {
    const now = 5000;
    const guard = new LoopGuard(3, () => now);
    guard.restore([
      { kind: 'subresource', tabId: 2, url: 'http://x.test/i.png', until: now + 1000 },
      { kind: 'everything', tabId: 2, url: 'http://x.test/j.png', until: now + 1000 },
    ]);
    expect(guard.allows('http://x.test/i.png', 2, 'subresource')).toBe(true);
    expect(guard.allows('http://x.test/i.png', 2, 'navigation')).toBe(false);
    expect(guard.live()).toHaveLength(1);
    expect(guard.tabClosed(2)).toBe(true);
    expect(guard.live()).toEqual([]);
  });
});

describe('the loop verdict rule (Chromium)', () => {
  it('matches exactly the verdict URL as a main frame, and nothing that merely names it', () => {
    const rule = loopAllowRule({ tabId: 4, url: 'http://loop.test/p?q=1.2' });
    expect(rule.condition).toMatchObject({ tabIds: [4], resourceTypes: ['main_frame'] });
    const dnr = new DnrEmulator(
      loopAllowRules([{ tabId: 4, url: 'http://loop.test/p?q=1.2' }]).map((r, i) => ({
        ...r,
        id: i + 1,
      })),
    );
    const allowed = (url: string, type: 'main_frame' | 'image' = 'main_frame') =>
      dnr.match({ url, type, tabId: 4 }).rule !== null;
    expect(allowed('http://loop.test/p?q=1.2')).toBe(true);
    for (const url of [
      'http://loop.test/p?q=1x2',
      'http://loop.test/p?q=1.2&x',
      'http://loop.test/',
      'http://loop.test:8080/p?q=1.2',
      'http://evil.test/?http://loop.test/p?q=1.2',
      'http://loop.test@evil.test/p?q=1.2',
      'http://evil.test/http://loop.test/p?q=1.2',
      'http://loop.test.evil.test/p?q=1.2',
      'https://loop.test/p?q=1.2',
    ])
      expect(allowed(url), url).toBe(false);
    expect(allowed('http://loop.test/p?q=1.2', 'image')).toBe(false);
    expect(
      dnr.match({ url: 'http://loop.test/p?q=1.2', type: 'main_frame', tabId: 5 }).rule,
    ).toBeNull();
  });

  it("a subresource verdict's rule: exactly that URL in that tab, every type but the page", () => {
    const url = 'http://cdn.test/i.png?a=1.2';
    const dnr = new DnrEmulator(
      loopAllowRules([{ kind: 'subresource', tabId: 4, url }]).map((r, i) => ({ ...r, id: i + 1 })),
    );
    const allowed = (u: string, type: 'main_frame' | 'image' | 'script' | 'sub_frame', tabId = 4) =>
      dnr.match({ url: u, type, tabId }).rule !== null;
    for (const type of ['image', 'script', 'sub_frame'] as const)
      expect(allowed(url, type)).toBe(true);
    expect(allowed(url, 'main_frame')).toBe(false);
    expect(allowed(url, 'image', 5)).toBe(false);
    expect(allowed(url, 'image', -1)).toBe(false);
    for (const other of [
      'http://cdn.test/i.png?a=1x2',
      'http://cdn.test/i.png',
      'http://evil.test/?http://cdn.test/i.png?a=1.2',
      'http://cdn.test.evil.test/i.png?a=1.2',
    ])
      expect(allowed(other, 'image'), other).toBe(false);
  });
});
