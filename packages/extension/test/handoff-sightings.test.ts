import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handoffAddress } from '../src/dnr/handoff-rules.js';
import { HandoffSightings } from '../src/handoff/main-frame-handoff.js';

/**
 * The worker answers a navigation to the handoff page with a redirect only when webRequest saw
 * the rules send that tab's request there (issue 43); the page's address alone is anybody's.
 */
const PAGE = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop/ui/handoff.html';

describe('the URL a handoff page address carries', () => {
  it("after the rules' `?`, its fragment included; after `#` in the older form", () => {
    expect(handoffAddress(`${PAGE}?http://a.test/p?q=1#frag`)).toBe('http://a.test/p?q=1#frag');
    expect(handoffAddress(`${PAGE}?http://a.test/p#`)).toBe('http://a.test/p#');
    expect(handoffAddress(`${PAGE}#http://a.test/p?q=1#frag`)).toBe('http://a.test/p?q=1#frag');
    expect(handoffAddress(PAGE)).toBe('');
  });
});

describe('sightings of the rules sending a tab to the handoff page', () => {
  let now = 0;
  let s: HandoffSightings;
  beforeEach(() => {
    vi.useFakeTimers();
    now = 1_000_000;
    s = new HandoffSightings(() => now);
  });
  afterEach(() => vi.useRealTimers());
  const at = (url: string) => `${PAGE}?${url}`;

  it('answer for the address and tab webRequest reported, for a few seconds', () => {
    s.saw(at('http://a.test/'), { tabId: 3, url: 'http://a.test/' });
    expect(s.get(at('http://a.test/'))).toEqual({ tabId: 3, url: 'http://a.test/' });
    expect(s.get(at('http://a.test/'), 4)).toBeUndefined();
    expect(s.get(at('http://b.test/'))).toBeUndefined();
    now += 11_000;
    expect(s.get(at('http://a.test/'))).toBeUndefined();
  });

  it('a starting worker waits for the report that follows the navigation, not forever', async () => {
    const early = s.wait(at('http://a.test/'), 1000);
    s.saw(at('http://a.test/'), { tabId: 3, url: 'http://a.test/' });
    await expect(early).resolves.toEqual({ tabId: 3, url: 'http://a.test/' });
    const never = s.wait(at('http://forged.test/'), 1000);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(never).resolves.toBeUndefined();
    // Nothing is left waiting for it.
    expect((s as unknown as { waiting: Map<string, unknown> }).waiting.size).toBe(0);
  });

  it('the same URL in the same tab again at once is left to the page (a loop’s next round)', () => {
    const seen = { tabId: 3, url: 'http://a.test/' };
    expect(s.serve(seen)).toBe(true);
    expect(s.serve(seen)).toBe(false);
    expect(s.serve({ tabId: 4, url: 'http://a.test/' })).toBe(true);
    now += 6000;
    expect(s.serve(seen)).toBe(true);
  });

  it('keeps a bounded number', () => {
    for (let i = 0; i < 100; i++)
      s.saw(at(`http://h${i}.test/`), { tabId: 1, url: `http://h${i}.test/` });
    expect(s.get(at('http://h0.test/'))).toBeUndefined();
    expect(s.get(at('http://h99.test/'))).toEqual({ tabId: 1, url: 'http://h99.test/' });
  });
});
