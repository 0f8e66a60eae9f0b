import { describe, expect, it } from 'vitest';
import { RequestDecider } from '../src/decision/request-decider.js';
import type { ProtectionSnapshot } from '../src/decision/snapshot.js';
import { SiteList } from '../src/site-rules/site-pattern.js';

/**
 * The background decides a request with the tab's top-level page as it last saw it: a page on a
 * site switched "off" keeps its subresources as they are, whatever host they come from.
 */
function sources(off: string[]): ProtectionSnapshot {
  return {
    globalEnabled: true,
    httpsFirst: true,
    disabled: new SiteList(off),
    httpAllowed: new SiteList([]),
    httpOnce: new Set(),
    httpOnceInTabs: new Map(),
    userRules: null,
    rulesets: { rewrite: () => ({ rewritten: null, ruleset: null }), excludedBy: () => null },
    loopVerdict: () => false,
    dnr: { disabledSites: [], httpAllowedSites: [], activeUserRulesets: [] },
  };
}

const KNOWN = 'cdn.example.net';
const image = (tabId: number) => ({ url: `http://${KNOWN}/logo.png`, type: 'image', tabId });

describe('RequestDecider', () => {
  it("decides a subresource with its tab's top-level page, and forgets it with the tab", () => {
    const s = sources(['news.example.org']);
    const decider = new RequestDecider((host) => host === KNOWN);
    // The page itself: a navigation is its own top-level page.
    expect(
      decider.decide(s, { url: 'http://news.example.org/', type: 'main_frame', tabId: 7 }),
    ).toMatchObject({ action: 'leave', reason: 'site-off' });
    const main = (tabId: number, url: string, statusCode: number) =>
      decider.committed({ tabId, type: 'main_frame', url, statusCode });
    main(7, 'http://news.example.org/', 200);
    expect(decider.topUrl(7)).toBe('http://news.example.org/');
    expect(decider.decide(s, image(7))).toMatchObject({
      action: 'leave',
      reason: 'site-off',
      entry: 'news.example.org',
    });
    // Another tab, on a site not switched off: the known host's image is upgraded.
    main(8, 'http://blog.example.com/', 200);
    expect(decider.decide(s, image(8))).toEqual({
      action: 'upgrade',
      url: `https://${KNOWN}/logo.png`,
      reason: 'known-host',
    });
    decider.tabClosed(7);
    expect(decider.topUrl(7)).toBeUndefined();
    expect(decider.decide(s, image(7))).toMatchObject({ action: 'upgrade', reason: 'known-host' });
  });

  it('takes the page from the request itself, or from what committed: never from a navigation only started', () => {
    const s = sources(['off.example.org']);
    const decider = new RequestDecider((host) => host === KNOWN);
    decider.committed({
      tabId: 3,
      type: 'main_frame',
      url: 'http://page.example.com/',
      statusCode: 200,
    });
    // Started and stopped (no response), a 204, a redirect hop: none is the tab's page.
    expect(
      decider.decide(s, { url: 'http://off.example.org/', type: 'main_frame', tabId: 3 }),
    ).toMatchObject({ reason: 'site-off' });
    for (const statusCode of [204, 205, 301, 302])
      decider.committed({
        tabId: 3,
        type: 'main_frame',
        url: 'http://off.example.org/',
        statusCode,
      });
    expect(decider.decide(s, image(3))).toMatchObject({ action: 'upgrade', reason: 'known-host' });
    // Firefox names the request's own document: it outranks whatever the tab record says.
    decider.committed({
      tabId: 3,
      type: 'main_frame',
      url: 'http://off.example.org/',
      statusCode: 200,
    });
    const fromPage = {
      ...image(3),
      frameId: 0,
      frameAncestors: [],
      documentUrl: 'http://page.example.com/',
    };
    expect(decider.decide(s, fromPage)).toMatchObject({ action: 'upgrade', reason: 'known-host' });
    // A frame of the switched-off site inside another page: the top-level page decides.
    const framed = {
      ...image(3),
      frameId: 5,
      documentUrl: 'http://off.example.org/frame',
      frameAncestors: [{ url: 'http://page.example.com/' }],
    };
    expect(decider.decide(s, framed)).toMatchObject({ action: 'upgrade', reason: 'known-host' });
    const onOff = {
      ...image(3),
      frameId: 5,
      documentUrl: 'http://page.example.com/f',
      frameAncestors: [{ url: 'http://off.example.org/' }],
    };
    expect(decider.decide(s, onOff)).toMatchObject({ action: 'leave', reason: 'site-off' });
  });
});
