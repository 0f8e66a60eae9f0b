import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLL, startUiHarness, type UiHarness } from './support/ui-harness.js';

/** Default-off rulesets, each needing a regex rule in Chromium (a path rewrite). */
const OFF = 300;
/** The user's own rules, one regex rule each: they leave the switched rulesets too little room. */
const MINE = 800;

const rewrite = (name: string, host: string, extra = '') =>
  `<ruleset name="${name}"${extra}><target host="${host}"/><rule from="^http://${host.replace(/\./g, '\\.')}/([^/?]+)/old" to="https://${host}/new/$1"/></ruleset>`;

/**
 * Attack (c)/(e): the overrides planner cuts the rulesets the user switched on to the regex
 * room left (writer.free), which the writer records as a *partial* set, not a refusal. When
 * room is made later (the user deletes their own rules, or the library/channels go),
 * retryRefused skips partial sets ("in force as asked: nothing to retry"), and without
 * channels it is not even called. The switched rulesets stay cut (their subresources not
 * upgraded, where decide() upgrades them) and the notice keeps saying they do not fit.
 */
describe('attack: switched-on rulesets stay cut after room is made (Chromium)', () => {
  let h: UiHarness;
  type Writer = {
    idle(): Promise<void>;
    refusals(): { layer: string; message: string }[];
    free(layer: string): Promise<{ regexRules: number }>;
  };
  const refusals = () =>
    h.ext.worker.evaluate(async () => {
      const w = (globalThis as unknown as { httpsifyWriter: Writer }).httpsifyWriter;
      await w.idle();
      return w.refusals().map((r) => r.layer);
    });
  const overridesRegex = () =>
    h.ext.worker.evaluate(
      async () =>
        (await chrome.declarativeNetRequest.getDynamicRules()).filter(
          (r) => r.id < 2_000_000 && r.condition.regexFilter?.includes('off') === true,
        ).length,
    );

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-a3-off-rules-'));
    for (let i = 0; i < OFF; i++)
      writeFileSync(
        join(dir, `off${i}.xml`),
        rewrite(`Off ${i}`, `off${i}.test`, ' default_off="switched off by default"'),
      );
    h = await startUiHarness([dir]);
  }, 120_000);

  afterAll(async () => {
    await h?.close();
  });

  it('writes them whole once the room is there', async () => {
    const mine = Array.from({ length: MINE }, (_, i) => ({
      name: `Mine ${i}`,
      xml: rewrite(`Mine ${i}`, `u${i}.mine.test`),
    }));
    await h.ext.worker.evaluate(
      async (rules) => chrome.storage.local.set({ userRules: rules }),
      mine,
    );
    await expect
      .poll(
        async () =>
          (await h.ext.worker.evaluate(async () => chrome.declarativeNetRequest.getDynamicRules()))
            .length,
        POLL,
      )
      .toBeGreaterThan(MINE);
    // The user switches every one of the rulesets on: cut to the room left (partial).
    const on = Object.fromEntries(Array.from({ length: OFF }, (_, i) => [`Off ${i}`, true]));
    await h.ext.worker.evaluate(async (o) => chrome.storage.local.set({ rulesetOverrides: o }), on);
    await expect.poll(refusals, POLL).toContain('overrides');
    expect(await overridesRegex()).toBeLessThan(OFF);

    // The user deletes their own rules: room for all of them.
    await h.ext.worker.evaluate(async () => chrome.storage.local.set({ userRules: [] }));
    await expect
      .poll(
        async () =>
          (
            await h.ext.worker.evaluate(async () => chrome.declarativeNetRequest.getDynamicRules())
          ).filter((r) => r.condition.regexFilter?.includes('mine') === true).length,
        POLL,
      )
      .toBe(0);
    const free = await h.ext.worker.evaluate(async () =>
      (globalThis as unknown as { httpsifyWriter: Writer }).httpsifyWriter.free('overrides'),
    );
    expect(free.regexRules).toBeGreaterThan(OFF);
    // Every switched ruleset whole, and no notice.
    await expect.poll(overridesRegex, POLL).toBeGreaterThanOrEqual(OFF);
    expect(await refusals()).not.toContain('overrides');
  }, 180_000);
});
