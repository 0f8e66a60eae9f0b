import { describe, expect, it, vi } from 'vitest';
import { probeCaptivePortal } from '../src/https-first/captive-portal.js';
import { fallbackPageUrl } from '../src/https-first/fallback-address.js';
import {
  HttpsFirstTracker,
  isFallbackError,
  type FallbackEvent,
} from '../src/https-first/tracker.js';
import { TabActivity } from '../src/status/tab-activity.js';
import { badgeText, iconState } from '../src/status/icon.js';

describe('HTTPS-first fallback', () => {
  it('falls back on TLS and connection errors, not on aborts', () => {
    for (const e of [
      'net::ERR_SSL_PROTOCOL_ERROR',
      'net::ERR_CERT_AUTHORITY_INVALID',
      'net::ERR_CONNECTION_REFUSED',
      'net::ERR_CONNECTION_RESET',
      'NS_ERROR_CONNECTION_REFUSED',
      'SSL_ERROR_BAD_CERT_DOMAIN',
      // The HTTPS host's name does not resolve, or it answers without a page.
      'net::ERR_NAME_NOT_RESOLVED',
      'NS_ERROR_UNKNOWN_HOST',
      'net::ERR_INVALID_RESPONSE',
    ]) {
      expect(isFallbackError(e), e).toBe(true);
    }
    for (const e of [
      'net::ERR_ABORTED',
      'net::ERR_BLOCKED_BY_CLIENT',
      'NS_BINDING_ABORTED',
      'NS_ERROR_UNEXPECTED',
      'NS_ERROR_GENERATE_FAILURE(NS_ERROR_MODULE_NETWORK, 2)',
      '',
    ]) {
      expect(isFallbackError(e), e).toBe(false);
    }
  });

  it('falls back on the localized NSS message Firefox reports for TLS and certificate failures', () => {
    // What Firefox ESR's webRequest.onErrorOccurred says when TLS is answered with plain HTTP.
    for (const e of [
      'SSL received a record that exceeded the maximum permissible length.',
      "Peer's Certificate issuer is not recognized.",
      'Das Zertifikat ist abgelaufen.',
    ]) {
      expect(isFallbackError(e), e).toBe(true);
    }
  });

  it('reports a failed upgrade once, and a slow one after the timeout', () => {
    vi.useFakeTimers();
    try {
      const events: FallbackEvent[] = [];
      const tracker = new HttpsFirstTracker((e) => events.push(e), 3000);
      tracker.started('1', 7, 'http://a.test/', true);
      tracker.errored('1', 'net::ERR_CONNECTION_REFUSED');
      tracker.errored('1', 'net::ERR_CONNECTION_REFUSED');
      tracker.started('2', 8, 'http://slow.test/');
      vi.advanceTimersByTime(2999);
      expect(events).toHaveLength(1);
      vi.advanceTimersByTime(1);
      tracker.started('3', 9, 'http://fast.test/');
      tracker.responded('3');
      tracker.started('4', 9, 'http://gone.test/');
      tracker.errored('4', 'net::ERR_ABORTED');
      vi.advanceTimersByTime(10_000);
      expect(events).toEqual([
        {
          tabId: 7,
          url: 'http://a.test/',
          attempt: 'https://a.test/',
          reason: 'net::ERR_CONNECTION_REFUSED',
          // Only the user's own navigation may make the fallback forget anything.
          byUser: true,
        },
        {
          tabId: 8,
          url: 'http://slow.test/',
          attempt: 'https://slow.test/',
          reason: 'timeout',
          byUser: false,
        },
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a failure after a redirect to another host is that host's: the user's own host is not blamed", () => {
    vi.useFakeTimers();
    try {
      const events: FallbackEvent[] = [];
      const tracker = new HttpsFirstTracker((e) => events.push(e), 3000);
      // The user typed both; one site's HTTPS answered with a redirect to a host that never does
      // (an open redirect), the other to a page of its own.
      tracker.started('1', 7, 'http://bank.test/redir', true);
      tracker.redirected('1', 'https://hang.evil.test/');
      tracker.started('2', 8, 'http://own.test/', true);
      tracker.redirected('2', 'https://own.test/home');
      vi.advanceTimersByTime(3000);
      expect(events.map((e) => [e.url, e.attempt, e.byUser])).toEqual([
        ['http://bank.test/redir', 'https://hang.evil.test/', false],
        ['http://own.test/', 'https://own.test/home', true],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops following a navigation sent to an extension page or superseded in its tab', () => {
    vi.useFakeTimers();
    try {
      const events: FallbackEvent[] = [];
      const tracker = new HttpsFirstTracker((e) => events.push(e), 3000);
      // Chromium's handoff page: the https:// page it opens is another request.
      tracker.started('1', 7, 'http://dot.test./');
      tracker.redirected('1', 'chrome-extension://abc/ui/handoff.html#http://dot.test./');
      // A redirect between web pages is still the same navigation; the last address is the attempt.
      tracker.started('2', 8, 'http://moved.test/');
      tracker.redirected('2', 'https://www.moved.test/');
      // The user went elsewhere in tab 9 before the first request answered.
      tracker.started('3', 9, 'http://first.test/');
      tracker.superseded(9, '4');
      tracker.started('4', 9, 'http://second.test/');
      tracker.superseded(9, '4');
      vi.advanceTimersByTime(3000);
      expect(events).toEqual([
        {
          tabId: 8,
          url: 'http://moved.test/',
          attempt: 'https://www.moved.test/',
          reason: 'timeout',
          byUser: false,
        },
        {
          tabId: 9,
          url: 'http://second.test/',
          attempt: 'https://second.test/',
          reason: 'timeout',
          byUser: false,
        },
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('encodes the original URL so & and # survive', () => {
    const url = fallbackPageUrl(
      'chrome-extension://x/ui/fallback.html',
      'http://a.test/?q=1&r=2#frag',
      'timeout',
    );
    expect(new URL(url).searchParams.get('url')).toBe('http://a.test/?q=1&r=2#frag');
    const full = new URL(
      fallbackPageUrl('x:/i.html', 'http://a.test/', 'timeout', {
        twin: 'https://www.a.test/',
        back: 2,
      }),
    ).searchParams;
    expect([full.get('twin'), full.get('back')]).toEqual(['https://www.a.test/', '2']);
    expect(
      new URL(
        fallbackPageUrl('x:/i.html', 'http://a.test/', 'timeout', { twin: null }),
      ).searchParams.has('twin'),
    ).toBe(false);
  });
});

describe('captive portal probe', () => {
  const respond = (body: string | null, init: ResponseInit) =>
    (async () => new Response(body, init)) as unknown as typeof fetch;
  it('tells open, captive and offline networks apart', async () => {
    expect(await probeCaptivePortal('http://p/', respond('success\n', { status: 200 }))).toBe(
      'open',
    );
    expect(await probeCaptivePortal('http://p/', respond(null, { status: 204 }))).toBe('open');
    expect(
      await probeCaptivePortal(
        'http://p/',
        respond('<html>Log in to Hotel WiFi</html>', { status: 200 }),
      ),
    ).toBe('captive');
    expect(
      await probeCaptivePortal(
        'http://p/',
        respond(null, { status: 302, headers: { location: 'http://login/' } }),
      ),
    ).toBe('captive');
    const failing = (async () => {
      throw new TypeError('Failed to fetch');
    }) as unknown as typeof fetch;
    expect(await probeCaptivePortal('http://p/', failing)).toBe('offline');
  });
});

describe('per-tab activity', () => {
  it('lists main-frame rulesets first, then the rest alphabetically, and counts upgrades', () => {
    const a = new TabActivity();
    a.note({
      tabId: 1,
      type: 'main_frame',
      url: 'http://site.test/',
      rulesets: ['Site', 'Site CDN'],
      upgraded: true,
    });
    a.note({
      tabId: 1,
      type: 'main_frame',
      url: 'https://site.test/',
      rulesets: ['Site', 'Site CDN'],
      upgraded: false,
    });
    a.note({
      tabId: 1,
      type: 'script',
      url: 'http://zeta.test/a.js',
      rulesets: ['zeta'],
      upgraded: true,
    });
    a.note({
      tabId: 1,
      type: 'image',
      url: 'http://alpha.test/a.png',
      rulesets: ['Alpha', 'Site'],
      upgraded: false,
    });
    expect(a.orderedRulesets(1)).toEqual(['Site', 'Site CDN', 'Alpha', 'zeta']);
    expect(a.get(1)?.upgraded).toBe(2);
    a.note({
      tabId: 1,
      type: 'main_frame',
      url: 'http://other.test/',
      rulesets: [],
      upgraded: false,
    });
    expect(a.orderedRulesets(1)).toEqual([]);
    expect(a.get(1)?.upgraded).toBe(0);
    expect(
      a.note({ tabId: -1, type: 'main_frame', url: 'http://x/', rulesets: ['X'], upgraded: true }),
    ).toBe(false);
  });
});

describe('icon and badge', () => {
  it('picks the icon state by priority: off, site disabled, HTTPS-first, active', () => {
    expect(iconState({ globalEnabled: false, httpsFirst: true, siteDisabled: true })).toBe('off');
    expect(iconState({ globalEnabled: true, httpsFirst: true, siteDisabled: true })).toBe(
      'site-disabled',
    );
    expect(iconState({ globalEnabled: true, httpsFirst: true, siteDisabled: false })).toBe(
      'https-first',
    );
    expect(iconState({ globalEnabled: true, httpsFirst: false, siteDisabled: false })).toBe(
      'active',
    );
  });
  it('shows the count, blank for zero or when hidden', () => {
    expect(badgeText(0, true)).toBe('');
    expect(badgeText(12, true)).toBe('12');
    expect(badgeText(12, false)).toBe('');
    expect(badgeText(4321, true)).toBe('4k');
  });
});
