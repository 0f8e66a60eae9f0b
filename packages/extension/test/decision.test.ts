import { describe, expect, it } from 'vitest';
import {
  decide,
  type Decision,
  type DecisionState,
  type RequestKind,
} from '../src/decision/decide.js';

/**
 * The decision order, case by case (docs/architecture.md draws it). Each row: what holds, the
 * request, and what the extension does with it and why. The state starts from "the mode on,
 * nothing else": every row changes only what it is about.
 */
interface Given {
  off?: boolean;
  mode?: boolean;
  siteOff?: string;
  /** The "off" entry covers only the top-level page's site, not the request's. */
  pageOff?: string;
  allowed?: string;
  once?: string;
  /** A loop verdict: this http:// URL as tab 7's page. */
  loop?: string;
  /** A loop verdict: this http:// URL as a subresource in tab 7. */
  subLoop?: string;
  user?: [string, string];
  rules?: [string, string];
  excluded?: string;
  known?: string[];
}

function state(g: Given): DecisionState {
  const covers = (entry: string | undefined, url: string) =>
    entry !== undefined && new URL(url).hostname.endsWith(entry) ? entry : null;
  return {
    globalEnabled: g.off !== true,
    httpsFirst: g.mode !== false,
    siteOffBy: (url) => covers(g.siteOff, url) ?? covers(g.pageOff, url),
    httpAllowedBy: (url) => covers(g.allowed, url),
    httpOnce: (host) => host === g.once,
    loopVerdict: (url, tabId, kind) =>
      tabId === 7 && url === (kind === 'navigation' ? g.loop : g.subLoop),
    userRewrite: (url) =>
      g.user !== undefined && url.startsWith(g.user[0])
        ? { rewritten: g.user[1], ruleset: 'Mine' }
        : null,
    rewrite: (url) =>
      g.user !== undefined && url.startsWith(g.user[0])
        ? { rewritten: g.user[1], ruleset: 'Mine' }
        : g.rules !== undefined && url.startsWith(g.rules[0])
          ? { rewritten: g.rules[1], ruleset: 'Site' }
          : { rewritten: null, ruleset: null },
    excludedBy: (url) => (g.excluded !== undefined && url.startsWith(g.excluded) ? 'Site' : null),
    knownHttps: (host) => g.known?.includes(host) ?? false,
  };
}

const NAV: RequestKind = 'navigation';
const SUB: RequestKind = 'subresource';
const PAGE = 'http://page.test/';

type Row = [string, Given, RequestKind, string, Partial<Decision>, number?];

const rows: Row[] = [
  [
    'an https:// URL is not ours to touch',
    {},
    NAV,
    'https://a.test/',
    { action: 'leave', reason: 'not-http' },
  ],
  [
    'nor is a URL that does not parse',
    {},
    NAV,
    'http://[bad/',
    { action: 'leave', reason: 'not-http' },
  ],
  [
    'the global switch off leaves even a ruleset',
    { off: true, rules: ['http://a.test/', 'https://a.test/'] },
    NAV,
    'http://a.test/',
    { action: 'leave', reason: 'extension-off' },
  ],
  [
    'a site switched off',
    { siteOff: 'a.test', rules: ['http://a.test/', 'https://a.test/'] },
    NAV,
    'http://a.test/',
    { action: 'leave', reason: 'site-off', entry: 'a.test' },
  ],
  [
    'a page switched off: its subresources too',
    { pageOff: 'page.test', known: ['cdn.test'] },
    SUB,
    'http://cdn.test/x.js',
    { action: 'leave', reason: 'site-off' },
  ],
  [
    'the switched-off site outranks the loop guard',
    { siteOff: 'a.test', loop: 'http://a.test/' },
    NAV,
    'http://a.test/',
    { reason: 'site-off' },
  ],
  [
    "a loop verdict for the URL, as this tab's page",
    { loop: 'http://a.test/', rules: ['http://a.test/', 'https://a.test/'] },
    NAV,
    'http://a.test/',
    { action: 'allowHttp', reason: 'loop-guard' },
  ],
  // Semantics changed (issue 38): a verdict is one URL in one tab, never the host.
  [
    'a loop verdict relaxes no other URL of the host',
    { loop: 'http://a.test/', rules: ['http://a.test/', 'https://a.test/'] },
    NAV,
    'http://a.test/other',
    { action: 'upgrade', reason: 'ruleset' },
  ],
  [
    'a loop verdict relaxes no other tab',
    { loop: 'http://a.test/', rules: ['http://a.test/', 'https://a.test/'] },
    NAV,
    'http://a.test/',
    { action: 'upgrade', reason: 'ruleset' },
    8,
  ],
  [
    "a page's loop verdict relaxes no subresource, not even of that URL",
    { loop: 'http://a.test/i.png', known: ['a.test'] },
    SUB,
    'http://a.test/i.png',
    { action: 'upgrade', reason: 'known-host' },
  ],
  [
    "a subresource's loop verdict, in its tab: above user rules and rulesets",
    { subLoop: 'http://a.test/i.png', user: ['http://a.test/', 'https://a.test/'] },
    SUB,
    'http://a.test/i.png',
    { action: 'allowHttp', reason: 'loop-guard' },
  ],
  [
    "a subresource's loop verdict relaxes no page, not even of that URL",
    { subLoop: 'http://a.test/i.png', rules: ['http://a.test/', 'https://a.test/'] },
    NAV,
    'http://a.test/i.png',
    { action: 'upgrade', reason: 'ruleset' },
  ],
  [
    "a subresource's loop verdict relaxes no other tab",
    { subLoop: 'http://a.test/i.png', known: ['a.test'] },
    SUB,
    'http://a.test/i.png',
    { action: 'upgrade', reason: 'known-host' },
    8,
  ],
  [
    "a subresource's loop verdict relaxes no other URL of the host",
    { subLoop: 'http://a.test/i.png', known: ['a.test'] },
    SUB,
    'http://a.test/i.png?x',
    { action: 'upgrade', reason: 'known-host' },
  ],
  [
    'the switched-off page outranks a subresource loop verdict',
    { pageOff: 'page.test', subLoop: 'http://a.test/i.png' },
    SUB,
    'http://a.test/i.png',
    { action: 'leave', reason: 'site-off' },
  ],
  [
    'a user rule',
    { user: ['http://a.test/', 'https://secure.a.test/'] },
    NAV,
    'http://a.test/x',
    { action: 'upgrade', url: 'https://secure.a.test/', reason: 'user-rule' },
  ],
  [
    'a ruleset',
    { rules: ['http://a.test/', 'https://a.test/'] },
    NAV,
    'http://a.test/p',
    { action: 'upgrade', url: 'https://a.test/', reason: 'ruleset', ruleset: 'Site' },
  ],
  [
    'a ruleset on a "rulesets only" site still applies',
    { allowed: 'a.test', rules: ['http://a.test/', 'https://a.test/'] },
    NAV,
    'http://a.test/',
    { reason: 'ruleset' },
  ],
  [
    'a ruleset wins over "open over HTTP this time"',
    { once: 'a.test', rules: ['http://a.test/', 'https://a.test/'] },
    NAV,
    'http://a.test/',
    { reason: 'ruleset' },
  ],
  [
    'a ruleset rewrites subresources, also without a tab',
    { rules: ['http://a.test/', 'https://a.test/'] },
    SUB,
    'http://a.test/x',
    { action: 'upgrade', reason: 'ruleset' },
    -1,
  ],
  [
    'a rewrite to the same URL is none',
    { rules: ['http://a.test/', 'http://a.test/'], mode: false },
    NAV,
    'http://a.test/',
    { action: 'leave', reason: 'mode-off' },
  ],
  [
    '"open over HTTP this time"',
    { once: 'a.test', allowed: 'a.test' },
    NAV,
    'http://a.test/',
    { action: 'allowHttp', reason: 'http-once' },
  ],
  [
    '"rulesets only"',
    { allowed: 'a.test' },
    NAV,
    'http://a.test:8080/',
    { action: 'allowHttp', reason: 'http-allowed', entry: 'a.test' },
  ],
  [
    'a ruleset excludes the page',
    { excluded: 'http://a.test/plain' },
    NAV,
    'http://a.test/plain/x',
    { action: 'leave', reason: 'ruleset-excludes', ruleset: 'Site' },
  ],
  [
    'HTTPS-first off',
    { mode: false },
    NAV,
    'http://a.test/',
    { action: 'leave', reason: 'mode-off' },
  ],
  [
    '"rulesets only" means nothing with the mode off',
    { mode: false, allowed: 'a.test' },
    NAV,
    'http://a.test/',
    { reason: 'mode-off' },
  ],
  [
    'a loopback address',
    {},
    NAV,
    'http://127.0.0.1:3000/',
    { action: 'leave', reason: 'local-name' },
  ],
  ['a single-label name', {}, NAV, 'http://intranet/', { action: 'leave', reason: 'local-name' }],
  ['.onion', {}, NAV, 'http://abc.onion/', { action: 'leave', reason: 'local-name' }],
  [
    'HTTPS-first upgrades the rest, path and query kept',
    {},
    NAV,
    'http://a.test/p?q=1#f',
    { action: 'upgrade', url: 'https://a.test/p?q=1#f', reason: 'https-first' },
  ],
  [
    'a known HTTPS host: its subresources',
    { known: ['cdn.test'] },
    SUB,
    'http://cdn.test/x.js',
    { action: 'upgrade', url: 'https://cdn.test/x.js', reason: 'known-host' },
  ],
  [
    'a known host, an excluded URL',
    { known: ['cdn.test'], excluded: 'http://cdn.test/plain' },
    SUB,
    'http://cdn.test/plain/x',
    { action: 'leave', reason: 'ruleset-excludes' },
  ],
  [
    'a known host left on "rulesets only"',
    { known: ['cdn.test'], allowed: 'cdn.test' },
    SUB,
    'http://cdn.test/x',
    { action: 'leave', reason: 'no-rule' },
  ],
  [
    'a known host switched off itself',
    { known: ['cdn.test'], siteOff: 'cdn.test' },
    SUB,
    'http://cdn.test/x',
    { action: 'leave' },
  ],
  [
    'a known host opened over HTTP this time',
    { known: ['cdn.test'], once: 'cdn.test' },
    SUB,
    'http://cdn.test/x',
    { action: 'leave', reason: 'no-rule' },
  ],
  [
    'a known host, mode off',
    { known: ['cdn.test'], mode: false },
    SUB,
    'http://cdn.test/x',
    { action: 'leave', reason: 'no-rule' },
  ],
  [
    'a known host, a request without a tab',
    { known: ['cdn.test'] },
    SUB,
    'http://cdn.test/x',
    { action: 'upgrade', reason: 'known-host', url: 'https://cdn.test/x' },
    -1,
  ],
  [
    'an unknown host, subresource',
    {},
    SUB,
    'http://other.test/x',
    { action: 'leave', reason: 'no-rule' },
  ],
  [
    'HTTPS-first never upgrades subresources by itself',
    {},
    SUB,
    'http://a.test/',
    { action: 'leave', reason: 'no-rule' },
  ],
];

describe('decide: the decision order', () => {
  it.each(rows)('%s', (_what, given, kind, url, expected, tabId = 7) => {
    const d = decide({
      url,
      kind,
      tab: { tabId, topUrl: kind === SUB ? PAGE : undefined },
      state: state(given),
    });
    expect(d).toMatchObject(expected);
  });

  it('relaxes protection only through the user-made or evidence-backed state', () => {
    // Every allowHttp decision is traced to one of the three kinds of state that weaken protection.
    const relaxing = rows
      .map(([, g, kind, url]) =>
        decide({ url, kind, tab: { tabId: 7, topUrl: PAGE }, state: state(g) }),
      )
      .filter((d) => d.action === 'allowHttp');
    expect(new Set(relaxing.map((d) => d.reason))).toEqual(
      new Set(['loop-guard', 'http-once', 'http-allowed']),
    );
  });
});
