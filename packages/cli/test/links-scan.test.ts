import { describe, expect, it } from 'vitest';
import { contentSimilarity, visibleWords } from '../src/links/content-similarity.js';
import { findUrlsInHtml, srcsetUrls } from '../src/links/scan-html.js';
import { findUrlsInMarkdown } from '../src/links/scan-markdown.js';
import { findUrlsInText } from '../src/links/scan-text.js';
import {
  applyFindings,
  plainUpgrade,
  planRewrites,
  upgradedSpelling,
} from '../src/links/plan-rewrites.js';

const raw = (text: string, found: { start: number; end: number }[]): string[] =>
  found.map((o) => text.slice(o.start, o.end));

describe('text scanner', () => {
  it('delimits URLs as a reader would', () => {
    const text =
      'a http://x.test/p. b (http://x.test/w_(1)) c <http://x.test/a> "http://x.test/q", d http://x.test/e?; e:http://x.test/colon fhttp://no.test http://';
    expect(raw(text, findUrlsInText(text))).toEqual([
      'http://x.test/p',
      'http://x.test/w_(1)',
      'http://x.test/a',
      'http://x.test/q',
      'http://x.test/e',
      'http://x.test/colon',
    ]);
  });

  it('stops at characters URLs never contain in text, and spans non-ASCII paths', () => {
    const text = 'see http://x.test/ünï/路径\u3000next http://x.test/a`b';
    expect(raw(text, findUrlsInText(text))).toEqual(['http://x.test/ünï/路径', 'http://x.test/a']);
  });
});

describe('HTML scanner', () => {
  it('parses srcset candidates, commas in URLs included', () => {
    const value = ' a.png 1x,b,c.png 2x, d.png (x, y) 3x,\n e.png';
    expect(srcsetUrls(value).map(([s, e]) => value.slice(s, e))).toEqual([
      'a.png',
      'b,c.png',
      'd.png',
      'e.png',
    ]);
  });

  it('writes a changed head with the quoting of its attribute, keeping the tail as it was', () => {
    const html = `<a href="http://x.test/?a=1&amp;b=2">x</a><a href='http://x.test/'>y</a><a href=http://x.test/>z</a>`;
    const found = findUrlsInHtml(html);
    const moved = (o: { url: string }): string =>
      o.url.replace('http://x.test/', 'https://y.test/"q\'&/');
    expect(found.map((o) => o.encode(moved(o)))).toEqual([
      "https://y.test/&quot;q'&amp;/?a=1&amp;b=2",
      'https://y.test/"q&#39;&amp;/',
      'https://y.test/&#34;q&#39;&amp;/',
    ]);
  });

  it('ignores text, comments, scripts and the content of <pre>/<code>', () => {
    const html =
      '<pre>http://x.test/a</pre><code>http://x.test/b</code><script>"http://x.test/c"</script><!-- <a href="http://x.test/d"> --><p>http://x.test/e</p>';
    expect(findUrlsInHtml(html)).toEqual([]);
  });
});

describe('Markdown scanner', () => {
  it('finds destinations, definitions and autolinks but nothing in code', () => {
    const md =
      '[a](http://x.test/1) `http://x.test/2` <http://x.test/3>\n\n    http://x.test/4\n\n~~~\nhttp://x.test/5\n~~~\n\n[r]: http://x.test/6\n\nhttp://x.test/7 ``http://x.test/8``\n';
    expect(findUrlsInMarkdown(md).map((o) => o.url)).toEqual([
      'http://x.test/1',
      'http://x.test/3',
      'http://x.test/6',
      'http://x.test/7',
    ]);
  });

  it('escapes what a destination cannot hold', () => {
    const md = '[a](http://x.test/a\\)b) [b](<http://x.test/c d>)';
    const found = findUrlsInMarkdown(md);
    expect(found.map((o) => o.url)).toEqual(['http://x.test/a)b', 'http://x.test/c d']);
    expect(found.map((o) => o.encode('https://y.test/(p)'))).toEqual([
      'https://y.test/\\(p\\)',
      'https://y.test/(p)',
    ]);
  });
});

describe('link text: one rule for Markdown and HTML', () => {
  // Visible text changes with its link only when it is exactly the link's own URL.
  const contexts = (found: { url: string; context: string }[]): string[] =>
    found.map((o) => `${o.context} ${o.url}`);

  it('Markdown: [http://x](http://x) changes both; other link text and image alt text stay', () => {
    const md =
      '[http://x.test/a](http://x.test/a) [see http://x.test/b](http://x.test/b) [http://x.test/c](http://x.test/d)\n' +
      '[http://X.test](http://x.test/) [**http://x.test/e**](http://x.test/e) [![http://x.test/i.png](http://x.test/i.png)](http://x.test/f)\n';
    expect(contexts(findUrlsInMarkdown(md))).toEqual([
      'markdown-link-text http://x.test/a',
      'markdown-destination http://x.test/a',
      'markdown-destination http://x.test/b',
      'markdown-destination http://x.test/d',
      'markdown-link-text http://X.test',
      'markdown-destination http://x.test/',
      'markdown-destination http://x.test/e',
      'markdown-destination http://x.test/i.png',
      'markdown-destination http://x.test/f',
    ]);
  });

  it('HTML: <a href="http://x">http://x</a> changes both, in HTML files and in Markdown', () => {
    const html =
      '<p><a href="http://x.test/?a=1&amp;b=2"> http://x.test/?a=1&amp;b=2 </a> <a href="http://x.test/g">http://x.test/h</a> <a href="http://x.test/i"><b>http://x.test/i</b></a></p>';
    const found = findUrlsInHtml(html);
    expect(contexts(found)).toEqual([
      'html-attribute:href http://x.test/?a=1&b=2',
      'html-link-text http://x.test/?a=1&b=2',
      'html-attribute:href http://x.test/g',
      'html-attribute:href http://x.test/i',
    ]);
    // Written back in its place: a character reference kept, a new & escaped for text.
    expect(found[1]!.encode('https://x.test/?a=1&b=2')).toBe('https://x.test/?a=1&amp;b=2');
    expect(found[1]!.encode('https://y.test/&/?a=1&b=2')).toBe('https://y.test/&amp;/?a=1&amp;b=2');
    expect(
      contexts(findUrlsInMarkdown(`Text\n\n${html}\n`)).filter((c) => c.includes('link-text')),
    ).toEqual(['markdown-html-link-text http://x.test/?a=1&b=2']);
  });
});

describe('planning', () => {
  it('keeps the document spelling when only the scheme changes', () => {
    expect(upgradedSpelling('http://X.test', 'https://x.test/')).toBe('https://X.test');
    expect(upgradedSpelling('http://x.test/a', 'https://www.x.test/a')).toBe(
      'https://www.x.test/a',
    );
  });

  it('--upgrade-all changes only the scheme, dropping an explicit :80', () => {
    expect(plainUpgrade('http://x.test/a?b#c')).toBe('https://x.test/a?b#c');
    expect(plainUpgrade('http://x.test:80/a')).toBe('https://x.test/a');
    expect(plainUpgrade('http://x.test:8080/a')).toBe('https://x.test:8080/a');
  });

  it('splices replacements and copies every other character', () => {
    const text = 'x http://a.test/ y\r\nhttp://b.test/ z';
    const rewrite = (url: string) => ({
      rewritten: url.replace(/^http:/, 'https:'),
      ruleset: 'R',
      channel: null,
    });
    const { findings } = planRewrites('f', text, findUrlsInText(text), rewrite, false);
    expect(findings.map((f) => [f.line, f.column])).toEqual([
      [1, 3],
      [2, 1],
    ]);
    expect(applyFindings(text, findings)).toBe('x https://a.test/ y\r\nhttps://b.test/ z');
  });
});

describe('content similarity', () => {
  const page = (body: string): { contentType: string; body: string } => ({
    contentType: 'text/html',
    body: `<html><script>var t=${Math.random()}</script><body>${body}</body></html>`,
  });
  it('compares visible words, not markup or scripts', () => {
    expect(
      visibleWords('<p>Hello&nbsp;<b>World</b></p><script>x()</script><!-- y -->', true),
    ).toEqual(['hello', 'world']);
    const words = 'the quick brown fox jumps over the lazy dog '.repeat(10);
    expect(contentSimilarity(page(words), page(words))).toBe(1);
    expect(contentSimilarity(page(`${words} one more`), page(words))).toBeGreaterThanOrEqual(0.9);
    expect(contentSimilarity(page(words), page('this domain is for sale'))).toBeLessThan(0.5);
  });

  it('does not count links printed with the scheme they were fetched over', () => {
    expect(
      contentSimilarity(
        { contentType: 'text/plain', body: 'see http://a.test/x' },
        { contentType: 'text/plain', body: 'see https://a.test/x' },
      ),
    ).toBe(1);
  });

  it('binary bodies must be identical', () => {
    expect(
      contentSimilarity(
        { contentType: 'image/png', body: 'abc' },
        { contentType: 'image/png', body: 'abd' },
      ),
    ).toBe(0);
  });
});
