import { SiteList } from '../src/site-rules/site-pattern.js';
import type { ProtectionSnapshot } from '../src/decision/snapshot.js';
import { DnrEmulator } from '@httpsify/engine/dnr';
import { describe, expect, it } from 'vitest';
import { httpsAlternatives, probe, wwwTwin } from '../src/protection/https-alternatives.js';
import { KnownHttpsHosts, KNOWN_HTTPS_TTL_MS } from '../src/protection/known-https-hosts.js';
import { pageStatus } from '../src/status/page-status.js';
import { knownHttpsRules } from '../src/protection/protection-dnr.js';
import { withSiteState } from '../src/routing/protection-requests.js';
import {
  dueForRecheck,
  parseRecheckState,
  recordRecheck,
  RECHECK_PERIOD_MS,
} from '../src/protection/recheck.js';
import {
  exportHttpAllowlistPolicy,
  parseHttpAllowlistPolicy,
} from '../src/site-rules/http-allowlist-policy.js';
import { repairSettings } from '../src/settings/repair.js';
import { ProtectionRuntime } from '../src/protection/protection-runtime.js';
import { fetchChannelDefinition } from '../src/protection/channel-url.js';

const DAY = 24 * 60 * 60 * 1000;

describe('known HTTPS hosts', () => {
  it('learns public names only, expires entries and keeps the newest within the cap', () => {
    const k = new KnownHttpsHosts(10 * DAY, 3);
    expect(k.note('Example.COM.', 0)).toBe(true);
    expect(k.note('example.com', 1)).toBe(false);
    for (const bad of [
      'localhost',
      'printer',
      '192.168.1.1',
      '8.8.8.8',
      'x.onion',
      'a.local',
      'a b.com',
      '[::1]',
    ])
      expect(k.note(bad, 0), bad).toBe(false);
    k.note('a.test', 2);
    k.note('b.test', 3);
    k.note('c.test', 4);
    // The cap drops the least recently seen: example.com (seen at 1).
    expect(k.hosts(5)).toEqual(['a.test', 'b.test', 'c.test']);
    expect(k.has('a.test', 2 + 10 * DAY - 1)).toBe(true);
    expect(k.has('a.test', 2 + 10 * DAY)).toBe(false);
    expect(k.prune(3 + 10 * DAY)).toBe(true);
    expect(k.hosts(3 + 10 * DAY)).toEqual(['c.test']);
  });

  it('reads storage as hostile: damaged entries are dropped and counted, expired ones go', () => {
    const now = 100 * DAY;
    const raw = {
      v: 1,
      hosts: [
        ['ok.test', now - DAY],
        ['old.test', now - KNOWN_HTTPS_TTL_MS - 1],
        ['localhost', now],
        [42, now],
        ['x.test', 'soon'],
        'junk',
        ['future.test', now + 2 * KNOWN_HTTPS_TTL_MS],
      ],
    };
    const { store, rejected } = KnownHttpsHosts.parse(raw, now);
    expect(store.hosts(now)).toEqual(['ok.test']);
    expect(rejected).toBe(5);
    expect(KnownHttpsHosts.parse('nonsense', now).rejected).toBe(1);
    expect(KnownHttpsHosts.parse(undefined, now).rejected).toBe(0);
    // Round trip.
    expect(KnownHttpsHosts.parse(store.toStored(), now).store.hosts(now)).toEqual(['ok.test']);
  });
});

describe('known HTTPS hosts: what one page or site can teach', () => {
  it('keeps at most 500 third-party hosts, and never lets them push out visited ones', () => {
    const big = new KnownHttpsHosts(10 * DAY);
    for (let i = 0; i < 2000; i++) big.note(`third${i}.test`, i, false);
    expect(big.thirdPartySize).toBe(500);
    const k = new KnownHttpsHosts(10 * DAY, 600);
    for (let i = 0; i < 200; i++) k.note(`visited${i}.test`, i, true);
    for (let i = 0; i < 2000; i++) k.note(`third${i}.test`, 1000 + i, false);
    expect(k.thirdPartySize).toBe(400);
    expect(k.size).toBe(600);
    // The cap (600) is reached: third-party hosts make room, visited ones all stay.
    for (let i = 0; i < 200; i++) expect(k.has(`visited${i}.test`, 5000), `visited${i}`).toBe(true);
    expect(k.has('third1999.test', 5000)).toBe(true);
    expect(k.has('third0.test', 5000)).toBe(false);
    // A visited host does make room for another visited one once no third-party host is left.
    const small = new KnownHttpsHosts(10 * DAY, 2);
    small.note('a.test', 1, true);
    small.note('b.test', 2, true);
    expect(small.note('c.test', 3, false)).toBe(false);
    expect(small.hosts(4)).toEqual(['a.test', 'b.test']);
    small.note('c.test', 3, true);
    expect(small.hosts(4)).toEqual(['b.test', 'c.test']);
    // Seen as a page later: promoted, and stored so.
    const p = new KnownHttpsHosts(10 * DAY, 10);
    p.note('cdn.test', 1, false);
    p.note('cdn.test', 2, true);
    p.note('cdn.test', 3, false);
    expect(p.isVisited('cdn.test')).toBe(true);
    const back = KnownHttpsHosts.parse(p.toStored(), 4, 10 * DAY, 10).store;
    expect(back.isVisited('cdn.test')).toBe(true);
    // Entries of older builds ([host, at]) are kept as visited.
    expect(
      KnownHttpsHosts.parse({ v: 1, hosts: [['old.test', 1]] }, 4, 10 * DAY, 10).store.isVisited(
        'old.test',
      ),
    ).toBe(true);
  });

  it('lets one page teach 24 new third-party hosts and one site 96, whatever it loads', () => {
    const rt = new ProtectionRuntime({
      storage: { get: async () => ({}), set: async () => undefined },
    });
    const page = (n: number) => `https://flood.test/page${n}`;
    const load = (tabId: number, top: string, host: string) =>
      rt.learn({ url: `https://${host}/x.js`, tabId, type: 'script', statusCode: 200 }, top);
    for (let i = 0; i < 5000; i++) load(1, page(0), `h${i}.cdn.test`);
    expect(rt.known.size).toBe(24);
    // Hosts it already taught refresh freely. The page's own host as a subresource is no visit
    // (semantics changed for issue 38: only a committed top-level document the user reached is).
    load(1, page(0), 'h0.cdn.test');
    rt.learn(
      { url: 'https://flood.test/page0', tabId: 1, type: 'main_frame', statusCode: 200 },
      undefined,
    );
    expect(rt.known.isVisited('flood.test')).toBe(true);
    load(1, page(0), 'flood.test');
    expect(rt.known.isVisited('flood.test')).toBe(true);
    expect(rt.known.size).toBe(25);
    // New pages of the same site, in other tabs too: 96 for the site in all.
    for (let n = 1; n < 20; n++)
      for (let i = 0; i < 100; i++) load(n + 1, page(n), `p${n}-${i}.cdn.test`);
    expect(rt.known.thirdPartySize).toBe(96);
    // Another site has its own share, and the user's own navigations are never limited.
    for (let i = 0; i < 100; i++) load(50, 'https://other.test/', `o${i}.cdn.test`);
    expect(rt.known.thirdPartySize).toBe(96 + 24);
    for (let i = 0; i < 100; i++)
      rt.learn(
        { url: `https://visit${i}.test/`, tabId: 60, type: 'main_frame', statusCode: 200 },
        undefined,
      );
    expect(rt.known.size - rt.known.thirdPartySize).toBe(101);
  });
});

describe('known HTTPS hosts: what counts as a visit', () => {
  const own = 'chrome-extension://abc/';
  const nav = (
    url: string,
    more: { statusCode?: number; initiator?: string; originUrl?: string; tabId?: number } = {},
  ) => ({
    url,
    tabId: more.tabId ?? 1,
    type: 'main_frame',
    statusCode: more.statusCode ?? 200,
    initiator: more.initiator,
    originUrl: more.originUrl,
  });

  it('a top-level document the user reached, that committed; the site itself keeps what it was', () => {
    const rt = new ProtectionRuntime({
      storage: { get: async () => ({}), set: async () => undefined },
    });
    rt.learn(nav('https://typed.test/'), undefined, own);
    rt.learn(
      nav('https://ours.test/', { initiator: 'chrome-extension://abc' }),
      undefined,
      own,
      null,
    );
    for (const h of ['typed.test', 'ours.test']) expect(rt.known.isVisited(h), h).toBe(true);
    // A page of the same host navigating the tab: a visit stays one; any other host is only
    // learnt as a page's (any page can navigate itself).
    rt.learn(nav('https://typed.test/b', { initiator: 'https://typed.test' }), undefined, own);
    rt.learn(nav('https://self.test/b', { initiator: 'https://self.test' }), undefined, own);
    rt.learn(nav('https://ff.test/b', { originUrl: 'https://ff.test/a' }), undefined, own);
    expect(rt.known.isVisited('typed.test')).toBe(true);
    for (const h of ['self.test', 'ff.test']) {
      expect(rt.known.has(h, Date.now()), h).toBe(true);
      expect(rt.known.isVisited(h), h).toBe(false);
    }
    // No document (204, 205), an error page: nothing learnt.
    rt.learn(nav('https://nocontent.test/', { statusCode: 204 }), undefined, own);
    rt.learn(nav('https://reset.test/', { statusCode: 205 }), undefined, own);
    rt.learn(nav('https://gone.test/', { statusCode: 404 }), undefined, own);
    expect(rt.known.size).toBe(4);
  });

  it('a chain of pages that each navigate themselves never pushes out what the user visited', () => {
    const rt = new ProtectionRuntime({
      storage: { get: async () => ({}), set: async () => undefined },
    });
    rt.learn(nav('https://bank.test/'), undefined, own);
    // Each attacker host is reached from the previous one, then reloads itself (both browsers).
    for (let i = 0; i < 2500; i++) {
      const host = `h${i}.walk.test`;
      const before = i === 0 ? 'https://start.test' : `https://h${i - 1}.walk.test`;
      rt.learn(nav(`https://${host}/`, { initiator: before, tabId: 2 }), undefined, own);
      rt.learn(
        nav(`https://${host}/again`, { initiator: `https://${host}`, tabId: 2 }),
        undefined,
        own,
      );
      rt.learn(
        nav(`https://${host}/ff`, { originUrl: `https://${host}/`, tabId: 2 }),
        undefined,
        own,
      );
    }
    expect(rt.known.isVisited('bank.test')).toBe(true);
    expect(rt.known.has('bank.test', Date.now())).toBe(true);
    expect(rt.known.size - rt.known.thirdPartySize).toBe(1);
  });

  it("navigations another page started are third-party, within the starting page's share", () => {
    const rt = new ProtectionRuntime({
      storage: { get: async () => ({}), set: async () => undefined },
    });
    rt.learn(nav('https://visited.test/'), undefined, own);
    // Thousands of navigations one page sends a tab to (Chromium: its origin; Firefox: its address).
    for (let i = 0; i < 3000; i++)
      rt.learn(
        nav(`https://h${i}.flood.test/`, { initiator: 'https://evil.test', tabId: 2 }),
        undefined,
        own,
      );
    expect(rt.known.thirdPartySize).toBe(24);
    // Interleaved with the landed pages' own subresources, the share does not restart, and
    // those pages' own scripts make them no visit.
    for (let i = 0; i < 300; i++) {
      rt.learn(
        nav(`https://g${i}.flood.test/`, { originUrl: 'https://evil.test/start', tabId: 3 }),
        undefined,
        own,
      );
      rt.learn(
        { url: `https://g${i}.flood.test/x.js`, tabId: 3, type: 'script', statusCode: 200 },
        `https://g${i}.flood.test/`,
        own,
      );
    }
    expect(rt.known.thirdPartySize).toBe(48);
    expect(rt.known.has('g299.flood.test', Date.now())).toBe(false);
    for (let i = 0; i < 3000; i++)
      rt.learn(
        nav(`https://k${i}.flood.test/`, { originUrl: `https://evil.test/p${i}`, tabId: 4 + i }),
        undefined,
        own,
      );
    expect(rt.known.thirdPartySize).toBe(96);
    // Chromium's handoff page navigates for a request a page started: still that page's.
    const evil = { page: 'https://evil.test', host: 'evil.test' };
    rt.learn(
      nav('https://handed.test/', { initiator: 'chrome-extension://abc' }),
      undefined,
      own,
      evil,
    );
    expect(rt.known.isVisited('handed.test')).toBe(false);
    rt.learn(
      nav('https://handed2.test/', { initiator: 'chrome-extension://abc' }),
      undefined,
      own,
      null,
    );
    expect(rt.known.isVisited('handed2.test')).toBe(true);
    rt.known.forget('handed2.test');
    // Not known who started it: not a visit.
    rt.learn(
      nav('https://handed3.test/', { initiator: 'chrome-extension://abc' }),
      undefined,
      own,
      undefined,
    );
    expect(rt.known.isVisited('handed3.test')).toBe(false);
    // None of them is a visit; what the user visited stays.
    expect(rt.known.size - rt.known.thirdPartySize).toBe(1);
    expect(rt.known.isVisited('visited.test')).toBe(true);
  });
});

describe('known HTTPS hosts rules (Chromium)', () => {
  const rules = knownHttpsRules(['example.com', 'cdn.example.net', 'a.b.c.example.org']);
  const emu = new DnrEmulator(rules.map((r, i) => ({ ...r, id: i + 1 })));
  const up = (url: string, type = 'image') => emu.match({ url, type: type as 'image' }).redirectUrl;

  it('upgrades subresources of exactly the known hosts, any port, not main frames', () => {
    expect(up('http://example.com/x.png')).toBe('https://example.com/x.png');
    expect(up('http://example.com:8080/x.png')).toBe('https://example.com:8080/x.png');
    expect(up('http://cdn.example.net/a.js', 'script')).toBe('https://cdn.example.net/a.js');
    expect(up('http://a.b.c.example.org/', 'sub_frame')).toBe('https://a.b.c.example.org/');
    // requestDomains alone would take subdomains too: the label-count regex keeps them out.
    expect(up('http://www.example.com/x.png')).toBeNull();
    expect(up('http://x.cdn.example.net/a.js')).toBeNull();
    expect(up('http://example.net/a.js')).toBeNull();
    expect(up('http://example.com/', 'main_frame')).toBeNull();
    expect(rules.map((r) => r.priority)).toEqual([2, 2, 2]);
  });
});

describe('HTTPS alternatives for a failed upgrade', () => {
  const none = () => ({ rewritten: null, ruleset: null });
  it('tries the www. twin with the path, or the ruleset rewrite of it', () => {
    expect(wwwTwin('example.com')).toBe('www.example.com');
    expect(wwwTwin('www.example.com')).toBe('example.com');
    expect(wwwTwin('www.com')).toBeNull();
    expect(wwwTwin('localhost')).toBeNull();
    expect(wwwTwin('10.0.0.1')).toBeNull();
    expect(httpsAlternatives('http://example.com:81/p?q=1#f', none)).toEqual([
      { host: 'www.example.com', url: 'https://www.example.com:81/p?q=1#f', ruleset: null },
    ]);
    const byRules = (u: string) =>
      u.startsWith('http://www.example.com/')
        ? { rewritten: u.replace('http://www.', 'https://secure.'), ruleset: 'Example' }
        : { rewritten: null, ruleset: null };
    expect(httpsAlternatives('http://example.com/p', byRules)).toEqual([
      { host: 'www.example.com', url: 'https://secure.example.com/p', ruleset: 'Example' },
    ]);
  });

  it('probes send HEAD to the origin without cookies and read any answer as "speaks this scheme"', async () => {
    const seen: { url: string; init: RequestInit | undefined }[] = [];
    const fake = (status: number) =>
      (async (url: string, init?: RequestInit) => {
        seen.push({ url, init });
        return { status, type: 'basic' } as Response;
      }) as typeof fetch;
    expect(await probe('https://www.example.com/', fake(404))).toBe('ok');
    expect(seen[0]?.init?.method).toBe('HEAD');
    expect(seen[0]?.init?.credentials).toBe('omit');
    expect(await probe('https://www.example.com/', fake(503))).toBe('HTTP 503');
    // The www. twin counts only with a success: a 404 for everything is a shared host's answer.
    expect(await probe('https://www.example.com/', fake(404), 3000, true)).toBe('HTTP 404');
    expect(await probe('https://www.example.com/', fake(204), 3000, true)).toBe('ok');
    const failing = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof fetch;
    expect(await probe('https://www.example.com/', failing)).toBe('Failed to fetch');
    const hanging = ((_u: string, init?: RequestInit) =>
      new Promise((_r, reject) =>
        init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
      )) as typeof fetch;
    expect(await probe('https://www.example.com/', hanging, 20)).toBe('timeout');
  });
});

describe('Chrome HttpAllowlist policy syntax', () => {
  it('imports [*.]host as the host and its subdomains, refuses blanket wildcards and ports', () => {
    expect(
      parseHttpAllowlistPolicy('["[*.]example.com", "intranet.test", "10.1.2.3", "Example.com"]'),
    ).toEqual({
      entries: ['*.example.com', '10.1.2.3', 'example.com', 'intranet.test'],
      problems: [],
    });
    const bad = parseHttpAllowlistPolicy(
      '["*", "a.test:8080", 3, "[*.]10.0.0.1", "http://x.test/"]',
    );
    expect(bad.problems).toEqual([
      'item 1: "*" would allow HTTP everywhere; turn the protection off instead',
      'item 2: "a.test:8080" is not a host name or [*.]host name',
      'item 3: not a string',
      'item 4: "[*.]10.0.0.1": subdomains of an address cannot be listed',
      'item 5: "http://x.test/" is not a host name or [*.]host name',
    ]);
    expect(parseHttpAllowlistPolicy('{"a":1}').problems[0]).toMatch(/not a JSON array/);
    expect(parseHttpAllowlistPolicy('nope').problems[0]).toMatch(/^not JSON/);
  });

  it('exports back to the policy, saying what it could not express exactly', () => {
    const out = exportHttpAllowlistPolicy([
      '*.example.com',
      'example.com',
      '*.intranet.test',
      'legacy.test:8080',
    ]);
    expect(JSON.parse(out.json)).toEqual(['[*.]example.com', '[*.]intranet.test', 'legacy.test']);
    expect(out.notes).toEqual([
      'legacy.test:8080: the policy has no ports; written for every port',
      '*.intranet.test: the policy cannot leave out intranet.test itself; written as [*.]intranet.test, which includes it',
    ]);
    // Round trip of what the policy can say.
    expect(parseHttpAllowlistPolicy(out.json).entries).toEqual([
      '*.example.com',
      '*.intranet.test',
      'example.com',
      'intranet.test',
      'legacy.test',
    ]);
  });
});

describe('per-site states', () => {
  it('maps upgrade / rulesets only / off onto the two lists, wildcards included', () => {
    const s = { disabledSites: ['a.test'], httpAllowedSites: ['*.b.test'] };
    expect(withSiteState(s, 'A.test', 'rulesets')).toEqual({
      disabledSites: [],
      httpAllowedSites: ['*.b.test', 'a.test'],
    });
    expect(withSiteState(s, '*.b.test', 'off')).toEqual({
      disabledSites: ['*.b.test', 'a.test'],
      httpAllowedSites: [],
    });
    expect(withSiteState(s, 'a.test', 'upgrade')).toEqual({
      disabledSites: [],
      httpAllowedSites: ['*.b.test'],
    });
    expect(withSiteState(s, 'not a host/', 'off')).toBeNull();
  });
});

describe('re-check of sites left on HTTP', () => {
  it('starts a clock per exact entry, probes after the period, logs the sites put back', () => {
    let state = parseRecheckState(undefined);
    let r = dueForRecheck(state, ['a.test', '*.w.test', 'b.test:8080'], 1000);
    expect(r.due).toEqual([]);
    expect(r.state.checked).toEqual({ 'a.test': 1000, 'b.test:8080': 1000 });
    state = r.state;
    r = dueForRecheck(state, ['a.test', 'b.test:8080'], 1000 + RECHECK_PERIOD_MS);
    expect(r.due).toEqual(['a.test', 'b.test:8080']);
    state = recordRecheck(r.state, 'a.test', true, 5);
    state = recordRecheck(state, 'b.test:8080', false, 1000 + RECHECK_PERIOD_MS);
    expect(state.restored).toEqual([{ entry: 'a.test', at: 5 }]);
    expect(dueForRecheck(state, ['b.test:8080'], 1000 + RECHECK_PERIOD_MS + 1).due).toEqual([]);
    expect(
      parseRecheckState({ v: 1, checked: { x: 'y' }, restored: [1, { entry: 'e', at: 2 }] }),
    ).toEqual({
      v: 1,
      checked: {},
      restored: [{ entry: 'e', at: 2 }],
    });
  });
});

describe('page status', () => {
  it('calls a www. twin the user followed from the fallback page simply secure', () => {
    const inputs = {
      fallbackPath: '/ui/fallback.html',
      tabId: 1,
      upgraded: null,
      offRulesets: [],
      state: {
        globalEnabled: true,
        httpsFirst: true,
        siteOffBy: () => null,
        httpAllowedBy: () => null,
        httpOnce: () => false,
        loopVerdict: () => false,
        userRewrite: () => null,
        rewrite: () => ({ rewritten: null, ruleset: null }),
        excludedBy: () => null,
        knownHttps: () => false,
      },
    };
    // The twin is offered as a link, never followed for the user: nothing of ours moved the tab.
    expect(pageStatus({ ...inputs, url: 'https://www.a.test/p' })).toEqual({
      secure: true,
      retry: false,
      kind: 'https-already',
    });
  });
});

describe('settings', () => {
  it('turns the protection mode on for profiles that never chose, keeps a stored choice', () => {
    expect(repairSettings({ schemaVersion: 1 }).settings.httpsFirst).toBe(true);
    expect(repairSettings({ schemaVersion: 1, httpsFirst: false }).settings.httpsFirst).toBe(false);
  });
});

describe('protection runtime (no browser)', () => {
  const memory = () => {
    const data: Record<string, unknown> = {};
    return {
      data,
      get: async (k: string | string[]) =>
        Object.fromEntries(
          (Array.isArray(k) ? k : [k]).filter((x) => x in data).map((x) => [x, data[x]]),
        ),
      set: async (o: Record<string, unknown>) => void Object.assign(data, o),
    };
  };
  const view: ProtectionSnapshot = {
    globalEnabled: true,
    httpsFirst: true,
    disabled: new SiteList([]),
    httpAllowed: new SiteList(['left.test']),
    httpOnce: new Set(['once.test']),
    httpOnceInTabs: new Map(),
    userRules: null,
    rulesets: { rewrite: () => ({ rewritten: null, ruleset: null }), excludedBy: () => null },
    loopVerdict: () => false,
    dnr: { disabledSites: [], httpAllowedSites: [], activeUserRulesets: [] },
  };

  it('re-checks a site left on HTTP after the period, origin only, and reports it when HTTPS answers', async () => {
    const storage = memory();
    let now = 1_000;
    const asked: string[] = [];
    const fetchFn = (async (url: string) => {
      asked.push(url);
      return { status: 200, type: 'basic' } as Response;
    }) as typeof fetch;
    const rt = new ProtectionRuntime({ storage, now: () => now, fetch: fetchFn });
    expect(await rt.recheck(['a.test', '*.w.test'])).toEqual([]);
    expect(asked).toEqual([]);
    now += RECHECK_PERIOD_MS;
    expect(await rt.recheck(['a.test', '*.w.test'])).toEqual(['a.test']);
    expect(asked).toEqual(['https://a.test/']);
    expect((storage.data.httpRecheck as { restored: unknown[] }).restored).toEqual([
      { entry: 'a.test', at: now },
    ]);
  });

  it("forgets a known host only for the user's own navigation to its default-port origin", async () => {
    const fetchFn = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof fetch;
    const rt = new ProtectionRuntime({ storage: memory(), fetch: fetchFn });
    rt.learn(
      { url: 'https://known.test/', tabId: 1, type: 'main_frame', statusCode: 200 },
      undefined,
    );
    // A navigation a web page started, or one to another port of the host: nothing is forgotten.
    await rt.planFallback(view, 'http://known.test/p', 'net::ERR_SSL_PROTOCOL_ERROR', false);
    await rt.planFallback(view, 'http://known.test:8443/p', 'net::ERR_CONNECTION_REFUSED', true);
    await rt.planFallback(view, 'http://known.test:443/p', 'net::ERR_CONNECTION_REFUSED', true);
    expect(rt.upgradesHost(view, 'known.test')).toBe(true);
    await rt.planFallback(view, 'http://known.test/p', 'net::ERR_CONNECTION_REFUSED', true);
    expect(rt.upgradesHost(view, 'known.test')).toBe(false);
  });

  it('plans a fallback: the www. twin to offer when it answers with a success, and every attempt', async () => {
    const answering = new Set(['https://www.twin.test/']);
    const asked: string[] = [];
    const fetchFn = (async (url: string, init?: RequestInit) => {
      asked.push(`${init?.method} ${url}`);
      if (answering.has(url) || url.startsWith('http:'))
        return { status: 200, type: 'basic' } as Response;
      if (url === 'https://www.shared.test/') return { status: 404, type: 'basic' } as Response;
      throw new TypeError('Failed to fetch');
    }) as typeof fetch;
    const rt = new ProtectionRuntime({ storage: memory(), fetch: fetchFn });
    rt.learn(
      { url: 'https://twin.test/', tabId: 1, type: 'main_frame', statusCode: 200 },
      undefined,
    );
    expect(rt.upgradesHost(view, 'twin.test')).toBe(true);
    expect(
      await rt.planFallback(view, 'http://twin.test/p?q=1', 'net::ERR_SSL_PROTOCOL_ERROR', true),
    ).toEqual({
      twin: 'https://www.twin.test/p?q=1',
      tried: [
        { url: 'https://twin.test/', result: 'net::ERR_SSL_PROTOCOL_ERROR' },
        { url: 'https://www.twin.test/', result: 'ok' },
      ],
      http: 'ok',
    });
    // A twin answering 404 (a shared host's answer for names it does not serve) is not offered.
    expect(
      await rt.planFallback(view, 'http://shared.test/', 'net::ERR_CONNECTION_REFUSED'),
    ).toEqual({
      twin: null,
      tried: [
        { url: 'https://shared.test/', result: 'net::ERR_CONNECTION_REFUSED' },
        { url: 'https://www.shared.test/', result: 'HTTP 404' },
      ],
      http: 'ok',
    });
    // HTTPS failed for the user's own navigation to its default-port origin: no longer known.
    expect(rt.upgradesHost(view, 'twin.test')).toBe(false);
    const plan = await rt.planFallback(view, 'http://none.test/secret', 'timeout');
    expect(plan).toEqual({
      twin: null,
      tried: [
        { url: 'https://none.test/', result: 'timeout' },
        { url: 'https://www.none.test/', result: 'Failed to fetch' },
      ],
      http: 'ok',
    });
    // Probes carry no path.
    expect(asked).toEqual([
      'HEAD https://www.twin.test/',
      'HEAD http://twin.test/',
      'HEAD https://www.shared.test/',
      'HEAD http://shared.test/',
      'HEAD https://www.none.test/',
      'HEAD http://none.test/',
    ]);
    // A site left on "rulesets only" may be in the store but is never upgraded as known.
    rt.learn(
      { url: 'https://left.test/', tabId: 1, type: 'main_frame', statusCode: 200 },
      undefined,
    );
    rt.learn(
      { url: 'https://once.test/', tabId: 1, type: 'main_frame', statusCode: 200 },
      undefined,
    );
    expect(rt.liveHosts(view)).toEqual([]);
    expect(rt.upgradesHost(view, 'once.test')).toBe(false);
    // Error pages and background requests teach nothing.
    rt.learn(
      { url: 'https://err.test/', tabId: 1, type: 'main_frame', statusCode: 403 },
      undefined,
    );
    rt.learn(
      { url: 'https://bg.test/', tabId: -1, type: 'main_frame', statusCode: 200 },
      undefined,
    );
    expect(rt.known.hosts(Date.now())).toEqual(['left.test', 'once.test']);
  });
});

describe('channel by address', () => {
  it('fetches https only, at most 64 KB, as UTF-8 text', async () => {
    const ok = (async () => new Response('{"name":"x"}', { status: 200 })) as typeof fetch;
    expect(await fetchChannelDefinition('https://c.test/x.channel.json', ok)).toEqual({
      ok: true,
      json: '{"name":"x"}',
    });
    expect(await fetchChannelDefinition('http://c.test/x.json', ok)).toEqual({
      ok: false,
      error: 'the address must start with https://',
    });
    expect(await fetchChannelDefinition('not a url', ok)).toEqual({
      ok: false,
      error: 'not a web address',
    });
    const big = (async () => new Response('x'.repeat(70_000), { status: 200 })) as typeof fetch;
    expect((await fetchChannelDefinition('https://c.test/big', big)).ok).toBe(false);
    const missing = (async () => new Response('', { status: 404 })) as typeof fetch;
    expect(await fetchChannelDefinition('https://c.test/none', missing)).toEqual({
      ok: false,
      error: 'https://c.test/none: the server answered 404',
    });
    const binary = (async () =>
      new Response(new Uint8Array([0xff, 0xfe, 0x00]), { status: 200 })) as typeof fetch;
    expect(await fetchChannelDefinition('https://c.test/bin', binary)).toEqual({
      ok: false,
      error: 'https://c.test/bin: not UTF-8 text',
    });
  });
});
