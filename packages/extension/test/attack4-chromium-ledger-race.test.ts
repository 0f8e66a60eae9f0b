import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLL, startUiHarness, type UiHarness } from './support/ui-harness.js';
import { wakeWorker } from './support/worker-wake.js';

/**
 * Real Chromium, the race of attack4-ledger-race.test.ts: a worker woken with the writer's
 * record (storage.session) reads the whole dynamic store when the channels ask for their rules,
 * and records it again; its digests are still being computed (held here, as a large library's
 * take long) when the user opens a host over HTTP once. That write removes the record and sends
 * its update, which Chromium applies; the worker is stopped before the answer (the update is
 * made to hang, the stop is Chromium's own, over CDP). The read's record, of the settings as
 * they were, lands meanwhile, and the next start trusts it: it declares the settings without the
 * host (its session list was never stored) and writes nothing, so the host's `allow` stays.
 */
const HOST = 'anything.uncovered.test';

/** Dynamic rules that name the host, as Chromium holds them (read from an extension page). */
const hostRules = (p: Page) =>
  p.evaluate(
    async (host) =>
      (await chrome.declarativeNetRequest.getDynamicRules())
        .filter((r) => JSON.stringify(r.condition).includes(host))
        .map((r) => JSON.stringify(r)),
    HOST,
  );

describe('a Chromium worker stopped while its record and a write overlap', () => {
  let h: UiHarness;

  beforeAll(async () => {
    h = await startUiHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  it('leaves no record that hides a rule no longer asked for', { timeout: 120_000 }, async () => {
    // Control: HTTPS-first (the default) upgrades the host's page loads.
    expect(await schemeOfLoad(h)).toBe('https:');
    const first = await wakeWorker(h);
    const w = first.worker;
    // The channels' read starts; its record waits for its digests.
    await w.evaluate(() => {
      const g = globalThis as unknown as {
        heldDigests: (() => void)[];
        httpsifyWriter: { rules(layer: string): Promise<unknown> };
      };
      const subtle = crypto.subtle;
      const real = subtle.digest.bind(subtle);
      g.heldDigests = [];
      subtle.digest = (algorithm: AlgorithmIdentifier, data: BufferSource) =>
        new Promise<ArrayBuffer>((resolve, reject) => {
          g.heldDigests.push(() => void real(algorithm, data).then(resolve, reject));
        });
      void g.httpsifyWriter.rules('channels');
    });
    await expect
      .poll(
        () => w.evaluate(() => (globalThis as unknown as { heldDigests: [] }).heldDigests.length),
        POLL,
      )
      .toBeGreaterThan(0);
    // The next dynamic update is applied by Chromium and its answer never reaches the worker.
    await w.evaluate((host) => {
      const dnr = chrome.declarativeNetRequest;
      const real = dnr.updateDynamicRules.bind(dnr);
      dnr.updateDynamicRules = ((options: chrome.declarativeNetRequest.UpdateRuleOptions) =>
        real(options).then(
          () => new Promise<void>(() => undefined),
        )) as typeof dnr.updateDynamicRules;
      const ui = (
        globalThis as unknown as {
          httpsifyUi: { controller: Promise<{ allowHttpOnce(h: string): Promise<void> }> };
        }
      ).httpsifyUi;
      void ui.controller.then((c) => c.allowHttpOnce(host));
    }, HOST);
    await expect.poll(() => hostRules(first.page), POLL).not.toEqual([]);
    // The read's record is finished and stored; then Chromium stops the worker.
    await w.evaluate(() => {
      const g = globalThis as unknown as { heldDigests: (() => void)[] };
      // The instance's own method goes; the prototype's (the real one) is used again.
      delete (crypto.subtle as { digest?: unknown }).digest;
      for (const go of g.heldDigests.splice(0)) go();
    });
    await first.page.waitForTimeout(1_000);

    // The next start: the settings as stored, no host opened over HTTP once.
    const next = await wakeWorker(h);
    const snapshotOnce = await next.worker.evaluate(async () => {
      const ui = (
        globalThis as unknown as {
          httpsifyUi: { controller: Promise<{ snapshot: { httpOnce: Set<string> } }> };
        }
      ).httpsifyUi;
      return [...(await ui.controller).snapshot.httpOnce];
    });
    expect(snapshotOnce).toEqual([]);
    // decide() upgrades the host again; Chromium must too.
    expect(await schemeOfLoad(h)).toBe('https:');
    expect(await hostRules(next.page)).toEqual([]);
  });
});

/** The scheme the host's page ends on, loaded by http:// in a new tab. */
async function schemeOfLoad(h: UiHarness): Promise<string> {
  const tab = await h.ext.context.newPage();
  await tab.goto(h.url(HOST)).catch(() => null);
  const scheme = new URL(tab.url()).protocol;
  await tab.close();
  return scheme;
}
