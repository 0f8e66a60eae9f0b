import { readFileSync } from 'node:fs';
import { lookup as dnsLookup } from 'node:dns';
import { getEventListeners } from 'node:events';
import { createEngine, type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHttpsifyFetch,
  httpsifyInterceptor,
  HttpsRequiredError,
  type UpgradeEvent,
} from '../src/index.js';
import {
  makeTestPki,
  startLocalServers,
  type LocalServers,
  type TestPki,
} from '../../cli/test/support/fetch-test-servers.js';
import { startDualServer, type DualServer } from '../../cli/test/support/dual-protocol-server.js';

let pki: TestPki;
let dual: DualServer;
let plainOnly: LocalServers;
let agent: Agent;
const rules = (): ReturnType<typeof createEngine> => {
  const xml = `<ruleset name="Good"><target host="good.test" /><rule from="^http:" to="https:" /></ruleset>`;
  return createEngine([parseRulesetXml(xml, 'Good.xml').ruleset as Ruleset]);
};

/** Every test host is 127.0.0.1; nothing leaves the machine. */
const lookup = (
  hostname: string,
  options: object,
  callback: (...args: unknown[]) => void,
): void => {
  if (hostname.endsWith('.test')) {
    const all = (options as { all?: boolean }).all === true;
    process.nextTick(() =>
      all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4),
    );
  } else dnsLookup(hostname, options, callback as never);
};

beforeAll(async () => {
  pki = makeTestPki(['good.test', 'plain.test', 'other.test']);
  dual = await startDualServer(pki, (req, res) => {
    if (req.path === '/to-http') {
      res.writeHead(302, { location: `http://${req.host}:${dual.port}/target` }).end();
      return;
    }
    if (req.path === '/post-redirect') {
      res.writeHead(303, { location: '/after' }).end();
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`${req.scheme} ${req.host} ${req.path}`);
  });
  plainOnly = await startLocalServers(
    pki,
    { 'plain.test': (_req, res) => res.writeHead(200).end('plain only') },
    {},
  );
  agent = new Agent({ connect: { ca: readFileSync(pki.caPath, 'utf8'), lookup: lookup as never } });
}, 60_000);

afterAll(async () => {
  await agent?.close();
  await dual?.close();
  await plainOnly?.close();
});

const since = (n: number): string[] => dual.requests.slice(n);

describe('createHttpsifyFetch', () => {
  it('rules: sends a URL a ruleset covers over HTTPS, and leaves other hosts alone', async () => {
    const f = createHttpsifyFetch({ rewriter: rules(), dispatcher: agent });
    const before = dual.requests.length;
    const covered = await f(`http://good.test:${dual.port}/page?q=1`);
    expect(await covered.text()).toBe('https good.test /page?q=1');
    expect(covered.url).toBe(`https://good.test:${dual.port}/page?q=1`);
    const other = await f(`http://other.test:${dual.port}/x`);
    expect(await other.text()).toBe('http other.test /x');
    expect(since(before)).toEqual([
      `https://good.test:${dual.port}/page?q=1`,
      `http://other.test:${dual.port}/x`,
    ]);
  });

  it('upgrades a redirect to http:// under the same policy', async () => {
    const events: UpgradeEvent[] = [];
    const f = createHttpsifyFetch({
      rewriter: rules(),
      dispatcher: agent,
      onUpgrade: (e) => events.push(e),
    });
    const before = dual.requests.length;
    const res = await f(`https://good.test:${dual.port}/to-http`);
    expect(await res.text()).toBe('https good.test /target');
    expect(since(before)).toEqual([
      `https://good.test:${dual.port}/to-http`,
      `https://good.test:${dual.port}/target`,
    ]);
    expect(events).toEqual([
      {
        from: `http://good.test:${dual.port}/target`,
        to: `https://good.test:${dual.port}/target`,
        reason: 'ruleset',
        redirect: true,
        fallback: false,
      },
    ]);
  });

  it('follows a 303 after a POST as a GET, and keeps redirect: "manual" as it is', async () => {
    const f = createHttpsifyFetch({ rewriter: rules(), dispatcher: agent });
    const res = await f(`http://good.test:${dual.port}/post-redirect`, {
      method: 'POST',
      body: 'a=1',
      headers: { 'content-type': 'text/plain' },
    });
    expect(await res.text()).toBe('https good.test /after');
    const manual = await f(`http://good.test:${dual.port}/to-http`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
    expect(manual.headers.get('location')).toBe(`http://good.test:${dual.port}/target`);
  });

  it("prefer: adds no listener of its own to the caller's signal, however many requests share it", async () => {
    const f = createHttpsifyFetch({ policy: 'prefer', rewriter: rules(), dispatcher: agent });
    const shared = new AbortController().signal;
    for (let i = 0; i < 20; i++)
      expect(
        await (await f(`http://other.test:${dual.port}/n${i}`, { signal: shared })).text(),
      ).toBe(`https other.test /n${i}`);
    expect(getEventListeners(shared, 'abort')).toHaveLength(0);
    // Still honoured: aborted, a request fails at once.
    const ctl = new AbortController();
    ctl.abort(new Error('stop'));
    await expect(f(`http://other.test:${dual.port}/x`, { signal: ctl.signal })).rejects.toThrow();
  });

  it('prefer: tries HTTPS for hosts no ruleset covers, and falls back to http:// when HTTPS cannot connect', async () => {
    const events: UpgradeEvent[] = [];
    const f = createHttpsifyFetch({
      policy: 'prefer',
      rewriter: rules(),
      dispatcher: agent,
      onUpgrade: (e) => events.push(e),
    });
    const secure = await f(`http://other.test:${dual.port}/y`);
    expect(await secure.text()).toBe('https other.test /y');
    // The plain-only server answers TLS with garbage: the HTTPS try fails, HTTP answers.
    const fallback = await f(`http://plain.test:${plainOnly.httpPort}/z`);
    expect(await fallback.text()).toBe('plain only');
    expect(fallback.url).toBe(`http://plain.test:${plainOnly.httpPort}/z`);
    expect(events.map((e) => e.to)).toEqual([
      `https://other.test:${dual.port}/y`,
      `https://plain.test:${plainOnly.httpPort}/z`,
      `http://plain.test:${plainOnly.httpPort}/z`,
    ]);
  });

  it('force: never sends plain HTTP, and fails when HTTPS cannot be reached', async () => {
    const f = createHttpsifyFetch({ policy: 'force', rewriter: rules(), dispatcher: agent });
    const ok = await f(`http://other.test:${dual.port}/f`);
    expect(await ok.text()).toBe('https other.test /f');
    const before = plainOnly.requests.length;
    await expect(f(`http://plain.test:${plainOnly.httpPort}/f`)).rejects.toBeInstanceOf(
      HttpsRequiredError,
    );
    expect(plainOnly.requests.slice(before)).toEqual([]);
  });

  it("accepts a Request from Node's global fetch, keeping its method, body and redirect mode", async () => {
    const f = createHttpsifyFetch({ rewriter: rules(), dispatcher: agent });
    const res = await f(
      new globalThis.Request(`http://good.test:${dual.port}/post-redirect`, {
        method: 'POST',
        body: 'x=1',
      }),
    );
    expect(await res.text()).toBe('https good.test /after');
    const manual = await f(
      new globalThis.Request(`http://good.test:${dual.port}/to-http`, { redirect: 'manual' }),
    );
    expect(manual.status).toBe(302);
  });

  it('does not fall back when the caller aborts', async () => {
    const f = createHttpsifyFetch({ policy: 'prefer', rewriter: rules(), dispatcher: agent });
    const before = plainOnly.requests.length;
    await expect(
      f(`http://plain.test:${plainOnly.httpPort}/abort`, { signal: AbortSignal.abort() }),
    ).rejects.toThrow();
    expect(plainOnly.requests.slice(before)).toEqual([]);
  });

  it('refuses an unknown policy', () => {
    expect(() => createHttpsifyFetch({ policy: 'sometimes' as never })).toThrow(
      /unknown policy "sometimes"/,
    );
  });

  it('uses the bundled rulesets by default', async () => {
    // No network: the request to en.wikipedia.org is refused by a dispatcher that only records it.
    const seen: string[] = [];
    const recorder = new Agent().compose((dispatch) => (opts, handler) => {
      seen.push(`${String(opts.origin)}${opts.path}`);
      return dispatch({ ...opts, origin: `http://127.0.0.1:${plainOnly.closedPort}` }, handler);
    });
    const f = createHttpsifyFetch({ dispatcher: recorder });
    await expect(f('http://en.wikipedia.org/wiki/Example')).rejects.toThrow();
    expect(seen).toEqual(['https://en.wikipedia.org/wiki/Example']);
    await recorder.close();
  });
});

describe('httpsifyInterceptor', () => {
  it('rules: upgrades each hop of a fetch, redirects included', async () => {
    const composed = agent.compose(httpsifyInterceptor({ rewriter: rules() }));
    const before = dual.requests.length;
    const res = await undiciFetch(`http://good.test:${dual.port}/to-http`, {
      dispatcher: composed,
    });
    expect(await res.text()).toBe('https good.test /target');
    expect(since(before)).toEqual([
      `https://good.test:${dual.port}/to-http`,
      `https://good.test:${dual.port}/target`,
    ]);
  });

  it('prefer: falls back to http:// when the HTTPS attempt fails before any answer', async () => {
    const composed = agent.compose(httpsifyInterceptor({ policy: 'prefer', rewriter: rules() }));
    const res = await undiciFetch(`http://plain.test:${plainOnly.httpPort}/i`, {
      dispatcher: composed,
    });
    expect(await res.text()).toBe('plain only');
    const secure = await undiciFetch(`http://other.test:${dual.port}/i`, { dispatcher: composed });
    expect(await secure.text()).toBe('https other.test /i');
  });

  it('force: the request fails rather than go over plain HTTP', async () => {
    const composed = agent.compose(httpsifyInterceptor({ policy: 'force', rewriter: rules() }));
    const before = plainOnly.requests.length;
    await expect(
      undiciFetch(`http://plain.test:${plainOnly.httpPort}/i`, { dispatcher: composed }),
    ).rejects.toThrow();
    expect(plainOnly.requests.slice(before)).toEqual([]);
  });

  it("works as a dispatcher for Node's global fetch", async () => {
    const composed = agent.compose(httpsifyInterceptor({ rewriter: rules() }));
    const before = dual.requests.length;
    const res = await fetch(`http://good.test:${dual.port}/global`, {
      dispatcher: composed,
    } as RequestInit);
    expect(await res.text()).toBe('https good.test /global');
    expect(since(before)).toEqual([`https://good.test:${dual.port}/global`]);
  });
});
