import { Agent, Response, type fetch as undiciFetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { createHttpsifyFetch, httpsifyInterceptor } from '../src/index.js';

const noRules = { rewrite: () => null };

/** Stands in for undici's fetch: every URL redirects to itself; counts the hops sent. */
function redirectLoop() {
  let hops = 0;
  const send = (async (url: string) => {
    hops++;
    const res = new Response(null, { status: 302, headers: { location: url } });
    Object.defineProperty(res, 'url', { value: url });
    return res;
  }) as unknown as typeof undiciFetch;
  return { send, hops: () => hops };
}

describe('createHttpsifyFetch checks its options when it is created', () => {
  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['NaN redirects', { maxRedirects: NaN }, /option maxRedirects must be an integer from 0 to 100, got NaN/],
    ['text redirects', { maxRedirects: 'abc' }, /option maxRedirects must be an integer from 0 to 100, got "abc"/],
    ['negative redirects', { maxRedirects: -1 }, /option maxRedirects must be an integer/],
    ['fractional redirects', { maxRedirects: 1.5 }, /option maxRedirects must be an integer/],
    ['endless redirects', { maxRedirects: Infinity }, /option maxRedirects must be an integer/],
    ['a NaN deadline', { policy: 'prefer', preferTimeoutMs: NaN }, /option preferTimeoutMs must be an integer number of milliseconds/],
    ['a zero deadline', { preferTimeoutMs: 0 }, /option preferTimeoutMs must be/],
    ['a rewriter without rewrite()', { rewriter: {} }, /option rewriter must be an object with a rewrite\(url\) method, such as an Engine, got an object/],
    ['a null rewriter', { rewriter: null }, /option rewriter must be an object with a rewrite\(url\) method.*got null/],
    ['a dispatcher without dispatch()', { dispatcher: {} }, /option dispatcher must be an undici Dispatcher/],
    ['onUpgrade not a function', { onUpgrade: 'log' }, /option onUpgrade must be a function, got "log"/],
    ['a flag that is not a boolean', { allowHttpFallbackWithCredentials: 'no' }, /option allowHttpFallbackWithCredentials must be true or false/],
    ['fetch not a function', { fetch: {} }, /option fetch must be a function/],
    // A misspelt key would leave the default (weaker) policy in force without a word.
    ['a misspelt option', { polcy: 'force' }, /unknown option "polcy"; known: policy, rewriter/],
    ['a null policy', { policy: null }, /unknown policy null/],
  ];
  for (const [what, options, message] of bad) {
    it(`refuses ${what}`, () => {
      expect(() => createHttpsifyFetch(options as never)).toThrow(TypeError);
      expect(() => createHttpsifyFetch(options as never)).toThrow(message);
    });
  }

  it('refuses options that are not an object', () => {
    expect(() => createHttpsifyFetch('force' as never)).toThrow(/createHttpsifyFetch: options must be an object/);
  });

  it('a NaN maxRedirects no longer follows a redirect loop: nothing is sent', () => {
    const loop = redirectLoop();
    expect(() => createHttpsifyFetch({ rewriter: noRules, fetch: loop.send, maxRedirects: NaN })).toThrow(TypeError);
    expect(loop.hops()).toBe(0);
  });

  it('takes the bounds and left-out options; maxRedirects counts the hops followed', async () => {
    for (const maxRedirects of [0, 2, 100]) {
      const loop = redirectLoop();
      const f = createHttpsifyFetch({ rewriter: noRules, fetch: loop.send, maxRedirects, preferTimeoutMs: 1, onUpgrade: undefined });
      await expect(f('https://loop.test/')).rejects.toThrow(`more than ${maxRedirects} redirects`);
      expect(loop.hops()).toBe(maxRedirects + 1);
    }
    expect(() => createHttpsifyFetch({ dispatcher: new Agent(), preferTimeoutMs: 3_600_000, allowHttpFallbackWithBody: false })).not.toThrow();
  });
});

describe('httpsifyInterceptor checks its options when it is created', () => {
  it('refuses a rewriter without rewrite(), an option only fetch takes, and a misspelt one', () => {
    expect(() => httpsifyInterceptor({ rewriter: {} } as never)).toThrow(/httpsifyInterceptor: option rewriter must be an object with a rewrite\(url\) method/);
    expect(() => httpsifyInterceptor({ maxRedirects: 3 } as never)).toThrow(/httpsifyInterceptor: unknown option "maxRedirects"/);
    expect(() => httpsifyInterceptor({ onUpgrade: 1 } as never)).toThrow(/option onUpgrade must be a function, got 1/);
    expect(() => httpsifyInterceptor({ policy: 'force', rewriter: noRules })).not.toThrow();
  });
});
