import { describe, expect, it } from 'vitest';
import { pageStatus, type PageStatusInputs } from '../src/status/page-status.js';

const FALLBACK = 'chrome-extension://abc/ui/fallback.html';

/** What a row says of the page: the tab's record, and each answer of the settings. */
interface PageAnswers extends Omit<PageStatusInputs, 'state' | 'tabId'> {
  globalEnabled: boolean;
  httpsFirst: boolean;
  disabledBy: string | null;
  httpAllowedBy: string | null;
  httpOnce: boolean;
  loopGuarded: boolean;
  rewriteHttp: { rewritten: string | null; ruleset: string | null };
  excludedBy?: string | null;
}

/** The row's answers as the decision's state the status reads (the snapshot's, in the popup). */
function inputs(over: Partial<PageAnswers>): PageStatusInputs {
  const a: PageAnswers = {
    url: 'http://site.test/',
    fallbackPath: '/ui/fallback.html',
    globalEnabled: true,
    httpsFirst: false,
    disabledBy: null,
    httpAllowedBy: null,
    httpOnce: false,
    loopGuarded: false,
    upgraded: null,
    rewriteHttp: { rewritten: null, ruleset: null },
    offRulesets: [],
    ...over,
  };
  return {
    url: a.url,
    tabId: 7,
    fallbackPath: a.fallbackPath,
    upgraded: a.upgraded,
    offRulesets: a.offRulesets,
    movedBy: a.movedBy,
    state: {
      globalEnabled: a.globalEnabled,
      httpsFirst: a.httpsFirst,
      siteOffBy: () => a.disabledBy,
      httpAllowedBy: () => a.httpAllowedBy,
      httpOnce: (_host, tabId) => a.httpOnce && tabId === 7,
      loopVerdict: (_url, tabId) => a.loopGuarded && tabId === 7,
      userRewrite: () => null,
      rewrite: () => a.rewriteHttp,
      excludedBy: () => a.excludedBy ?? null,
      knownHttps: () => false,
    },
  };
}

const RULED = { rewritten: 'https://site.test/', ruleset: 'Site' };

describe('page status: why a page is or is not on HTTPS', () => {
  it.each<[string, Partial<PageAnswers>, Record<string, unknown>]>([
    ['no tab', { url: undefined }, { kind: 'not-a-web-page', secure: false, retry: false }],
    ['a browser page', { url: 'chrome://settings/' }, { kind: 'not-a-web-page' }],
    [
      'the global switch off',
      { globalEnabled: false, rewriteHttp: RULED },
      { kind: 'extension-off', retry: false },
    ],
    [
      'upgraded by a ruleset',
      { url: 'https://site.test/', upgraded: { byHttpsFirst: false }, rewriteHttp: RULED },
      { kind: 'https-by-ruleset', ruleset: 'Site', secure: true },
    ],
    [
      'upgraded by HTTPS-first',
      { url: 'https://site.test/', upgraded: { byHttpsFirst: true }, httpsFirst: true },
      { kind: 'https-by-upgrade', secure: true },
    ],
    [
      'HTTPS without us',
      { url: 'https://site.test/', rewriteHttp: RULED },
      { kind: 'https-already', secure: true },
    ],
    [
      'the site redirected to HTTPS',
      { url: 'https://site.test/', movedBy: 'site' },
      { kind: 'https-by-site', secure: true },
    ],
    [
      'the browser upgraded it',
      { url: 'https://site.test/', movedBy: 'browser' },
      { kind: 'https-by-browser', userWantsHttp: false },
    ],
    [
      'the browser upgraded a site the user switched off',
      { url: 'https://site.test/', movedBy: 'browser', disabledBy: 'site.test' },
      { kind: 'https-by-browser', userWantsHttp: true, secure: true },
    ],
    [
      'the browser upgraded a "Rules only" site',
      {
        url: 'https://site.test/',
        movedBy: 'browser',
        httpAllowedBy: 'site.test',
        httpsFirst: true,
      },
      { kind: 'https-by-browser', userWantsHttp: true },
    ],
    [
      'httpsify off, the browser upgraded the page',
      { url: 'https://site.test/', movedBy: 'browser', globalEnabled: false },
      { kind: 'https-by-browser', userWantsHttp: true },
    ],
    [
      'our own upgrade is ours even where the browser would have done it',
      {
        url: 'https://site.test/',
        movedBy: 'browser',
        upgraded: { byHttpsFirst: false },
        rewriteHttp: RULED,
      },
      { kind: 'https-by-ruleset' },
    ],
    [
      'the site switched off',
      { disabledBy: '*.site.test', rewriteHttp: RULED },
      { kind: 'http-site-off', entry: '*.site.test', retry: true },
    ],
    [
      'the loop guard',
      { loopGuarded: true, rewriteHttp: RULED },
      { kind: 'http-loop-guard', host: 'site.test', retry: true },
    ],
    [
      'HTTP allowed while HTTPS-first is on',
      { httpsFirst: true, httpAllowedBy: 'site.test' },
      { kind: 'http-allowed', entry: 'site.test', retry: true },
    ],
    [
      '"open over HTTP this time"',
      { httpsFirst: true, httpOnce: true, httpAllowedBy: 'site.test' },
      { kind: 'http-upgrade-failed', host: 'site.test', onFallbackPage: false },
    ],
    [
      'the fallback page (any extension origin)',
      {
        url: `moz-extension://other-uuid/ui/fallback.html?url=${encodeURIComponent('http://down.test/')}`,
      },
      { kind: 'http-upgrade-failed', host: 'down.test' },
    ],
    [
      'the fallback page itself',
      { url: `${FALLBACK}?url=${encodeURIComponent('https://down.test:8443/a?b')}&reason=x` },
      { kind: 'http-upgrade-failed', host: 'down.test', onFallbackPage: true, retry: true },
    ],
    [
      'a ruleset the user switched off',
      { offRulesets: ['Site'] },
      { kind: 'http-ruleset-off', rulesets: ['Site'], retry: true },
    ],
    [
      'a ruleset that excludes the address',
      { httpsFirst: true, excludedBy: 'Site' },
      { kind: 'http-ruleset-excludes', ruleset: 'Site', retry: false, secure: false },
    ],
    [
      'a rule that applies since the page loaded',
      { rewriteHttp: RULED },
      { kind: 'http-not-yet', retry: true },
    ],
    [
      'HTTPS-first switched on after the page loaded',
      { httpsFirst: true },
      { kind: 'http-not-yet' },
    ],
    ['no rule', {}, { kind: 'http-no-rule', httpsFirst: false, localAddress: false, retry: false }],
    [
      'a local address under HTTPS-first',
      { httpsFirst: true, url: 'http://192.168.1.1/' },
      { kind: 'http-no-rule', httpsFirst: true, localAddress: true },
    ],
  ])('%s', (_what, over, expected) => {
    expect(pageStatus(inputs(over))).toMatchObject(expected);
  });

  it('an allowance of HTTP means nothing while a ruleset upgrades the site', () => {
    expect(
      pageStatus(inputs({ httpsFirst: true, httpAllowedBy: 'site.test', rewriteHttp: RULED })).kind,
    ).toBe('http-not-yet');
  });
});
