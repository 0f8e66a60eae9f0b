import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { PageStatus, PageStatusKind, PopupState } from '../src/protocol/ui-protocol.js';
import { MODE_HINT, modeChanges, reloadUrl, siteMode } from '../src/ui/popup/site-mode.js';
import { statusText } from '../src/ui/popup/status-text.js';

// Outside a browser `t` answers the message's key, so the popup's words can be checked by key.
const messages = JSON.parse(
  readFileSync(new URL('../static/_locales/en/messages.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

const base = { secure: false, retry: false };
/** One status of every kind the background reports (a kind missing here does not compile). */
const EVERY_KIND: Record<PageStatusKind, PageStatus[]> = {
  'not-a-web-page': [{ ...base, kind: 'not-a-web-page' }],
  'extension-off': [{ ...base, kind: 'extension-off' }],
  'https-by-ruleset': [{ ...base, secure: true, kind: 'https-by-ruleset', ruleset: 'Example' }],
  'https-by-upgrade': [{ ...base, secure: true, kind: 'https-by-upgrade' }],
  'https-already': [{ ...base, secure: true, kind: 'https-already' }],
  'https-by-site': [{ ...base, secure: true, kind: 'https-by-site' }],
  'https-by-browser': [
    { ...base, secure: true, kind: 'https-by-browser', userWantsHttp: false },
    { ...base, secure: true, kind: 'https-by-browser', userWantsHttp: true },
  ],
  'http-site-off': [{ ...base, retry: true, kind: 'http-site-off', entry: 'a.test' }],
  'http-loop-guard': [{ ...base, retry: true, kind: 'http-loop-guard', host: 'a.test' }],
  'http-allowed': [{ ...base, retry: true, kind: 'http-allowed', entry: 'a.test' }],
  'http-upgrade-failed': [
    { ...base, retry: true, kind: 'http-upgrade-failed', host: 'a.test', onFallbackPage: false },
    { ...base, retry: true, kind: 'http-upgrade-failed', host: 'a.test', onFallbackPage: true },
  ],
  'http-ruleset-off': [
    { ...base, retry: true, kind: 'http-ruleset-off', rulesets: ['Example', 'Other'] },
  ],
  'http-ruleset-excludes': [{ ...base, kind: 'http-ruleset-excludes', ruleset: 'Example' }],
  'http-not-yet': [{ ...base, retry: true, kind: 'http-not-yet' }],
  'http-no-rule': [
    { ...base, kind: 'http-no-rule', httpsFirst: false, localAddress: false },
    { ...base, kind: 'http-no-rule', httpsFirst: true, localAddress: false },
    { ...base, kind: 'http-no-rule', httpsFirst: true, localAddress: true },
  ],
};
const statuses = Object.values(EVERY_KIND).flat();

describe('popup status line', () => {
  it.each(statuses.map((s) => [s.kind, s] as const))(
    '%s is said in words the locale has',
    (_kind, status) => {
      const text = statusText(status);
      for (const key of [text.title, text.detail, text.action].filter(
        (k) => k !== undefined && k !== '',
      ))
        expect(messages, `${status.kind}: ${key}`).toHaveProperty([key as string]);
      expect(text.detail, status.kind).not.toBe('');
    },
  );

  it('every state the background can undo offers the button that undoes it', () => {
    for (const status of statuses.filter((s) => s.retry)) {
      const text = statusText(status);
      expect(text.action, status.kind).toBeDefined();
      expect(text.act ?? 'retry', status.kind).toBe('retry');
    }
  });

  it('with protection switched off, the way back on is offered', () => {
    expect(statusText(EVERY_KIND['extension-off'][0]!)).toMatchObject({
      act: 'turn-on',
      action: 'statusOffAction',
    });
    const noRule = EVERY_KIND['http-no-rule'][0]!;
    expect(statusText(noRule)).toMatchObject({ tone: 'warn', act: 'https-first-on' });
  });

  it('where the browser keeps a page on HTTPS against the user, its own setting is named', () => {
    const kept = { ...base, secure: true, kind: 'https-by-browser', userWantsHttp: true } as const;
    // Chromium: loading past its upgrade works, and its settings page may be opened.
    expect(statusText(kept, 'chromium')).toMatchObject({
      act: 'open-http',
      detail: 'statusHttpsByBrowserChromiumSteps',
      settings: { url: 'chrome://settings/security' },
    });
    // Firefox: no extension can set the exception nor open about:preferences; exact steps only.
    const ff = statusText(kept, 'firefox');
    expect(ff.detail).toBe('statusHttpsByBrowserFirefoxSteps');
    expect([ff.action, ff.settings]).toEqual([undefined, undefined]);
    expect(messages).toHaveProperty(
      ['statusHttpsByBrowserFirefoxSteps', 'message'],
      expect.stringContaining('Manage Exceptions'),
    );
  });

  it('a kind this popup does not know yet is shown by `secure` alone', () => {
    const unknown = { secure: false, retry: true, kind: 'some-new-mode' } as unknown as PageStatus;
    expect(statusText(unknown)).toMatchObject({
      tone: 'warn',
      title: 'statusNotSecure',
      action: 'popupRetry',
    });
    expect(statusText({ ...unknown, secure: true, retry: false })).toMatchObject({
      tone: 'ok',
      title: 'statusSecure',
      action: undefined,
    });
  });
});

type Site = NonNullable<PopupState['site']>;
const site = (over: Partial<Site> = {}): Site => ({
  url: 'https://a.test/page?q=1',
  scheme: 'https',
  hostWithPort: 'a.test',
  disabledBy: null,
  httpAllowedBy: null,
  ...over,
});

describe('popup site switch', () => {
  it('each mode has its hint in the locale', () => {
    for (const key of Object.values(MODE_HINT)) expect(messages).toHaveProperty([key]);
  });

  it('changes only the lists that differ, removing the entry that actually matched', () => {
    expect(modeChanges(site(), 'everything')).toEqual([]);
    expect(modeChanges(site(), 'off')).toEqual([
      { type: 'siteAdd', list: 'disabledSites', entry: 'a.test' },
    ]);
    expect(modeChanges(site(), 'rules')).toEqual([
      { type: 'siteAdd', list: 'httpAllowedSites', entry: 'a.test' },
    ]);
    // The site was switched off through a wider entry: that entry is the one removed.
    const off = site({ disabledBy: '*.test' });
    expect(siteMode(off)).toBe('off');
    expect(modeChanges(off, 'everything')).toEqual([
      { type: 'siteRemove', list: 'disabledSites', entry: '*.test' },
    ]);
    const rules = site({ httpAllowedBy: 'a.test' });
    expect(modeChanges(rules, 'rules')).toEqual([]);
    expect(modeChanges(rules, 'off')).toEqual([
      { type: 'siteRemove', list: 'httpAllowedSites', entry: 'a.test' },
      { type: 'siteAdd', list: 'disabledSites', entry: 'a.test' },
    ]);
  });

  it('goes back to the http:// address only when the new mode would not have moved the page', () => {
    const s = site();
    expect(reloadUrl(s, 'https-by-ruleset', 'off')).toBe('http://a.test/page?q=1');
    expect(reloadUrl(s, 'https-by-upgrade', 'off')).toBe('http://a.test/page?q=1');
    expect(reloadUrl(s, 'https-by-upgrade', 'rules')).toBe('http://a.test/page?q=1');
    // Rulesets still apply in "rules only"; a page that was HTTPS on its own stays so.
    expect(reloadUrl(s, 'https-by-ruleset', 'rules')).toBeUndefined();
    expect(reloadUrl(s, 'https-already', 'off')).toBeUndefined();
    // The browser's own upgrade: "Off" and "Rules only" both ask for the http:// address.
    expect(reloadUrl(s, 'https-by-browser', 'off')).toBe('http://a.test/page?q=1');
    expect(reloadUrl(s, 'https-by-browser', 'rules')).toBe('http://a.test/page?q=1');
    expect(reloadUrl(s, 'https-by-site', 'off')).toBeUndefined();
    expect(
      reloadUrl(site({ scheme: 'http', url: 'http://a.test/' }), 'http-no-rule', 'everything'),
    ).toBeUndefined();
  });
});
