import { describe, expect, it } from 'vitest';
import { RequestDecider } from '../src/decision/request-decider.js';
import type { DecisionSources } from '../src/decision/state.js';
import { SiteList } from '../src/site-rules/site-pattern.js';

/**
 * The background decides a request with the tab's top-level page as it last saw it: a page on a
 * site switched "off" keeps its subresources as they are, whatever host they come from.
 */
function sources(off: string[]): DecisionSources {
  return {
    settings: { globalEnabled: true, httpsFirst: true },
    disabled: new SiteList(off),
    httpAllowed: new SiteList([]),
    httpOnce: new Set(),
    userEngine: null,
    rewrite: () => ({ rewritten: null, ruleset: null }),
    excludedBy: () => null,
    loopBlocked: () => false,
  };
}

const KNOWN = 'cdn.example.net';
const image = (tabId: number) => ({ url: `http://${KNOWN}/logo.png`, type: 'image', tabId });

describe('RequestDecider', () => {
  it("decides a subresource with its tab's top-level page, and forgets it with the tab", () => {
    const s = sources(['news.example.org']);
    const decider = new RequestDecider((host) => host === KNOWN);
    // The page itself: a navigation is its own top-level page.
    expect(decider.decide(s, { url: 'http://news.example.org/', type: 'main_frame', tabId: 7 })).toMatchObject({ action: 'leave', reason: 'site-off' });
    decider.navigated(7, 'http://news.example.org/');
    expect(decider.topUrl(7)).toBe('http://news.example.org/');
    expect(decider.decide(s, image(7))).toMatchObject({ action: 'leave', reason: 'site-off', entry: 'news.example.org' });
    // Another tab, on a site not switched off: the known host's image is upgraded.
    decider.navigated(8, 'http://blog.example.com/');
    expect(decider.decide(s, image(8))).toEqual({ action: 'upgrade', url: `https://${KNOWN}/logo.png`, reason: 'known-host' });
    decider.tabClosed(7);
    expect(decider.topUrl(7)).toBeUndefined();
    expect(decider.decide(s, image(7))).toMatchObject({ action: 'upgrade', reason: 'known-host' });
  });
});
