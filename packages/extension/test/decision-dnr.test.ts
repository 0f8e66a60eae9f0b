import type { ProtectionSnapshot } from '../src/decision/snapshot.js';
import { siteOf } from '../src/site-rules/site-pattern.js';
import { DnrEmulator, type DnrResourceType } from '@httpsify/engine/dnr';
import { describe, expect, it } from 'vitest';
import { decide, type DecisionState, type RequestKind } from '../src/decision/decide.js';
import { loopAllowRules } from '../src/https-first/loop-rules.js';
import type { RuleBody } from '../src/dnr/rules.js';
import { uiDnrRules } from '../src/dnr/settings-rules.js';
import { ProtectionRuntime } from '../src/protection/protection-runtime.js';

/**
 * Chromium's rules are the same decision as decide(): for each case, the settings, loop and
 * known-hosts layers, run through the DNR emulator, upgrade a request exactly when decide() says
 * `upgrade`, to the same URL. (Rulesets are compiled by the engine and checked against it
 * elsewhere; here no ruleset applies.)
 */
interface Given {
  off?: boolean;
  mode?: boolean;
  siteOff?: string;
  allowed?: string;
  once?: string;
  /** A loop verdict: this http:// URL as tab 1's page. */
  loop?: string;
  /** A loop verdict: this http:// URL as a subresource in tab 1. */
  subLoop?: string;
  known?: string[];
}

const PAGE = 'http://page.test/';
const exact = (entry: string | undefined, host: string) =>
  entry !== undefined && host === entry ? entry : null;
const hostOf = (url: string) => new URL(url).hostname;

function state(g: Given): DecisionState {
  return {
    globalEnabled: g.off !== true,
    httpsFirst: g.mode !== false,
    siteOffBy: (url) => exact(g.siteOff, hostOf(url)),
    httpAllowedBy: (url) => exact(g.allowed, hostOf(url)),
    httpOnce: (host) => host === g.once,
    loopVerdict: (url, tabId, kind) =>
      tabId === 1 && url === (kind === 'navigation' ? g.loop : g.subLoop),
    userRewrite: () => null,
    rewrite: () => ({ rewritten: null, ruleset: null }),
    excludedBy: () => null,
    knownHttps: (host) => g.known?.includes(host) ?? false,
  };
}

/** Every dynamic and session layer the settings, the loop guard and the known hosts declare. */
function layers(g: Given): RuleBody[] {
  const settings = {
    globalEnabled: g.off !== true,
    httpsFirst: g.mode !== false,
    disabledSites: g.siteOff === undefined ? [] : [g.siteOff],
    httpAllowedSites: g.allowed === undefined ? [] : [g.allowed],
  };
  const rt = new ProtectionRuntime({
    storage: { get: async () => ({}), set: async () => undefined },
  });
  for (const host of g.known ?? [])
    rt.learn({ url: `https://${host}/`, tabId: 1, type: 'main_frame', statusCode: 200 }, undefined);
  const entries = (list: string | undefined) => ({
    matchHost: (h: string) => exact(list, h),
    matchUrl: (u: string) => exact(list, siteOf(u)?.host ?? ''),
  });
  const view: ProtectionSnapshot = {
    globalEnabled: settings.globalEnabled,
    httpsFirst: settings.httpsFirst,
    disabled: entries(g.siteOff),
    httpAllowed: entries(g.allowed),
    httpOnce: new Set(g.once === undefined ? [] : [g.once]),
    httpOnceInTabs: new Map(),
    userRules: null,
    rulesets: { rewrite: () => ({ rewritten: null, ruleset: null }), excludedBy: () => null },
    loopVerdict: () => false,
    dnr: { disabledSites: [], httpAllowedSites: [], activeUserRulesets: [] },
  };
  const { rules } = uiDnrRules({
    ...settings,
    httpOnceHosts: [...view.httpOnce],
    userRulesets: [],
    extensionId: 'ext',
  });
  return [
    ...rules,
    ...loopAllowRules([
      ...(g.loop === undefined ? [] : [{ tabId: 1, url: g.loop }]),
      ...(g.subLoop === undefined
        ? []
        : [{ kind: 'subresource' as const, tabId: 1, url: g.subLoop }]),
    ]),
    ...(rt.rules(view) ?? []),
  ];
}

type Row = [string, Given, RequestKind, string];
const CDN = 'http://cdn.test/x.js';
const rows: Row[] = [
  ['a plain navigation', {}, 'navigation', 'http://a.test/p?q=1'],
  ['a navigation on another port', {}, 'navigation', 'http://a.test:8080/'],
  ['the mode off', { mode: false }, 'navigation', 'http://a.test/'],
  ['the global switch off', { off: true, known: ['a.test'] }, 'navigation', 'http://a.test/'],
  ['a site switched off', { siteOff: 'a.test' }, 'navigation', 'http://a.test/'],
  ['a site on "rulesets only"', { allowed: 'a.test' }, 'navigation', 'http://a.test/'],
  ['"open over HTTP this time"', { once: 'a.test' }, 'navigation', 'http://a.test/'],
  ['the loop guard', { loop: 'http://a.test/p?q=1' }, 'navigation', 'http://a.test/p?q=1'],
  [
    'another URL of a host with a loop verdict',
    { loop: 'http://a.test/p?q=1' },
    'navigation',
    'http://a.test/p?q=2',
  ],
  [
    'a loop verdict named in another URL',
    { loop: 'http://a.test/' },
    'navigation',
    'http://evil.test/?http://a.test/',
  ],
  ['localhost', {}, 'navigation', 'http://localhost:8080/'],
  ['a private address', {}, 'navigation', 'http://192.168.1.1/'],
  ['a loopback address', {}, 'navigation', 'http://127.0.0.1/'],
  ['a single-label name', {}, 'navigation', 'http://intranet/'],
  ['an onion name', {}, 'navigation', 'http://abc.onion/'],
  ['IPv6 loopback', {}, 'navigation', 'http://[::1]/'],
  ['a public address', {}, 'navigation', 'http://8.8.8.8/'],
  ['a known host as a subresource', { known: ['cdn.test'] }, 'subresource', CDN],
  [
    'a known host on another port',
    { known: ['cdn.test'] },
    'subresource',
    'http://cdn.test:8080/x.js',
  ],
  ['an unknown host', { known: ['other.test'] }, 'subresource', CDN],
  ['a subdomain of a known host', { known: ['cdn.test'] }, 'subresource', 'http://a.cdn.test/x.js'],
  ['a known host left on HTTP', { known: ['cdn.test'], allowed: 'cdn.test' }, 'subresource', CDN],
  [
    'a known host opened over HTTP this time',
    { known: ['cdn.test'], once: 'cdn.test' },
    'subresource',
    CDN,
  ],
  ['a known host switched off', { known: ['cdn.test'], siteOff: 'cdn.test' }, 'subresource', CDN],
  [
    "a known host with a page's loop verdict for the same URL",
    { known: ['cdn.test'], loop: CDN },
    'subresource',
    CDN,
  ],
  [
    "a known host with a subresource's loop verdict for the URL",
    { known: ['cdn.test'], subLoop: CDN },
    'subresource',
    CDN,
  ],
  [
    "a known host with a subresource's loop verdict for another URL",
    { known: ['cdn.test'], subLoop: 'http://cdn.test/y.js' },
    'subresource',
    CDN,
  ],
  [
    "a page with a subresource's loop verdict for its URL",
    { subLoop: 'http://a.test/p?q=1' },
    'navigation',
    'http://a.test/p?q=1',
  ],
  ['a known host, the mode off', { known: ['cdn.test'], mode: false }, 'subresource', CDN],
  ['a known host, the global switch off', { known: ['cdn.test'], off: true }, 'subresource', CDN],
];

describe('the DNR layers and decide() agree', () => {
  it.each(rows)('%s', (_name, given, kind, url) => {
    const decision = decide({
      url,
      kind,
      tab: { tabId: 1, topUrl: kind === 'navigation' ? url : PAGE },
      state: state(given),
    });
    const rules = layers(given).map((r, i) => ({ ...r, id: i + 1 }));
    const type: DnrResourceType = kind === 'navigation' ? 'main_frame' : 'script';
    const target = new DnrEmulator(rules).match({ url, type, tabId: 1 }).redirectUrl;
    expect(target).toBe(decision.action === 'upgrade' ? decision.url : null);
  });

  it('covers each way of keeping a request on HTTP, and both upgrades', () => {
    const reasons = new Set(
      rows.map(
        ([, g, kind, url]) =>
          decide({
            url,
            kind,
            tab: { tabId: 1, topUrl: kind === 'navigation' ? url : PAGE },
            state: state(g),
          }).reason,
      ),
    );
    for (const r of [
      'https-first',
      'known-host',
      'mode-off',
      'extension-off',
      'site-off',
      'http-allowed',
      'http-once',
      'loop-guard',
      'local-name',
      'no-rule',
    ])
      expect(reasons).toContain(r);
  });
});
