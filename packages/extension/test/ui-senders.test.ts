import { describe, expect, it } from 'vitest';
import { PageTickets } from '../src/https-first/page-tickets.js';
import { classifySender, messageAllowed, refusal } from '../src/routing/ui-senders.js';
import { fallbackPageUrl } from '../src/https-first/fallback-address.js';
import type { UiRequest } from '../src/protocol/ui-protocol.js';

const ID = 'abcdefghijklmnop';
const BASE = `chrome-extension://${ID}/`;
const sender = (url: string, more: { tab?: number; frameId?: number; id?: string } = {}) =>
  classifySender(
    {
      id: more.id ?? ID,
      url,
      tab: more.tab === undefined ? undefined : { id: more.tab },
      frameId: more.frameId,
    },
    ID,
    BASE,
  );

let counter = 0;
const fixedRandom = (b: Uint8Array) => b.fill(++counter);

describe('who may ask the background what', () => {
  it('knows our pages by address, and nothing else', () => {
    expect(sender(`${BASE}ui/popup.html`).page).toBe('popup');
    expect(sender(`${BASE}ui/options.html#sites`, { tab: 3 }).page).toBe('options');
    expect(sender(`${BASE}ui/fallback.html?url=x`, { tab: 3 }).page).toBe('fallback');
    expect(sender(`${BASE}ui/handoff.html#http://a.test/`, { tab: 3 }).page).toBe('handoff');
    // Another extension, a web page, a page of ours we do not know, a look-alike origin.
    expect(sender(`${BASE}ui/popup.html`, { id: 'other' }).page).toBeNull();
    expect(sender('https://evil.test/ui/popup.html', { tab: 3 }).page).toBeNull();
    expect(sender(`${BASE}ui/unknown.html`).page).toBeNull();
    expect(sender(`chrome-extension://${ID}.evil.test/ui/popup.html`).page).toBeNull();
    expect(classifySender(undefined, ID, BASE).page).toBeNull();
  });

  it('refuses framed pages and everything from pages that are not ours', () => {
    const tickets = new PageTickets(fixedRandom);
    const framed = sender(`${BASE}ui/options.html`, { tab: 3, frameId: 7 });
    expect(refusal(framed, { type: 'settings' }, tickets)).toMatch(/frames/);
    expect(messageAllowed(framed)).toBe(false);
    expect(refusal(sender('https://evil.test/'), { type: 'settings' }, tickets)).not.toBeNull();
    expect(messageAllowed(sender(`${BASE}ui/popup.html`))).toBe(true);
    expect(messageAllowed(sender(`${BASE}ui/fallback.html`, { tab: 3 }))).toBe(false);
  });

  it('lets the popup and options page ask everything', () => {
    const tickets = new PageTickets(fixedRandom);
    for (const page of ['popup', 'options']) {
      const s = sender(`${BASE}ui/${page}.html`, { tab: page === 'options' ? 2 : undefined });
      expect(
        refusal(s, { type: 'siteAdd', list: 'httpAllowedSites', entry: 'a.test' }, tickets),
      ).toBeNull();
      expect(
        refusal(s, { type: 'setFlag', flag: 'globalEnabled', value: false }, tickets),
      ).toBeNull();
    }
  });

  it('lets the fallback page allow HTTP only with its ticket, in its tab, for its own host', () => {
    const tickets = new PageTickets(fixedRandom);
    const url = 'http://down.test:8080/a?b=1';
    const ticket = tickets.issue(5, url);
    const page = fallbackPageUrl(`${BASE}ui/fallback.html`, url, 'timeout', { ticket });
    const ok = sender(page, { tab: 5 });
    const once: UiRequest = { type: 'httpOnce', url };
    expect(refusal(ok, once, tickets)).toBeNull();
    // For its own tab only (a sign-in network), never another tab's.
    expect(refusal(ok, { ...once, tabId: 5 }, tickets)).toBeNull();
    expect(refusal(ok, { ...once, tabId: 6 }, tickets)).not.toBeNull();
    expect(
      refusal(ok, { type: 'siteAdd', list: 'httpAllowedSites', entry: 'down.test:8080' }, tickets),
    ).toBeNull();
    expect(
      refusal(ok, { type: 'siteState', entry: 'down.test:8080', state: 'rulesets' }, tickets),
    ).toBeNull();
    // Another host, another list or state, a setting: refused.
    expect(refusal(ok, { type: 'httpOnce', url: 'http://victim.test/' }, tickets)).not.toBeNull();
    expect(
      refusal(ok, { type: 'siteAdd', list: 'httpAllowedSites', entry: 'victim.test' }, tickets),
    ).not.toBeNull();
    expect(
      refusal(ok, { type: 'siteAdd', list: 'disabledSites', entry: 'down.test:8080' }, tickets),
    ).not.toBeNull();
    expect(
      refusal(ok, { type: 'siteState', entry: 'down.test:8080', state: 'off' }, tickets),
    ).not.toBeNull();
    expect(
      refusal(ok, { type: 'setFlag', flag: 'httpsFirst', value: false }, tickets),
    ).not.toBeNull();
    expect(refusal(ok, { type: 'knownHosts', forget: true }, tickets)).not.toBeNull();
    // The same address in another tab, framed, without the ticket, with a guessed one, or
    // pointing its `url` at another site: refused.
    expect(refusal(sender(page, { tab: 6 }), once, tickets)).not.toBeNull();
    expect(refusal(sender(page, { tab: 5, frameId: 3 }), once, tickets)).not.toBeNull();
    const bare = fallbackPageUrl(`${BASE}ui/fallback.html`, url, 'timeout');
    expect(refusal(sender(bare, { tab: 5 }), once, tickets)).not.toBeNull();
    const guessed = fallbackPageUrl(`${BASE}ui/fallback.html`, url, 'timeout', {
      ticket: '0'.repeat(32),
    });
    expect(refusal(sender(guessed, { tab: 5 }), once, tickets)).not.toBeNull();
    const moved = fallbackPageUrl(`${BASE}ui/fallback.html`, 'http://victim.test/', 'timeout', {
      ticket,
    });
    expect(
      refusal(sender(moved, { tab: 5 }), { type: 'httpOnce', url: 'http://victim.test/' }, tickets),
    ).not.toBeNull();
    // Reads are fine without a ticket; the tab closing takes its tickets away.
    expect(refusal(sender(bare, { tab: 5 }), { type: 'settings' }, tickets)).toBeNull();
    tickets.dropTab(5);
    expect(refusal(ok, once, tickets)).not.toBeNull();
  });

  it('keeps tickets across a restart of the background, and drops damaged ones', () => {
    const tickets = new PageTickets(fixedRandom);
    const ticket = tickets.issue(1, 'http://a.test/');
    const copy = new PageTickets();
    copy.restore(
      JSON.parse(
        JSON.stringify([
          ...tickets.snapshot(),
          [2, [{ secret: 'short', url: 'http://b.test/' }]],
          'junk',
        ]),
      ),
    );
    expect(
      copy.check(
        1,
        `${BASE}ui/fallback.html?url=${encodeURIComponent('http://a.test/')}&ticket=${ticket}`,
      ),
    ).toBe('http://a.test/');
    expect(copy.snapshot().map(([tab]) => tab)).toEqual([1]);
  });

  it('never lets the handoff page change settings', () => {
    const s = sender(`${BASE}ui/handoff.html#http://a.test/`, { tab: 1 });
    expect(
      refusal(s, { type: 'httpOnce', url: 'http://a.test/' }, new PageTickets()),
    ).not.toBeNull();
  });
});
