import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OVERRIDE_RULE_ID_LIMIT } from '../src/dnr/layout.js';
import { buildExtension } from '../src/packaging/build.js';
import {
  launchWithExtension,
  switchProtectionModeOff,
  type LoadedExtension,
} from './support/browser.js';
import { page, serveLoopHost, SHARED_TEST_RULESETS, writeRulesetsDir } from './support/e2e-site.js';
import { startDualServer, type DualServer } from './support/servers.js';

/** The shared test rulesets and what only DNR needs checking against. */
const TEST_RULESETS = `${SHARED_TEST_RULESETS}
<ruleset name="Swap Example">
  <target host="swap.example.test"/>
  <rule from="^http://swap\\.example\\.test(?=:)" to="https://new.example.test"/>
</ruleset>
<ruleset name="Dots Example">
  <target host="dots.example.test"/>
  <rule from="^http:" to="https:"/>
</ruleset>
<ruleset name="Mixed Example" platform="mixedcontent">
  <target host="mixed.example.test"/>
  <rule from="^http:" to="https:"/>
</ruleset>
<ruleset name="Engine Only">
  <target host="engineonly.example.test"/>
  <securecookie host=".+" name=".+"/>
  <rule from="^http://engineonly\\.example\\.test(?&lt;!x)(:\\d+)?/" to="https://engineonly.example.test$1/"/>
</ruleset>`;

describe('Chromium MV3 extension (DNR) in a real browser', () => {
  let server: DualServer;
  let ext: LoadedExtension;
  let origin: (scheme: string, host: string) => string;

  beforeAll(async () => {
    const rulesDir = writeRulesetsDir(TEST_RULESETS, 'httpsify-e2e-rules-');
    const built = await buildExtension({
      rulesets: [rulesDir],
      outDir: mkdtempSync(join(tmpdir(), 'httpsify-e2e-ext-')),
      browsers: ['chromium'],
      zip: false,
    });
    // Only the lookbehind (RE2 has none) is left out: the engine would upgrade that host, DNR does not.
    expect(built.dnr.omissions.map((o) => [o.ruleset, o.what])).toEqual([
      ['Engine Only', 'rule'],
      ['Engine Only', 'ruleset'],
    ]);
    server = await startDualServer((req, res, secure) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      const scheme = secure ? 'https' : 'http';
      if (serveLoopHost(req, res, secure)) return;
      if (host === 'cookie.example.test')
        return page(res, `cookie over ${scheme}`, { 'set-cookie': 'sid=abc; Path=/' });
      if (host === 'engineonly.example.test')
        return page(res, `engine only over ${scheme}`, { 'set-cookie': 'eo=1; Path=/' });
      if (host === 'page.uncovered.test' && req.url === '/sub') {
        return page(res, `<script src="http://plain.example.test:${server.port}/s.js"></script>`, {
          'set-cookie': 'other=1; Path=/',
        });
      }
      if (host === 'page.uncovered.test' && req.url === '/dots') {
        // Trailing-dot hosts: a trivial ruleset, one with an exclusion, and a host-moving `$1` rule.
        const p = server.port;
        const srcs = [
          `http://dots.example.test.:${p}/d.js`,
          `http://plain.example.test.:${p}/excluded/e.js`,
          `http://old.example.test.:${p}/o.js`,
        ];
        return page(
          res,
          srcs
            .map(
              (s, i) =>
                `<script src="${s}" onerror="document.body.dataset.failed${i} = 'failed'"></script>`,
            )
            .join(''),
        );
      }
      if (req.url === '/s.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(`document.body.dataset.loaded = ${JSON.stringify(scheme)};`);
        return;
      }
      if (req.url?.endsWith('.js')) {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(
          `document.body.dataset[${JSON.stringify(req.url.replace(/\W/g, ''))}] = ${JSON.stringify(`${scheme} ${host}`)};`,
        );
        return;
      }
      page(res, `${scheme} ${host} ${req.url}`);
    });
    origin = (scheme, host) => `${scheme}://${host}:${server.port}`;
    ext = await launchWithExtension(built.dirs.chromium!, ['*.example.test', '*.uncovered.test']);
    await switchProtectionModeOff(ext);
  });

  afterAll(async () => {
    await ext?.close();
    await server?.close();
  });

  it('loads the extension with its static rules', async () => {
    const rules = await ext.worker.evaluate(async () => {
      const ids = await chrome.declarativeNetRequest.getEnabledRulesets();
      return ids;
    });
    expect(rules).toEqual(['default']);
  });

  it('leaves a host no ruleset covers on http:// (control)', async () => {
    const tab = await ext.context.newPage();
    await tab.goto(`${origin('http', 'page.uncovered.test')}/plain`);
    expect(tab.url()).toBe(`${origin('http', 'page.uncovered.test')}/plain`);
    await tab.close();
  });

  it('ends a navigation to a covered http:// site on https://', async () => {
    const tab = await ext.context.newPage();
    await tab.goto(`${origin('http', 'plain.example.test')}/hello?x=1`);
    expect(tab.url()).toBe(`${origin('https', 'plain.example.test')}/hello?x=1`);
    expect(await tab.textContent('body')).toContain('https plain.example.test /hello?x=1');
    await tab.close();
  });

  it('upgrades a subresource of an http:// page', async () => {
    const tab = await ext.context.newPage();
    await tab.goto(`${origin('http', 'page.uncovered.test')}/sub`);
    await tab.waitForFunction(() => document.body.dataset.loaded !== undefined);
    expect(await tab.evaluate(() => document.body.dataset.loaded)).toBe('https');
    const fetched = server.log.filter((r) => r.path === '/s.js');
    expect(fetched.map((r) => r.secure)).toEqual([true]);
    await tab.close();
  });

  it('upgrades a subresource whose host ends in a dot where the reference surely does, else leaves it as sent', async () => {
    const tab = await ext.context.newPage();
    await tab.goto(`${origin('http', 'page.uncovered.test')}/dots`);
    const loaded = () => tab.evaluate(() => ({ ...document.body.dataset }));
    // Each script either loads or fails (a dotted host may not resolve here).
    await expect.poll(async () => Object.keys(await loaded()).length, { timeout: 10_000 }).toBe(3);
    const got = await loaded();
    // A trivial ruleset without exclusions: the dot dropped and upgraded, as the reference does.
    expect(got.djs).toBe('https dots.example.test');
    // An exclusion or a rule that keeps some paths on http:// would leave the dotless host (another
    // origin) on http://: those keep their dots, as sent.
    expect(got.excludedejs ?? got.failed1).toMatch(/^(http plain\.example\.test\.|failed)$/);
    expect(got.ojs ?? got.failed2).toMatch(/^(http old\.example\.test\.|failed)$/);
    const hits = server.log.filter((r) =>
      ['/d.js', '/excluded/e.js', '/moved/o.js', '/o.js'].includes(r.path),
    );
    expect(
      hits
        .filter((r) => !r.host.endsWith('.'))
        .map((r) => `${r.secure ? 'https' : 'http'} ${r.host} ${r.path}`),
    ).toEqual(['https dots.example.test /d.js']);
    await tab.close();
  });

  it('respects an exclusion', async () => {
    const tab = await ext.context.newPage();
    await tab.goto(`${origin('http', 'plain.example.test')}/excluded/page`);
    expect(tab.url()).toBe(`${origin('http', 'plain.example.test')}/excluded/page`);
    expect(await tab.textContent('body')).toContain('http plain.example.test /excluded/page');
    await tab.close();
  });

  it('lands a non-trivial host rewrite on the right URL', async () => {
    const tab = await ext.context.newPage();
    await tab.goto(`${origin('http', 'old.example.test')}/a/b?c=1`);
    expect(tab.url()).toBe(`${origin('https', 'new.example.test')}/moved/a/b?c=1`);
    expect(await tab.textContent('body')).toContain('https new.example.test /moved/a/b?c=1');
    await tab.close();
  });

  it('swaps a host with a regex-free transform redirect (lookahead rewritten away)', async () => {
    const tab = await ext.context.newPage();
    await tab.goto(`${origin('http', 'swap.example.test')}/p?q=1`);
    expect(tab.url()).toBe(`${origin('https', 'new.example.test')}/p?q=1`);
    await tab.close();
  });

  it('follows ruleset switches at run time through dynamic rules', async () => {
    const send = (request: unknown) =>
      ext.worker.evaluate(
        (r) =>
          (
            globalThis as unknown as { httpsify: { handleMessage(r: unknown): Promise<unknown> } }
          ).httpsify.handleMessage(r),
        request,
      );
    const tab = await ext.context.newPage();
    // A switched-off ruleset's hosts pass through the handoff page (it asks decide()): wait for
    // where the page sends the tab.
    const visit = async (host: string) => {
      await tab.goto(`${origin('http', host)}/`);
      await tab.waitForURL((u) => u.protocol !== 'chrome-extension:');
      return new URL(tab.url()).protocol;
    };
    expect(await visit('off.example.test')).toBe('http:');
    await send({ type: 'setRulesetActive', name: 'Off Example', active: true });
    await send({ type: 'setRulesetActive', name: 'Plain Example', active: false });
    expect(await visit('off.example.test')).toBe('https:');
    expect(await visit('plain.example.test')).toBe('http:');
    expect(await send({ type: 'getState' })).toMatchObject({
      overrides: { 'Off Example': true, 'Plain Example': false },
    });
    // Stored as the popup stores them: in the settings, through the store.
    const stored = await ext.worker.evaluate(
      async () => (await chrome.storage.local.get('rulesetOverrides')).rulesetOverrides,
    );
    expect(stored).toEqual({ 'Off Example': true, 'Plain Example': false });
    expect(await send({ type: 'setRulesetActive', name: 'No Such Ruleset', active: true })).toEqual(
      { error: 'no ruleset named No Such Ruleset' },
    );
    await send({ type: 'setRulesetActive', name: 'Off Example', active: null });
    await send({ type: 'setRulesetActive', name: 'Plain Example', active: null });
    expect(await visit('off.example.test')).toBe('http:');
    expect(await visit('plain.example.test')).toBe('https:');
    const dynamic = await ext.worker.evaluate(() => chrome.declarativeNetRequest.getDynamicRules());
    expect(dynamic.filter((r) => r.id < OVERRIDE_RULE_ID_LIMIT)).toEqual([]);
    await tab.close();
  });

  it('follows the mixed-content switch: the static rules leave those rulesets off, dynamic rules add them', async () => {
    const setMixed = (value: boolean) =>
      ext.worker.evaluate(async (v) => {
        const ui = (
          globalThis as unknown as {
            httpsifyUi: { controller: Promise<{ handle(r: unknown): Promise<unknown> }> };
          }
        ).httpsifyUi;
        await (await ui.controller).handle({ type: 'setFlag', flag: 'mixedContent', value: v });
      }, value);
    const tab = await ext.context.newPage();
    // A switched-off ruleset's hosts pass through the handoff page (it asks decide()): wait for
    // where the page sends the tab.
    const visit = async (host: string) => {
      await tab.goto(`${origin('http', host)}/`);
      await tab.waitForURL((u) => u.protocol !== 'chrome-extension:');
      return new URL(tab.url()).protocol;
    };
    expect(await visit('mixed.example.test')).toBe('http:');
    await setMixed(true);
    await expect.poll(() => visit('mixed.example.test'), { timeout: 5000 }).toBe('https:');
    await setMixed(false);
    await expect.poll(() => visit('mixed.example.test'), { timeout: 5000 }).toBe('http:');
    const dynamic = await ext.worker.evaluate(() => chrome.declarativeNetRequest.getDynamicRules());
    expect(dynamic.filter((r) => r.id < OVERRIDE_RULE_ID_LIMIT)).toEqual([]);
    await tab.close();
  });

  it('stops an HTTPS→HTTP redirect loop on the HTTP page and keeps that page on HTTP in its tab', async () => {
    const tab = await ext.context.newPage();
    const url = `${origin('http', 'loop.example.test')}/`;
    await tab.goto(url);
    await tab.waitForFunction(
      () => document.body?.textContent?.includes('plain http page'),
      undefined,
      { timeout: 20_000 },
    );
    expect(tab.url()).toBe(url);
    const secureHits = server.log.filter(
      (r) => r.host === 'loop.example.test' && r.path === '/' && r.secure,
    ).length;
    expect(secureHits).toBeGreaterThanOrEqual(3);
    expect(secureHits).toBeLessThan(20);
    const session = await ext.worker.evaluate(() => chrome.declarativeNetRequest.getSessionRules());
    // Semantics changed (issue 38): the verdict is this URL as this tab's page, never the host.
    expect(
      session.map((r) => [
        r.condition.regexFilter,
        r.condition.resourceTypes,
        r.condition.tabIds?.length,
      ]),
    ).toEqual([[`^${url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?:#.*)?$`, ['main_frame'], 1]]);
    // Later visits of that page in that tab go straight to HTTP.
    const before = server.log.length;
    await tab.goto(url);
    expect(tab.url()).toBe(url);
    // (The browser may also ask for /favicon.ico; only the page request matters here.)
    expect(
      server.log
        .slice(before)
        .filter((r) => r.host === 'loop.example.test' && r.path === '/')
        .map((r) => r.secure),
    ).toEqual([false]);
    await tab.close();
  });

  it('adds the Secure flag to a cookie of a covered host, and only there', async () => {
    const tab = await ext.context.newPage();
    // The engine would secure this cookie, but the DNR rules do not upgrade its host's
    // subresources (its main frame goes through the handoff page): a Secure cookie would no
    // longer reach them over HTTP.
    await tab.goto(`${origin('http', 'engineonly.example.test')}/`);
    await tab.waitForURL(`${origin('https', 'engineonly.example.test')}/`);
    await tab.goto(`${origin('http', 'cookie.example.test')}/`);
    expect(tab.url()).toBe(`${origin('https', 'cookie.example.test')}/`);
    await tab.goto(`${origin('http', 'page.uncovered.test')}/sub`);
    await expect
      .poll(async () => (await ext.context.cookies()).find((c) => c.name === 'sid')?.secure, {
        timeout: 10_000,
      })
      .toBe(true);
    await tab.waitForTimeout(500);
    const cookies = await ext.context.cookies();
    expect(cookies.find((c) => c.name === 'other')?.secure).toBe(false);
    expect(cookies.find((c) => c.name === 'eo')?.secure).toBe(false);
    await tab.close();
  });
});
