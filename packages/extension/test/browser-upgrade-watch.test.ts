import { describe, expect, it } from 'vitest';
import { BrowserUpgradeWatch } from '../src/status/browser-upgrade-watch.js';

/** The event sequences measured in Chromium 156 and Firefox ESR 153 (docs/browser-upgrades.md). */
describe('who moved the page to HTTPS', () => {
  it("Chromium's HTTPS-Upgrades: the navigation starts at http://, its first request is https://", () => {
    const w = new BrowserUpgradeWatch();
    w.started(1, 'http://a.example.com/b');
    w.committedPage(1, 'https://a.example.com/b');
    expect(w.movedBy(1, 'https://a.example.com/b')).toBe('browser');
  });

  it('HSTS or HTTPS-Only: an internal redirect (Chromium 307 "Internal Redirect", Firefox status 0)', () => {
    const w = new BrowserUpgradeWatch();
    w.started(1, 'http://a.example.com/');
    w.redirected(1, 'http://a.example.com/', 'https://a.example.com/', 0, undefined);
    w.committedPage(1, 'https://a.example.com/');
    expect(w.movedBy(1, 'https://a.example.com/')).toBe('browser');
    w.started(2, 'http://a.example.com/');
    w.redirected(
      2,
      'http://a.example.com/',
      'https://a.example.com/',
      307,
      'HTTP/1.1 307 Internal Redirect',
    );
    w.committedPage(2, 'https://a.example.com/');
    expect(w.movedBy(2, 'https://a.example.com/')).toBe('browser');
  });

  it("the site's own redirect is the site's, and a page opened at https:// was moved by nobody", () => {
    const w = new BrowserUpgradeWatch();
    w.started(1, 'http://a.example.com/');
    w.redirected(
      1,
      'http://a.example.com/',
      'https://a.example.com/',
      301,
      'HTTP/1.1 301 Moved Permanently',
    );
    w.committedPage(1, 'https://a.example.com/');
    expect(w.movedBy(1, 'https://a.example.com/')).toBe('site');
    w.started(1, 'https://a.example.com/x');
    w.committedPage(1, 'https://a.example.com/x');
    expect(w.movedBy(1, 'https://a.example.com/x')).toBeNull();
  });

  it("Chromium's handoff answered by the worker: one navigation, through our page, is not the browser's", () => {
    const w = new BrowserUpgradeWatch();
    w.started(1, 'http://a.example.com/');
    const page =
      'chrome-extension://abcdefghijklmnopabcdefghijklmnop/ui/handoff.html?http://a.example.com/';
    w.redirected(1, 'http://a.example.com/', page, 307, 'HTTP/1.1 307 Internal Redirect');
    w.committedPage(1, 'https://a.example.com/');
    expect(w.movedBy(1, 'https://a.example.com/')).toBeNull();
  });

  it('answers only for the page it saw commit, and forgets closed tabs', () => {
    const w = new BrowserUpgradeWatch();
    w.started(1, 'http://a.example.com/');
    w.committedPage(1, 'https://a.example.com/');
    expect(w.movedBy(1, 'https://a.example.com/other')).toBeNull();
    // Another host without a redirect seen is not a scheme upgrade.
    w.started(1, 'http://a.example.com/');
    w.committedPage(1, 'https://b.example.com/');
    expect(w.movedBy(1, 'https://b.example.com/')).toBeNull();
    w.started(2, 'http://a.example.com/');
    w.committedPage(2, 'https://a.example.com/');
    w.tabClosed(2);
    expect(w.movedBy(2, 'https://a.example.com/')).toBeNull();
  });
});
