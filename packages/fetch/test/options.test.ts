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
    [
      'NaN redirects',
      { maxRedirects: NaN },
      /option maxRedirects must be an integer from 0 to 100, got NaN/,
    ],
    [
      'text redirects',
      { maxRedirects: 'abc' },
      /option maxRedirects must be an integer from 0 to 100, got "abc"/,
    ],
    ['negative redirects', { maxRedirects: -1 }, /option maxRedirects must be an integer/],
    ['fractional redirects', { maxRedirects: 1.5 }, /option maxRedirects must be an integer/],
    ['endless redirects', { maxRedirects: Infinity }, /option maxRedirects must be an integer/],
    [
      'a NaN deadline',
      { policy: 'prefer', preferTimeoutMs: NaN },
      /option preferTimeoutMs must be an integer number of milliseconds/,
    ],
    ['a zero deadline', { preferTimeoutMs: 0 }, /option preferTimeoutMs must be/],
    [
      'a rewriter without rewrite()',
      { rewriter: {} },
      /option rewriter must be an object with a rewrite\(url\) method, such as an Engine, got an object/,
    ],
    [
      'a null rewriter',
      { rewriter: null },
      /option rewriter must be an object with a rewrite\(url\) method.*got null/,
    ],
    [
      'a dispatcher without dispatch()',
      { dispatcher: {} },
      /option dispatcher must be an undici Dispatcher/,
    ],
    [
      'onUpgrade not a function',
      { onUpgrade: 'log' },
      /option onUpgrade must be a function, got "log"/,
    ],
    [
      'a flag that is not a boolean',
      { allowHttpFallbackWithCredentials: 'no' },
      /option allowHttpFallbackWithCredentials must be true or false/,
    ],
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
    expect(() => createHttpsifyFetch('force' as never)).toThrow(
      /createHttpsifyFetch: options must be an object/,
    );
  });

  it('a NaN maxRedirects no longer follows a redirect loop: nothing is sent', () => {
    const loop = redirectLoop();
    expect(() =>
      createHttpsifyFetch({ rewriter: noRules, fetch: loop.send, maxRedirects: NaN }),
    ).toThrow(TypeError);
    expect(loop.hops()).toBe(0);
  });

  it('takes the bounds and left-out options; maxRedirects counts the hops followed', async () => {
    for (const maxRedirects of [0, 2, 100]) {
      const loop = redirectLoop();
      const f = createHttpsifyFetch({
        rewriter: noRules,
        fetch: loop.send,
        maxRedirects,
        preferTimeoutMs: 1,
        onUpgrade: undefined,
      });
      await expect(f('https://loop.test/')).rejects.toThrow(`more than ${maxRedirects} redirects`);
      expect(loop.hops()).toBe(maxRedirects + 1);
    }
    expect(() =>
      createHttpsifyFetch({
        dispatcher: new Agent(),
        preferTimeoutMs: 3_600_000,
        allowHttpFallbackWithBody: false,
      }),
    ).not.toThrow();
  });
});

describe('options are read once, into a snapshot, and only the snapshot is used', () => {
  // Each shape once passed the check (Object.entries sees none of it) and then gave an unbounded
  // maxRedirects when read again per request.
  const bypasses: [string, () => unknown, RegExp][] = [
    [
      'an inherited NaN',
      () => Object.assign(Object.create({ maxRedirects: NaN }) as object, { rewriter: noRules }),
      /option maxRedirects must be an own property/,
    ],
    [
      'an inherited Infinity',
      () =>
        Object.assign(Object.create({ maxRedirects: Infinity }) as object, { rewriter: noRules }),
      /option maxRedirects must be an own property/,
    ],
    [
      'a non-enumerable NaN',
      () =>
        Object.defineProperty({ rewriter: noRules }, 'maxRedirects', {
          value: NaN,
          enumerable: false,
        }),
      /option maxRedirects must be an integer from 0 to 100, got NaN/,
    ],
    [
      'a getter',
      () => ({
        rewriter: noRules,
        get maxRedirects() {
          return 5;
        },
      }),
      /option maxRedirects must be a plain value, not a getter/,
    ],
    [
      'a Proxy hiding a key',
      () => new Proxy({ rewriter: noRules, maxRedirects: NaN }, { ownKeys: () => ['rewriter'] }),
      /option maxRedirects must be an own property/,
    ],
    [
      'a symbol key',
      () => ({ rewriter: noRules, [Symbol('maxRedirects')]: NaN }),
      /unknown option "Symbol\(maxRedirects\)"/,
    ],
  ];
  for (const [what, make, message] of bypasses) {
    it(`refuses ${what}, and sends nothing`, () => {
      const loop = redirectLoop();
      const options = Object.assign(make() as object, { fetch: loop.send });
      expect(() => createHttpsifyFetch(options as never)).toThrow(TypeError);
      expect(() => createHttpsifyFetch(options as never)).toThrow(message);
      expect(loop.hops()).toBe(0);
    });
  }

  it("uses what was checked, whatever the caller's object says later", async () => {
    const loop = redirectLoop();
    const upgraded: string[] = [];
    const options: Record<string, unknown> = {
      policy: 'force',
      rewriter: noRules,
      fetch: loop.send,
      maxRedirects: 0,
      onUpgrade: (e: { from: string }) => upgraded.push(e.from),
    };
    const f = createHttpsifyFetch(options as never);
    // Read per request before the snapshot: these would have been used, unchecked.
    options.onUpgrade = 'not a function';
    options.dispatcher = {};
    options.allowHttpFallbackWithBody = 'yes';
    await expect(f('http://loop.test/')).rejects.toThrow('more than 0 redirects');
    expect(upgraded).toEqual(['http://loop.test/']);
    expect(loop.hops()).toBe(1);
  });

  it('the interceptor refuses the same shapes', () => {
    expect(() => httpsifyInterceptor(Object.create({ onUpgrade: 1 }) as never)).toThrow(
      /option onUpgrade must be an own property/,
    );
    expect(() =>
      httpsifyInterceptor({
        get allowHttpFallbackWithBody() {
          return true;
        },
      } as never),
    ).toThrow(/must be a plain value, not a getter/);
  });
});

describe('httpsifyInterceptor checks its options when it is created', () => {
  it('refuses a rewriter without rewrite(), an option only fetch takes, and a misspelt one', () => {
    expect(() => httpsifyInterceptor({ rewriter: {} } as never)).toThrow(
      /httpsifyInterceptor: option rewriter must be an object with a rewrite\(url\) method/,
    );
    expect(() => httpsifyInterceptor({ maxRedirects: 3 } as never)).toThrow(
      /httpsifyInterceptor: unknown option "maxRedirects"/,
    );
    expect(() => httpsifyInterceptor({ onUpgrade: 1 } as never)).toThrow(
      /option onUpgrade must be a function, got 1/,
    );
    expect(() => httpsifyInterceptor({ policy: 'force', rewriter: noRules })).not.toThrow();
  });
});
