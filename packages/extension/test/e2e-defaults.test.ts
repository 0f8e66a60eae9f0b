import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRulesetsDir, loadRulesets } from '@httpsify/engine/node';
import { buildExtension, type BuildResult } from '../src/packaging/build.js';
import { launchWithExtension, type LoadedExtension } from './support/browser.js';
import { startDualServer, type DualServer } from './support/servers.js';

/**
 * The package `npm run build:extension` ships: built from the bundled default rulesets, loaded
 * into Chromium, with real host names from those rulesets resolved to a loopback server.
 */
describe('default build in Chromium', () => {
  let built: BuildResult;
  let server: DualServer;
  let ext: LoadedExtension;
  let hosts: string[];

  beforeAll(async () => {
    built = await buildExtension({
      outDir: mkdtempSync(join(tmpdir(), 'httpsify-defaults-ext-')),
      browsers: ['chromium'],
      zip: false,
      feedback: true,
    });
    // Hosts whose rulesets upgrade any port (so the loopback port can stay in the URL).
    const { engine, rulesets } = loadRulesets([defaultRulesetsDir()]);
    hosts = rulesets
      .flatMap((rs) => rs.targets.map((t) => t.host))
      .filter(
        (h) => !h.includes('*') && engine.rewrite(`http://${h}:8080/x`) === `https://${h}:8080/x`,
      )
      .slice(0, 3);
    server = await startDualServer((_req, res, secure) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(secure ? 'secure' : 'plain');
    });
    ext = await launchWithExtension(built.dirs.chromium!, hosts);
  });

  afterAll(async () => {
    await ext?.close();
    await server?.close();
  });

  it('loads every static rule, regexes included', async () => {
    expect(built.dnr.overLimits).toEqual([]);
    // Our own rulesets are written to compile completely.
    expect(built.dnr.omissions).toEqual([]);
    const regexes = built.rules.flatMap((r) =>
      r.condition.regexFilter ? [r.condition.regexFilter] : [],
    );
    const unsupported = await ext.worker.evaluate(async (list) => {
      const out: string[] = [];
      for (const regex of list)
        if (!(await chrome.declarativeNetRequest.isRegexSupported({ regex })).isSupported)
          out.push(regex);
      return out;
    }, regexes);
    expect(unsupported).toEqual([]);
    expect(
      await ext.worker.evaluate(() => chrome.declarativeNetRequest.getEnabledRulesets()),
    ).toEqual(['default']);
  });

  it('upgrades navigations to hosts the default rulesets cover', async () => {
    expect(hosts.length).toBeGreaterThan(0);
    const tab = await ext.context.newPage();
    for (const host of hosts) {
      await tab.goto(`http://${host}:${server.port}/x`);
      expect(tab.url()).toBe(`https://${host}:${server.port}/x`);
      expect(await tab.textContent('body')).toBe('secure');
    }
    await tab.close();
  });
});
