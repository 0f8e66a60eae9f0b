import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnrEmulator } from '@httpsify/engine/dnr';
import { corpusRulesDir, readOracle, type OracleCase } from '../../engine/test/support/corpus.js';
import { buildExtension, type BuildResult } from '../src/packaging/build.js';
import { launchWithExtension, type LoadedExtension } from './support/browser.js';

/**
 * The corpus compiled into the Chromium build and loaded into the real browser: Chromium must
 * accept every regex, and its own matcher (testMatchOutcome, unpacked builds with the feedback
 * permission) must pick the same rule as the emulator that produced the coverage figure.
 */
describe('corpus DNR rules in Chromium', () => {
  let built: BuildResult;
  let ext: LoadedExtension;
  let oracle: OracleCase[];

  beforeAll(async () => {
    built = await buildExtension({
      rulesets: [corpusRulesDir()],
      outDir: mkdtempSync(join(tmpdir(), 'httpsify-corpus-ext-')),
      browsers: ['chromium'],
      zip: false,
      feedback: true,
    });
    oracle = await readOracle();
    ext = await launchWithExtension(built.dirs.chromium!, []);
    // The compiled rules are under test: the protection mode's own main-frame upgrade (on by
    // default, a dynamic rule) would match every URL they leave alone.
    await ext.worker.evaluate(() => chrome.storage.local.set({ httpsFirst: false }));
    const modeRule = () =>
      ext.worker.evaluate(async () =>
        (await chrome.declarativeNetRequest.getDynamicRules()).some(
          (r) => (r.priority ?? 1) <= 2 && r.action.type === 'upgradeScheme',
        ),
      );
    for (let i = 0; i < 100 && (await modeRule()); i++)
      await new Promise((r) => setTimeout(r, 100));
  });

  afterAll(async () => {
    await ext?.close();
  });

  it('has every compiled regex accepted by Chromium (RE2, 2 KB)', async () => {
    const regexes = built.rules.filter((r) => r.condition.regexFilter !== undefined);
    expect(regexes.length).toBeGreaterThan(500);
    const verdicts = await ext.worker.evaluate(
      async (list) => {
        const out: string[] = [];
        for (const r of list) {
          const v = await chrome.declarativeNetRequest.isRegexSupported({
            regex: r.regex,
            isCaseSensitive: r.caseSensitive,
            requireCapturing: r.capturing,
          });
          out.push(v.isSupported ? 'ok' : `${r.regex}: ${v.reason}`);
        }
        return out;
      },
      regexes.map((r) => ({
        regex: r.condition.regexFilter!,
        caseSensitive: r.condition.isUrlFilterCaseSensitive === true,
        capturing: r.action.type === 'redirect',
      })),
    );
    expect(verdicts.filter((v) => v !== 'ok')).toEqual([]);
  });

  it('matches a sample of oracle URLs with the same rule as the emulator', async () => {
    const emulator = new DnrEmulator(built.rules);
    const byId = new Map(built.rules.map((r) => [r.id, r]));
    // Equal-priority rules with the same action are interchangeable: compare what would happen.
    const outcome = (id: number | null) => {
      const rule = id === null ? undefined : byId.get(id);
      return rule ? `${rule.priority} ${JSON.stringify(rule.action)}` : null;
    };
    // Every 50th oracle URL: rewritten and untouched ones alike; then, on subdomains no target
    // covers, every URL the emulator stops at a fence (`|http://*.host^` below a target).
    const urls = oracle.filter((c, i) => i % 50 === 0 && URL.canParse(c.url)).map((c) => c.url);
    const isFence = (id: number | undefined) =>
      byId.get(id ?? -1)?.condition.urlFilter?.startsWith('|http://*.') === true;
    const fenced = oracle
      .map((c) => c.url.replace(/^http:\/\//, 'http://zz.'))
      .filter(
        (url) => URL.canParse(url) && isFence(emulator.match({ url, type: 'main_frame' }).rule?.id),
      );
    expect(fenced.length).toBeGreaterThan(100);
    const sample = [...urls, ...fenced].map((url) => ({ url }));
    // As subframes: main frames of partially compiled rulesets go to the handoff page first
    // (dynamic rules, see e2e-oracle-main-frames); the static rules treat both types alike.
    const expected = sample.map(
      (c) => emulator.match({ url: c.url, type: 'sub_frame' }).rule?.id ?? null,
    );
    const actual = await ext.worker.evaluate(
      async (urls) => {
        const out: (number | null)[] = [];
        for (const url of urls) {
          const r = await chrome.declarativeNetRequest.testMatchOutcome({
            url,
            type: 'sub_frame' as chrome.declarativeNetRequest.ResourceType,
          });
          out.push(r.matchedRules[0]?.ruleId ?? null);
        }
        return out;
      },
      sample.map((c) => c.url),
    );
    const disagreements = sample
      .map((c, i) => ({
        url: c.url,
        emulator: outcome(expected[i]!),
        chromium: outcome(actual[i]!),
      }))
      .filter((d) => d.emulator !== d.chromium);
    expect(urls.length).toBeGreaterThan(3000);
    expect(expected.filter((id) => id !== null).length).toBeGreaterThan(sample.length / 2);
    expect(disagreements).toEqual([]);
  });
});
