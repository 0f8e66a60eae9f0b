import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { unzipSync } from 'fflate';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBundle } from '@httpsify/engine';
import { compileDnr } from '@httpsify/engine/dnr';
import { defaultRulesetsDir, defaultRulesetsTimestamp, loadRulesets } from '@httpsify/engine/node';
import { buildExtension, extensionVersion, type BuildResult } from '../src/packaging/build.js';

describe('extension build from the default rulesets', () => {
  let built: BuildResult;
  beforeAll(async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'httpsify-build-'));
    // Packages of an older build: replaced, not left beside the new ones.
    for (const old of ['httpsify-chromium-1.2.2.zip', 'httpsify-firefox-1.2.3.zip', 'notes.zip'])
      writeFileSync(join(outDir, old), 'old');
    // As `npm run package` builds them for the stores: without the test suite's handles.
    built = await buildExtension({ outDir, version: '1.2.3', testHooks: false });
  });

  it("leaves the test suite's handles out of store packages (test builds carry them)", async () => {
    // The build's switch, folded by esbuild: every handle sits behind it (platform/test-hooks.ts).
    const hooks = (dir: string) =>
      /\bTEST_HOOKS = (true|false);/.exec(readFileSync(join(dir, 'background.js'), 'utf8'))?.[1];
    for (const dir of Object.values(built.dirs)) expect(hooks(dir), dir).toBe('false');
    const test = await buildExtension({
      outDir: mkdtempSync(join(tmpdir(), 'httpsify-build-hooks-')),
      browsers: ['firefox'],
      zip: false,
    });
    expect(hooks(test.dirs.firefox!)).toBe('true');
  });

  it('writes an MV3 Chromium package: service worker, static DNR ruleset, bundle', () => {
    const dir = built.dirs.chromium!;
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({
      manifest_version: 3,
      version: '1.2.3',
      background: { service_worker: 'background.js' },
    });
    expect(manifest.permissions).toEqual(
      expect.arrayContaining(['declarativeNetRequest', 'webRequest', 'cookies']),
    );
    const [resource] = manifest.declarative_net_request.rule_resources;
    const rules = JSON.parse(readFileSync(join(dir, resource.path), 'utf8'));
    // The static ruleset is exactly the DNR compile of the default rulesets, as parsed, with
    // the rule that takes trailing dots off their hosts.
    const { rulesets } = loadRulesets([defaultRulesetsDir()]);
    const expected = compileDnr(rulesets, { trailingDots: true }).rules;
    expect(rules).toEqual(expected);
    expect(rules.length).toBeGreaterThan(0);
  });

  it('writes an MV3 Firefox package with blocking webRequest', () => {
    const manifest = JSON.parse(readFileSync(join(built.dirs.firefox!, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({
      manifest_version: 3,
      background: { scripts: ['background.js'] },
    });
    expect(manifest.permissions).toEqual(
      expect.arrayContaining(['webRequest', 'webRequestBlocking', 'cookies']),
    );
    expect(manifest.browser_specific_settings.gecko.id).toBeTruthy();
    // What AMO asks of a new extension (web-ext lint warns otherwise), with the versions that read it.
    expect(manifest.browser_specific_settings).toMatchObject({
      gecko: { strict_min_version: '140.0', data_collection_permissions: { required: ['none'] } },
      gecko_android: { strict_min_version: '142.0' },
    });
    // Firefox's default MV3 policy would add upgrade-insecure-requests: our HTTP probes would go out as HTTPS.
    expect(manifest.content_security_policy).toEqual({ extension_pages: "script-src 'self';" });
  });

  it('bundles the default rulesets so the engine loads them', () => {
    for (const dir of Object.values(built.dirs)) {
      const engine = loadBundle(new Uint8Array(readFileSync(join(dir, 'rules/default.bundle'))));
      expect(engine.rulesetCount).toBe(built.rulesetCount);
      // Stamped with the rulesets' TIMESTAMP: a channel replacing them must not be older.
      expect(engine.header.timestamp).toBe(defaultRulesetsTimestamp());
      expect(engine.header.timestamp).toBeGreaterThan(0);
    }
  });

  it('packs each unpacked directory for its store: a Chromium zip and a Firefox xpi', () => {
    expect(built.zips.map((z) => z.replace(/.*\//, ''))).toEqual([
      'httpsify-chromium-1.2.3.zip',
      'httpsify-firefox-1.2.3.xpi',
    ]);
    expect(readdirSync(dirname(built.zips[0]!)).sort()).toEqual([
      'chromium',
      'firefox',
      'httpsify-chromium-1.2.3.zip',
      'httpsify-firefox-1.2.3.xpi',
      'notes.zip',
    ]);
    for (const [i, browser] of (['chromium', 'firefox'] as const).entries()) {
      const files = unzipSync(new Uint8Array(readFileSync(built.zips[i]!)));
      expect(Object.keys(files)).toEqual(
        expect.arrayContaining(['manifest.json', 'background.js', 'rules/default.bundle']),
      );
      expect(Buffer.from(files['manifest.json']!)).toEqual(
        readFileSync(join(built.dirs[browser]!, 'manifest.json')),
      );
    }
  });

  it('takes the version from the extension package unless told', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../package.json'), 'utf8')) as {
      version: string;
    };
    expect(extensionVersion()).toBe(pkg.version);
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
