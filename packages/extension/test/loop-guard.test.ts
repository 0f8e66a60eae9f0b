import { describe, expect, it } from 'vitest';
import { LoopGuard, TAB_DOWNGRADE_WINDOW_MS } from '../src/https-first/loop-guard.js';

const redirect = (requestId: string, url: string, redirectUrl: string, more: { tabId?: number; type?: string } = {}) => ({
  requestId,
  tabId: more.tabId ?? 1,
  type: more.type ?? 'main_frame',
  url,
  redirectUrl,
});

describe('redirect-loop guard', () => {
  it('gives up on a host after three HTTPS→HTTP downgrades of its own in one request chain', () => {
    const guard = new LoopGuard();
    const hop = () => {
      // The upgrade itself (http → https) never counts.
      expect(guard.noteRedirect(redirect('7', 'http://loop.test/', 'https://loop.test/'))).toBeNull();
      return guard.noteRedirect(redirect('7', 'https://loop.test/', 'http://loop.test/'));
    };
    expect(hop()).toBeNull();
    expect(hop()).toBeNull();
    expect(guard.isUrlBlocked('http://loop.test/a')).toBe(false);
    expect(hop()).toBe('loop.test');
    expect(guard.isUrlBlocked('http://loop.test/a')).toBe(true);
    expect(guard.isHostBlocked('.loop.test')).toBe(true);
    // Reported once; the allow rule is already in place.
    expect(hop()).toBeNull();
    expect(guard.blockedHosts()).toEqual(['loop.test']);
  });

  it('counts per request and per host, and forgets finished chains', () => {
    const guard = new LoopGuard(2);
    expect(guard.noteRedirect(redirect('1', 'https://a.test/', 'http://a.test/'))).toBeNull();
    expect(guard.noteRedirect(redirect('2', 'https://a.test/', 'http://a.test/'))).toBeNull();
    expect(guard.noteRedirect(redirect('1', 'https://b.test/', 'http://b.test/'))).toBeNull();
    guard.finish('1');
    expect(guard.noteRedirect(redirect('1', 'https://a.test/', 'http://a.test/'))).toBeNull();
    expect(guard.noteRedirect(redirect('2', 'https://a.test/', 'http://a.test/x'))).toBe('a.test');
    expect(guard.isUrlBlocked('http://b.test/')).toBe(false);
  });

  it("never takes another host's redirects, a subresource's or repeated navigations as a loop", () => {
    const guard = new LoopGuard();
    for (let i = 0; i < 10; i++) {
      // An attacker's HTTPS site sending the chain to the victim's HTTP URL, again and again.
      expect(guard.noteRedirect(redirect('9', `https://evil.test/${i}`, 'http://victim.test/'))).toBeNull();
      expect(guard.noteRedirect(redirect('9', 'http://victim.test/', `https://evil.test/${i + 1}`))).toBeNull();
      // A subresource of the victim looping (its page's protection is not the subresource's to drop).
      expect(guard.noteRedirect(redirect('10', 'https://victim.test/img', 'http://victim.test/img', { type: 'image' }))).toBeNull();
      // No tab: not a navigation the user sees.
      expect(guard.noteRedirect(redirect('11', 'https://victim.test/', 'http://victim.test/', { tabId: -1 }))).toBeNull();
      // A page starting the navigation again: each start is a new chain.
      expect(guard.noteRedirect(redirect(`n${i}`, 'https://victim.test/', 'http://victim.test/'))).toBeNull();
      guard.finish(`n${i}`);
    }
    expect(guard.blockedHosts()).toEqual([]);
    // Spelling tricks: a trailing dot is the same host; userinfo and ports do not make it another.
    expect(guard.noteRedirect(redirect('12', 'https://evil.test/', 'http://victim.test./'))).toBeNull();
    expect(guard.noteRedirect(redirect('12', 'https://victim.test.evil.test/', 'http://victim.test/'))).toBeNull();
    expect(guard.blockedHosts()).toEqual([]);
  });

  it('remembers per tab which HTTPS host sent the page to which HTTP URL, for a while', () => {
    let now = 1000;
    const guard = new LoopGuard(3, () => now);
    guard.noteRedirect(redirect('1', 'https://new.test/lb', 'http://lb.test/old', { tabId: 4 }));
    guard.noteRedirect(redirect('2', 'https://new.test/lb', 'http://lb.test/old', { tabId: 4 }));
    expect(guard.recentTabDowngrades(4, 'new.test', 'http://lb.test/old')).toBe(2);
    // Another tab, another source host, another URL: nothing.
    expect(guard.recentTabDowngrades(5, 'new.test', 'http://lb.test/old')).toBe(0);
    expect(guard.recentTabDowngrades(4, 'lb.test', 'http://lb.test/old')).toBe(0);
    expect(guard.recentTabDowngrades(4, 'new.test', 'http://lb.test/other')).toBe(0);
    now += TAB_DOWNGRADE_WINDOW_MS;
    expect(guard.recentTabDowngrades(4, 'new.test', 'http://lb.test/old')).toBe(0);
  });

  it('restores hosts recorded earlier in the session, drops malformed ones, and clears them on request', () => {
    const guard = new LoopGuard();
    guard.restore(['x.test', 'bad host', 42 as unknown as string]);
    expect(guard.isUrlBlocked('http://x.test:8080/')).toBe(true);
    expect(guard.blockedHosts()).toEqual(['x.test']);
    guard.clear();
    expect(guard.blockedHosts()).toEqual([]);
  });
});
