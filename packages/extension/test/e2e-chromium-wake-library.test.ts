import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'fflate';
import type { Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tar } from './support/tar.js';
import { POLL, startUiHarness, type UiHarness } from './support/ui-harness.js';
import { wakeWorker, writerCounts } from './support/worker-wake.js';

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

    // A wake reads no dynamic rule either (about a second with a large library, every other
    // call of the extension waiting): the writer's record in storage.session says what is held.
    // Without it (a browser restart clears it), the wake reads them all, once, and records them.
    const woken = await wakeWorker(h);
    expect(await writerCounts(woken.worker)).toEqual({ updates: 0, dynamicReads: 0 });
    expect(await libraryRules(woken.worker)).toEqual(before);
    await woken.worker.evaluate(() => chrome.storage.session.remove('dnrLedger'));
    const unrecorded = await wakeWorker(h);
    expect(await writerCounts(unrecorded.worker)).toEqual({ updates: 0, dynamicReads: 1 });
    const recorded = await wakeWorker(h);
    expect(await writerCounts(recorded.worker)).toEqual({ updates: 0, dynamicReads: 0 });
    expect(await libraryRules(recorded.worker)).toEqual(before);
    for (const w of [woken, unrecorded, recorded]) await w.page.close();
  });
});
