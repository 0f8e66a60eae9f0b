import { createEngine, type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { type Dispatcher, Response, type fetch as undiciFetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { createHttpsifyFetch, httpsifyInterceptor, HttpsRequiredError } from '../src/index.js';

/** good.test is upgraded in place; moved.test is sent to another host by its ruleset. */
const rules = () =>
  createEngine(
    [
      '<ruleset name="Good"><target host="good.test"/><rule from="^http:" to="https:"/></ruleset>',
      '<ruleset name="Moved"><target host="moved.test"/><rule from="^http://moved\\.test/" to="https://elsewhere.test/"/></ruleset>',
    ].map((xml) => parseRulesetXml(xml, 'r.xml').ruleset as Ruleset),
  );

const SECRETS = {
  authorization: 'Bearer s3cret',
  cookie: 'sid=1',
  'proxy-authorization': 'Basic eA==',
};

interface Sent {
  url: string;
  credentials: string[];
}

/**
 * Stands in for undici's fetch: records what each hop sends, answers from `routes` (a status
 * and Location, or a connection failure), 200 otherwise.
 */
function recorder(routes: Record<string, { status: number; location: string } | 'refused'>) {
  const sent: Sent[] = [];
  const send = (async (url: string, init: { headers: Headers }) => {
    sent.push({ url, credentials: Object.keys(SECRETS).filter((h) => init.headers.has(h)) });
    const route = routes[url];
    if (route === 'refused')
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    const res = route
      ? new Response(null, { status: route.status, headers: { location: route.location } })
      : new Response('ok');
    Object.defineProperty(res, 'url', { value: url });
    return res;
  }) as unknown as typeof undiciFetch;
  return { sent, send };
}

describe('createHttpsifyFetch: credentials', () => {
  it('drops credentials on an https -> http redirect, even back to the same host', async () => {
    const { sent, send } = recorder({
      'https://plain.test/a': { status: 302, location: 'http://plain.test/b' },
    });
    const f = createHttpsifyFetch({ rewriter: rules(), fetch: send });
    const res = await f('https://plain.test/a', { headers: SECRETS });
    expect(res.redirected).toBe(true);
    expect(sent).toEqual([
      { url: 'https://plain.test/a', credentials: Object.keys(SECRETS) },
      { url: 'http://plain.test/b', credentials: [] },
    ]);
  });

  it('drops credentials when a redirect goes to another host, and does not get them back', async () => {
    const { sent, send } = recorder({
      'https://good.test/a': { status: 302, location: 'https://other.test/b' },
      'https://other.test/b': { status: 302, location: 'https://good.test/c' },
    });
    const f = createHttpsifyFetch({ rewriter: rules(), fetch: send });
    await f('http://good.test/a', { headers: SECRETS });
    expect(sent.map((s) => s.credentials.length)).toEqual([3, 0, 0]);
  });

  it('does not send credentials to the host a ruleset moves the URL to', async () => {
    const { sent, send } = recorder({});
    const f = createHttpsifyFetch({ rewriter: rules(), fetch: send });
    const res = await f('http://moved.test/', { headers: SECRETS });
    expect(res.redirected).toBe(false);
    expect(sent).toEqual([{ url: 'https://elsewhere.test/', credentials: [] }]);
    // An upgrade of the same host keeps them.
    await f('http://good.test/', { headers: SECRETS });
    expect(sent[1]).toEqual({ url: 'https://good.test/', credentials: Object.keys(SECRETS) });
  });

  it('prefer: no fallback to http:// with credentials or a body unless asked for by name', async () => {
    const { sent, send } = recorder({ 'https://plain.test/': 'refused' });
    const f = createHttpsifyFetch({ policy: 'prefer', rewriter: rules(), fetch: send });
    await expect(f('http://plain.test/', { headers: { cookie: 'sid=1' } })).rejects.toThrow(
      /allowHttpFallbackWithCredentials/,
    );
    await expect(f('http://plain.test/', { method: 'POST', body: 'x=1' })).rejects.toBeInstanceOf(
      HttpsRequiredError,
    );
    expect(sent.map((s) => s.url)).toEqual(['https://plain.test/', 'https://plain.test/']);
    // Without either, or with the opt-in, the fallback happens.
    expect((await f('http://plain.test/')).status).toBe(200);
    const optedIn = createHttpsifyFetch({
      policy: 'prefer',
      rewriter: rules(),
      fetch: send,
      allowHttpFallbackWithCredentials: true,
      allowHttpFallbackWithBody: true,
    });
    expect(
      (await optedIn('http://plain.test/', { method: 'POST', body: 'x=1', headers: SECRETS }))
        .status,
    ).toBe(200);
    expect(sent.slice(2).map((s) => `${s.url} ${s.credentials.length}`)).toEqual([
      'https://plain.test/ 0',
      'http://plain.test/ 0',
      'https://plain.test/ 3',
      'http://plain.test/ 3',
    ]);
  });

  it('prefer: a fallback after an https hop still never carries credentials over http', async () => {
    const { sent, send } = recorder({
      'https://good.test/a': { status: 302, location: 'http://plain.test/b' },
      'https://plain.test/b': 'refused',
    });
    const f = createHttpsifyFetch({
      policy: 'prefer',
      rewriter: rules(),
      fetch: send,
      allowHttpFallbackWithCredentials: true,
    });
    await f('https://good.test/a', { headers: { authorization: 'Bearer x' } });
    expect(sent.map((s) => `${s.url} ${s.credentials.length}`)).toEqual([
      'https://good.test/a 1',
      'https://plain.test/b 0',
      'http://plain.test/b 0',
    ]);
  });
});

describe('httpsifyInterceptor: credentials', () => {
  /** Runs one dispatch through the interceptor and returns what reached the dispatcher below. */
  function through(
    options: Parameters<typeof httpsifyInterceptor>[0],
    opts: Partial<Dispatcher.DispatchOptions>,
    fail = false,
  ) {
    const seen: Dispatcher.DispatchOptions[] = [];
    const dispatch = ((o: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => {
      seen.push(o);
      if (fail && seen.length === 1)
        handler.onResponseError?.(
          null as never,
          Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }),
        );
      return true;
    }) as Dispatcher['dispatch'];
    const handler = { onResponseError: () => undefined } as Dispatcher.DispatchHandler;
    httpsifyInterceptor({ rewriter: rules(), ...options })(dispatch)(
      { method: 'GET', path: '/', ...opts } as Dispatcher.DispatchOptions,
      handler,
    );
    return seen.map((o) => ({
      to: `${String(o.origin)}${o.path}`,
      credentials: JSON.stringify(o.headers ?? {}).match(/authorization|cookie/gi)?.length ?? 0,
    }));
  }

  it.each([
    ['an object', SECRETS],
    ['a flat array', Object.entries(SECRETS).flat()],
  ])(
    'does not send credentials (as %s) to the host a ruleset moves the URL to',
    (_shape, headers) => {
      expect(through({}, { origin: 'http://moved.test', headers: headers as never })).toEqual([
        { to: 'https://elsewhere.test/', credentials: 0 },
      ]);
      expect(through({}, { origin: 'http://good.test', headers: headers as never })).toEqual([
        { to: 'https://good.test/', credentials: 3 },
      ]);
    },
  );

  it('prefer: no fallback to http:// with credentials or a body unless asked for by name', () => {
    expect(
      through(
        { policy: 'prefer' },
        { origin: 'http://plain.test', headers: { cookie: 'a=1' } },
        true,
      ),
    ).toEqual([{ to: 'https://plain.test/', credentials: 1 }]);
    expect(
      through(
        { policy: 'prefer' },
        { origin: 'http://plain.test', method: 'POST', body: 'x' },
        true,
      ),
    ).toHaveLength(1);
    expect(
      through({ policy: 'prefer' }, { origin: 'http://plain.test' }, true).map((s) => s.to),
    ).toEqual(['https://plain.test/', 'http://plain.test/']);
    const optedIn = {
      policy: 'prefer' as const,
      allowHttpFallbackWithCredentials: true,
      allowHttpFallbackWithBody: true,
    };
    expect(
      through(
        optedIn,
        { origin: 'http://plain.test', method: 'POST', body: 'x', headers: { cookie: 'a=1' } },
        true,
      ),
    ).toEqual([
      { to: 'https://plain.test/', credentials: 1 },
      { to: 'http://plain.test/', credentials: 1 },
    ]);
  });
});
