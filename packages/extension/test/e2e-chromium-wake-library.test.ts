import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'fflate';
import type { Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tar } from './support/tar.js';
import { POLL, startUiHarness, type UiHarness } from './support/ui-harness.js';

const ruleset = (name: string, host: string) =>
  `<ruleset name="${name}"><target host="${host}"/><rule from="^http://${host.replace(/\./g, '\\.')}/(\\w+)/old" to="https://${host}/$1/new"/></ruleset>`;

/** The channels' and library's rules, as the browser holds them (one layer, one id range). */
const libraryRules = (w: Worker) =>
  w.evaluate(async () =>
    (await chrome.declarativeNetRequest.getDynamicRules())
      .filter((r) => r.id >= 2_000_000 && r.id < 5_000_000)
      .map((r) => JSON.stringify(r)),
  );

/**
 * Chromium stops an idle worker after 30 s and starts it at the next event. A start with an
 * imported library must find the library's rules in place and leave them: it once synced the
 * layer over the channels alone (removing every library rule), then compiled the library again
 * once read — seconds with a large one, on every wake, its sites unenforced meanwhile.
 */
describe('a Chromium worker waking with a library imported', () => {
  let h: UiHarness;
  const files = mkdtempSync(join(tmpdir(), 'httpsify-wake-library-'));

  beforeAll(async () => {
    h = await startUiHarness(null, { modeOff: true });
  });

  afterAll(async () => {
    await h?.close();
    rmSync(files, { recursive: true, force: true });
  });

  it('writes no rule at all when nothing changed', { timeout: 120_000 }, async () => {
    const archive = join(files, 'library.tar.gz');
    writeFileSync(
      archive,
      gzipSync(tar([{ name: 'Lib A.xml', data: ruleset('Lib A', 'lib-a.example.test') }])),
    );
    const o = await h.openOptions();
    await o.locator('#library-archive').setInputFiles(archive);
    await o.locator('#library-apply').click({ timeout: POLL.timeout });
    await expect.poll(() => o.locator('#library-status').textContent(), POLL).toMatch(/^Imported/);
    await o.close();
    const before = await libraryRules(h.ext.worker);
    expect(before.length).toBeGreaterThan(0);

    const started = (w: Worker) => w.evaluate(() => performance.timeOrigin).catch(() => null);
    const first = await started(h.ext.worker);
    const cdp = await h.ext.context.newCDPSession(await h.ext.context.newPage());
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    // A page of the extension wakes it, as a navigation or an alarm would.
    const again = await h.openOptions();
    let worker: Worker | null = null;
    await expect
      .poll(async () => {
        for (const w of h.ext.context.serviceWorkers()) {
          const origin = await started(w);
          if (origin !== null && origin !== first) worker = w;
        }
        return worker !== null;
      }, POLL)
      .toBe(true);
    if (worker === null) throw new Error('no restarted worker');
    await (worker as Worker).evaluate(async () => {
      const ui = (globalThis as unknown as { httpsifyUi: { controller: Promise<unknown> } })
        .httpsifyUi;
      await ui.controller;
    });
    const updates = await (worker as Worker).evaluate(
      () =>
        (globalThis as unknown as { httpsifyWriter: { updates: number } }).httpsifyWriter.updates,
    );
    expect(updates).toBe(0);
    expect(await libraryRules(worker as Worker)).toEqual(before);
    await again.close();
  });
});
