import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnrEmulator } from '@httpsify/engine/dnr';
import { corpusRulesDir, readOracle, type OracleCase } from '../../engine/test/support/corpus.js';
import { buildExtension, type BuildResult } from '../src/packaging/build.js';
import type { Page } from 'playwright-core';
import {
  launchWithExtension,
  switchProtectionModeOff,
  type LoadedExtension,
} from './support/browser.js';
import { page } from './support/e2e-site.js';
import { startDualServer, type DualServer } from './support/servers.js';

/** The browser's form of a URL: WHATWG-canonical, fragment dropped (it never reaches a request). */
const asBrowserSees = (url: string): string => {
  const u = new URL(url);
  u.hash = '';
  return u.href;
};

/**
 * The corpus in the Chromium build, and a sample of oracle URLs whose rulesets DNR cannot
 * express completely opened as top-level pages: each must end on the reference's URL, and the
 * server must never see the plain-HTTP request of one the reference rewrites to HTTPS.
 */
describe('oracle URLs in Chromium', () => {
  let built: BuildResult;
  let ext: LoadedExtension;
  let oracle: OracleCase[];
  let server: DualServer;
  let outDir = '';

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'httpsify-oracle-ext-'));
    built = await buildExtension({
      rulesets: [corpusRulesDir()],
      outDir,
      browsers: ['chromium'],
      zip: false,
    });
    oracle = await readOracle();
    // Every host, on any port, reaches one loopback server speaking HTTP and TLS.
    server = await startDualServer((req, res, secure) =>
      page(res, `${secure ? 'https' : 'http'} ${req.headers.host} ${req.url}`),
    );
    ext = await launchWithExtension(built.dirs.chromium!, [], {
      resolverRules: [`MAP * 127.0.0.1:${server.port}`],
    });
    await switchProtectionModeOff(ext);
  }, 120_000);

  /** Whether Chromium's static HSTS list forces HTTPS on a host (chrome://net-internals). */
  let internals: Page | null = null;
  const hstsPreloaded = async (host: string): Promise<boolean> => {
    if (internals === null) {
      internals = await ext.context.newPage();
      await internals.goto('chrome://net-internals/#hsts');
    }
    const p = internals;
    await p.evaluate(
      () => void (document.querySelector('#hsts-view-query-output')!.textContent = ''),
    );
    await p.fill('#hsts-view-query-input', host);
    await p.click('#hsts-view-query-submit');
    await p.waitForFunction(() =>
      /Found|Not found/.test(document.querySelector('#hsts-view-query-output')?.textContent ?? ''),
    );
    return (
      (await p.textContent('#hsts-view-query-output'))?.includes(
        'static_upgrade_mode: FORCE_HTTPS',
      ) === true
    );
  };

  afterAll(async () => {
    await ext?.close();
    await server?.close();
    if (outDir !== '') rmSync(outDir, { recursive: true, force: true });
  });

  it('ends every sampled navigation on the reference URL', async () => {
    console.log(
      `handoff scope: ${built.handoff.domains.length} domains, ${built.handoff.patterns.length} patterns; static rules ${built.dnr.ruleCount} (${built.dnr.regexRuleCount} regex)`,
    );
    const installed = await ext.worker.evaluate(async () => {
      try {
        await (
          globalThis as unknown as { httpsifyHandoff: { syncRules(): Promise<void> } }
        ).httpsifyHandoff.syncRules();
        return (await chrome.declarativeNetRequest.getDynamicRules()).length;
      } catch (e) {
        return String(e);
      }
    });
    expect(installed, String(installed)).toBeTypeOf('number');
    const domains = new Set(built.handoff.domains);
    const handedOff = (host: string) =>
      host.split('.').some((_, i, labels) => domains.has(labels.slice(i).join('.')));
    const eligible = oracle.filter(
      (c) =>
        URL.canParse(c.url) && c.url.startsWith('http://') && handedOff(new URL(c.url).hostname),
    );
    // Every nth: rewritten and untouched URLs alike, plus a few trailing-dot and credential forms.
    const step = Math.max(1, Math.floor(eligible.length / 40));
    const sample = eligible.filter((_, i) => i % step === 0).slice(0, 40);
    const rewritten = oracle.filter(
      (c) => c.expected !== null && URL.canParse(c.url) && !/[@]/.test(c.url),
    );
    for (const c of rewritten
      .filter((_, i) => i % Math.floor(rewritten.length / 5) === 0)
      .slice(0, 5)) {
      const u = new URL(c.url);
      sample.push({ url: c.url.replace(u.host, `${u.host}.`), expected: c.expected });
    }
    const tab = await ext.context.newPage();
    const results: { url: string; expected: string; got: string }[] = [];
    for (const c of sample) {
      const expected = asBrowserSees(c.expected ?? c.url);
      await tab.goto(asBrowserSees(c.url)).catch(() => undefined);
      await tab
        .waitForFunction(
          () => location.protocol !== 'chrome-extension:' && document.readyState === 'complete',
          undefined,
          { timeout: 10_000 },
        )
        .catch(() => undefined);
      results.push({ url: c.url, expected, got: asBrowserSees(tab.url()) });
    }
    await tab.close();
    // Chromium's own HSTS preload list upgrades some hosts the reference leaves on HTTP (the
    // server then sees no plain request either): not ours, so set apart after asking the browser.
    const disagreements: typeof results = [];
    let hsts = 0;
    for (const r of results) {
      if (r.got === r.expected) continue;
      if (
        r.got === r.expected.replace(/^http:/, 'https:') &&
        (await hstsPreloaded(new URL(r.expected).hostname))
      )
        hsts++;
      else disagreements.push(r);
    }
    const agree = results.filter((r) => r.got === r.expected).length;
    console.log(
      `main frames: ${agree}/${results.length} end on the reference URL (${sample.filter((c) => c.expected !== null).length} rewritten by it); ${hsts} more upgraded by Chromium's HSTS preload list`,
    );
    expect(disagreements).toEqual([]);
    // Nothing the reference sends to HTTPS went out over plain HTTP first.
    const plain = new Set(server.log.filter((r) => !r.secure).map((r) => `${r.host}${r.path}`));
    const leaked = sample.filter(
      (c) =>
        c.expected?.startsWith('https:') &&
        plain.has(asBrowserSees(c.url).replace(/^http:\/\//, '')),
    );
    expect(leaked).toEqual([]);
  }, 180_000);

  it('loads sampled oracle URLs as subresources: as the emulator predicts, never unlike the reference', async () => {
    const emulator = new DnrEmulator(built.rules);
    const step = Math.floor(oracle.length / 60);
    const sample = oracle
      .filter((c, i) => i % step === 0 && URL.canParse(c.url) && c.url.startsWith('http://'))
      .slice(0, 60);
    const tab = await ext.context.newPage();
    await tab.goto('http://page.uncovered.test/');
    const seen = (r: { secure: boolean; host: string; path: string }) =>
      `${r.secure ? 'https' : 'http'}://${r.host}${r.path}`;
    let reproduced = 0;
    let hsts = 0;
    const wrong: { url: string; expected: string; got: string; predicted: string }[] = [];
    for (const c of sample) {
      const url = asBrowserSees(c.url);
      const before = server.log.length;
      await tab.evaluate(
        (u) =>
          fetch(u, { mode: 'no-cors', credentials: 'omit' }).then(
            () => undefined,
            () => undefined,
          ),
        url,
      );
      const u = new URL(url);
      const expected = asBrowserSees(c.expected ?? url);
      const predicted = asBrowserSees(
        emulator.match({ url, type: 'xmlhttprequest' }).redirectUrl ?? url,
      );
      // The catch-all resolver also brings the browser's own requests (model downloads, time
      // queries) here: only a request to a host this fetch could have reached is its answer.
      const hosts = new Set([url, expected, predicted].map((x) => new URL(x).hostname));
      const hit = server.log
        .slice(before)
        .find((r) => r.path !== '/favicon.ico' && hosts.has(r.host));
      const got = hit === undefined ? '(none)' : seen(hit);
      // Credentials never reach the server's log: compare without them.
      const bare = (x: string) => {
        const v = new URL(x);
        v.username = '';
        v.password = '';
        return v.href;
      };
      if (
        bare(got) !== bare(predicted) &&
        got === predicted.replace(/^http:/, 'https:') &&
        (await hstsPreloaded(u.hostname))
      ) {
        hsts++;
        continue;
      }
      if (bare(got) === bare(expected) && expected !== url) reproduced++;
      if (
        bare(got) !== bare(predicted) ||
        (bare(got) !== bare(expected) && bare(got) !== bare(u.href))
      )
        wrong.push({ url, expected, got, predicted });
    }
    await tab.close();
    console.log(
      `subresources: ${reproduced}/${sample.filter((c) => c.expected !== null).length} rewrites reproduced by DNR, ${sample.length} URLs loaded, ${hsts} upgraded by Chromium's HSTS preload list instead`,
    );
    expect(wrong).toEqual([]);
  }, 180_000);
});
