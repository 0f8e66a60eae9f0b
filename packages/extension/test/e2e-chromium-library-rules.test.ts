import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDefaultActive, type Ruleset } from '@httpsify/engine';
import { DNR_LIMITS, DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { parseRulesetXml, refusedPatterns } from '@httpsify/engine/parse';
import { corpusXmlFiles } from '../../engine/test/support/corpus.js';
import { buildExtension, type BuildResult } from '../src/packaging/build.js';
import { channelPriorityOffset, REGEX_RESERVED_FOR_SETTINGS } from '../src/channels/channel-dnr.js';
import { CHANNEL_RULE_ID_BASE } from '../src/dnr/layout.js';
import { usageOf } from '../src/dnr/rules.js';
import { compileLibraryRules } from '../src/library/library-dnr.js';
import { launchWithExtension, type LoadedExtension } from './support/browser.js';

/**
 * The whole 2018 library compiled as the background compiles an imported library, into what the
 * extension's own dynamic rules leave free, and written to a real Chromium: it must take every
 * rule (grouped redirects, the handoff rule with its long domain list) in one update, and its
 * matcher must pick the same rule as the emulator behind `npm run bench:library`.
 */
describe('the imported 2018 library in Chromium', () => {
  let built: BuildResult;
  let ext: LoadedExtension;
  let placed: DnrRule[];
  let existing: DnrRule[];
  let page: string;

  beforeAll(async () => {
    built = await buildExtension({
      outDir: mkdtempSync(join(tmpdir(), 'httpsify-library-ext-')),
      browsers: ['chromium'],
      zip: false,
      feedback: true,
    });
    ext = await launchWithExtension(built.dirs.chromium!, []);
    page = new URL('ui/handoff.html', ext.worker.url()).href;
    // The extension's own dynamic rules (settings, handoff, protection) are written at start.
    for (
      let i = 0;
      i < 100 &&
      (await ext.worker.evaluate(
        async () => (await chrome.declarativeNetRequest.getDynamicRules()).length,
      )) < 3;
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1000));
    existing = (await ext.worker.evaluate(async () =>
      chrome.declarativeNetRequest.getDynamicRules(),
    )) as DnrRule[];
    const rulesets: Ruleset[] = corpusXmlFiles().flatMap((file) => {
      const { ruleset } = parseRulesetXml(readFileSync(file, 'utf8'), file);
      return ruleset && isDefaultActive(ruleset) && refusedPatterns(ruleset).length === 0
        ? [ruleset]
        : [];
    });
    const used = usageOf(existing);
    const free = {
      rules: DNR_LIMITS.dynamicRules - used.rules,
      regexRules: DNR_LIMITS.regexRules - REGEX_RESERVED_FOR_SETTINGS - used.regexRules,
      unsafeRules: DNR_LIMITS.unsafeDynamicRules - used.unsafeRules,
    };
    const compiled = compileLibraryRules(rulesets, free, page);
    if (!compiled.ok) throw new Error(compiled.reason);
    expect(compiled.coverage?.pageLoadsOnly.length).toBeGreaterThan(100);
    const offset = channelPriorityOffset(0);
    placed = compiled.rules.map((r, i) => ({
      ...r,
      id: CHANNEL_RULE_ID_BASE + i,
      priority: r.priority + offset,
    }));
  }, 300_000);

  afterAll(async () => {
    await ext?.close();
  });

  it('takes every rule of it in one update, and matches as the emulator does', async () => {
    const error = await ext.worker.evaluate(async (addRules) => {
      try {
        await chrome.declarativeNetRequest.updateDynamicRules({
          addRules: addRules as chrome.declarativeNetRequest.Rule[],
        });
        return null;
      } catch (e) {
        return String(e);
      }
    }, placed);
    expect(error).toBeNull();
    expect(placed.filter((r) => r.action.type === 'redirect').length).toBeGreaterThan(4_000);

    const all = [...built.rules, ...existing, ...placed];
    const emulator = new DnrEmulator(all);
    const byId = new Map(all.map((r) => [r.id, r]));
    const outcome = (id: number | null) => {
      const rule = id === null ? undefined : byId.get(id);
      return rule ? `${rule.priority} ${JSON.stringify(rule.action)}` : null;
    };
    // Hosts of the grouped redirects and of the handoff rule, as subresources and page loads.
    const groups = placed.filter(
      (r) =>
        r.action.type === 'redirect' &&
        r.action.redirect.regexSubstitution?.startsWith('https://') &&
        r.condition.requestDomains,
    );
    const handoff = placed.filter(
      (r) => r.action.type === 'redirect' && r.action.redirect.regexSubstitution?.startsWith(page),
    );
    expect(groups.length).toBeGreaterThan(3);
    expect(handoff).toHaveLength(1);
    const hosts = [
      ...groups.flatMap((r) => r.condition.requestDomains!.slice(0, 40)),
      ...handoff[0]!.condition.requestDomains!.slice(0, 100),
    ];
    const cases = hosts.flatMap((h) => [
      { url: `http://${h}/a?b`, type: 'sub_frame' as const },
      { url: `http://z.${h}/`, type: 'sub_frame' as const },
      { url: `http://${h}/`, type: 'main_frame' as const },
    ]);
    const expected = cases.map((c) => outcome(emulator.match(c).rule?.id ?? null));
    const actual = await ext.worker.evaluate(async (list) => {
      const out: (number | null | 'invalid')[] = [];
      for (const c of list) {
        try {
          const r = await chrome.declarativeNetRequest.testMatchOutcome({
            url: c.url,
            type: c.type as chrome.declarativeNetRequest.ResourceType,
          });
          out.push(r.matchedRules[0]?.ruleId ?? null);
        } catch {
          // A host the test API does not take as a URL (an underscore label); Chromium's own matcher is what is compared.
          out.push('invalid');
        }
      }
      return out;
    }, cases);
    const invalid = cases.filter((_, i) => actual[i] === 'invalid').map((c) => c.url);
    expect(invalid.length).toBeLessThan(cases.length / 50);
    const disagreements = cases
      .map((c, i) => ({
        ...c,
        emulator: expected[i],
        chromium: actual[i] === 'invalid' ? expected[i] : outcome(actual[i] as number | null),
      }))
      .filter((d) => d.emulator !== d.chromium);
    expect(disagreements.slice(0, 5)).toEqual([]);
    expect(expected.filter((e) => e?.includes(page)).length).toBeGreaterThan(50);
  }, 300_000);
});
