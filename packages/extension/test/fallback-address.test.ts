import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fallbackPageUrl,
  fallbackTarget,
  MAX_ATTEMPTS,
  readFallbackPage,
} from '../src/https-first/fallback-address.js';
import { FALLBACK_PAGE } from '../src/platform/packaged-files.js';

const BASE = `chrome-extension://abcdefghijklmnop/${FALLBACK_PAGE}`;
// Any text: `&`, `#`, `%`, `+`, `=`, spaces and astral characters must all come back.
const text = fc.string({ unit: 'binary', maxLength: 40 });
const attempt = fc.record({ url: text, result: text });

describe('the fallback page address', () => {
  it('reads back exactly what the background wrote', () => {
    fc.assert(
      fc.property(
        text,
        text,
        fc.record(
          {
            tried: fc.array(attempt, { maxLength: MAX_ATTEMPTS }),
            http: text,
            twin: fc.option(text, { nil: null }),
            back: fc.constantFrom(1, 2),
            ticket: text,
          },
          { requiredKeys: [] },
        ),
        (url, reason, extra) => {
          const address = fallbackPageUrl(BASE, url, reason, extra);
          expect(address.startsWith(`${BASE}?`)).toBe(true);
          const read = readFallbackPage(new URL(address).searchParams);
          expect(read).toEqual({
            url,
            reason,
            ticket: extra.ticket ?? null,
            tried: extra.tried ?? [],
            http: extra.http ?? null,
            twin: extra.twin ?? null,
            back: extra.back ?? 1,
          });
          // The page reads `location.search`, the background the whole address: one answer.
          expect(readFallbackPage(new URL(address).search)).toEqual(read);
          expect(fallbackTarget(address)).toBe(url);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads any query a site can write without throwing, keeping only well-formed parts', () => {
    const hostile = readFallbackPage(
      '?tried=' +
        encodeURIComponent(
          JSON.stringify([
            { url: 'https://a.test/', result: 'ok' },
            { url: 7, result: 'ok' },
            null,
            'x',
          ]),
        ) +
        '&back=9',
    );
    expect(hostile).toEqual({
      url: null,
      reason: '',
      ticket: null,
      tried: [{ url: 'https://a.test/', result: 'ok' }],
      http: null,
      twin: null,
      back: 1,
    });
    expect(readFallbackPage('?tried=%7Bnot%20json&back=1.5').tried).toEqual([]);
    expect(readFallbackPage('?tried=%7B%7D&back=-1').back).toBe(1);
    const many = Array.from({ length: 50 }, (_, i) => ({
      url: `https://${i}.test/`,
      result: 'ok',
    }));
    expect(
      readFallbackPage(`?tried=${encodeURIComponent(JSON.stringify(many))}`).tried,
    ).toHaveLength(MAX_ATTEMPTS);
    expect(fallbackTarget('not a url')).toBeNull();
  });
});
