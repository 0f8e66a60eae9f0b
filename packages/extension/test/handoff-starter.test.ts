import { describe, expect, it } from 'vitest';
import { RequestObserver, type ObserverDeps } from '../src/status/request-observer.js';
import { TabActivity } from '../src/status/tab-activity.js';

/**
 * Chromium's handoff page navigates for the request it took over, so the observer is the only
 * one that knows who started that request (the user, or a web page). It may vouch for that one
 * request only: the page is web-accessible, so a page loaded later in the same tab can open it
 * with any address and must not inherit the user's earlier navigation (attack report, issue 38).
 */
const OWN = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';
const PAGE = `${OWN}/ui/handoff.html`;
const TAB = 7;

function observer(): { obs: RequestObserver; fallbacks: boolean[] } {
  const fallbacks: boolean[] = [];
  const controller = { rulesetNamesForHost: () => [] };
  const deps = {
    controller: () => controller,
    ready: Promise.resolve(controller),
    // Every handed-off navigation here is an HTTPS-first upgrade (what may forget a host).
    decider: {
      decide: (_c: unknown, d: { url: string }) => ({
        action: 'upgrade',
        reason: 'https-first',
        url: d.url.replace(/^http:/, 'https:'),
      }),
      pageOf: () => undefined,
      topUrl: () => undefined,
    },
    fallback: {
      navigated: () => undefined,
      upgrading: () => undefined,
      handedOff: (_t: number, _u: string, _a: string, byUser: boolean) => fallbacks.push(byUser),
    },
    activity: new TabActivity(),
    stats: { upgraded: () => undefined },
    activityChanged: () => undefined,
    refreshIcon: () => undefined,
    ownOrigin: `${OWN}/`,
  } as unknown as ObserverDeps;
  return { obs: new RequestObserver(deps), fallbacks };
}

/** The handoff's decision, handed on with its answer. */
const https = (url: string) =>
  ({ action: 'upgrade', reason: 'https-first', url: url.replace(/^http:/, 'https:') }) as const;

let requests = 0;
const main = (url: string) =>
  ({
    requestId: String(++requests),
    tabId: TAB,
    type: 'main_frame',
    url,
  }) as chrome.webRequest.OnBeforeRequestDetails;
/** The rules sent a main frame to the handoff page; `initiator` absent: the user typed it. */
const toHandoff = (url: string, initiator?: string) =>
  ({
    ...main(url),
    redirectUrl: `${PAGE}?${url}`,
    initiator,
  }) as unknown as chrome.webRequest.OnBeforeRedirectDetails;

describe('the handoff page vouches only for the request it took over', () => {
  it("the user's typed address: its target is the user's, once", () => {
    const { obs, fallbacks } = observer();
    obs.observeRedirect(toHandoff('http://intranet./'));
    obs.handedOff(TAB, 'http://intranet./', 'https://intranet/', https('http://intranet./'));
    obs.observe(main('https://intranet/'));
    expect(obs.handoffStarter(TAB, 'https://intranet/')).toBeNull();
    expect(fallbacks).toEqual([true]);
    // Spent: the same target again is no longer vouched for.
    expect(obs.handoffStarter(TAB, 'https://intranet/')).toBeUndefined();
  });

  it('a page started it: the target is that page’s', () => {
    const { obs, fallbacks } = observer();
    obs.observeRedirect(toHandoff('http://bank.test/', 'https://evil.test'));
    obs.handedOff(TAB, 'http://bank.test/', 'https://bank.test/', https('http://bank.test/'));
    expect(obs.handoffStarter(TAB, 'https://bank.test/')).toEqual({
      page: 'https://evil.test',
      host: 'evil.test',
    });
    expect(fallbacks).toEqual([false]);
  });

  it('a later page in the tab that opens the handoff page itself gets nothing of the user', () => {
    const { obs, fallbacks } = observer();
    // The user typed an address the handoff let through over HTTP, and stays in the tab.
    obs.observeRedirect(toHandoff('http://admin:admin@192.168.1.1/'));
    obs.observe(main('http://admin:admin@192.168.1.1/'));
    // Later, a page in that tab sends it to the handoff page with an address of its choosing.
    obs.observe(main('https://evil.test/'));
    obs.handedOff(
      TAB,
      'http://x1.evil.test/',
      'https://x1.evil.test/',
      https('http://x1.evil.test/'),
    );
    expect(obs.handoffStarter(TAB, 'https://x1.evil.test/')).toBeUndefined();
    // The very page the user typed does the same: another address, still nothing.
    obs.observeRedirect(toHandoff('http://intranet./'));
    obs.observe(main('http://intranet./'));
    obs.handedOff(
      TAB,
      'http://bank.test/redir',
      'https://bank.test/redir',
      https('http://bank.test/redir'),
    );
    expect(obs.handoffStarter(TAB, 'https://bank.test/redir')).toBeUndefined();
    expect(fallbacks).toEqual([false, false]);
  });

  it('a handoff already counted on its way in still records who started it', () => {
    const { obs, fallbacks } = observer();
    const typed = main('http://lb.test/');
    obs.observe(typed);
    obs.observeRedirect({
      ...typed,
      redirectUrl: `${PAGE}?http://lb.test/`,
    } as unknown as chrome.webRequest.OnBeforeRedirectDetails);
    obs.handedOff(TAB, 'http://lb.test/', 'https://lb.test/', https('http://lb.test/'));
    expect(obs.handoffStarter(TAB, 'https://lb.test/')).toBeNull();
    expect(fallbacks).toEqual([true]);
  });
});
