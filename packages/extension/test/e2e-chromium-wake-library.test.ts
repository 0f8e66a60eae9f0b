import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'fflate';
import type { Page, Worker } from 'playwright-core';
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

    // A wake reads no dynamic rule either (about a second with a large library, every other
    // call of the extension waiting): the writer's record in storage.session says what is held.
    // Without it (a browser restart clears it), the wake reads them all, once, and records them.
    const woken = await wake(h);
    expect(await counts(woken.worker)).toEqual({ updates: 0, dynamicReads: 0 });
    expect(await libraryRules(woken.worker)).toEqual(before);
    await woken.worker.evaluate(() => chrome.storage.session.remove('dnrLedger'));
    const unrecorded = await wake(h);
    expect(await counts(unrecorded.worker)).toEqual({ updates: 0, dynamicReads: 1 });
    const recorded = await wake(h);
    expect(await counts(recorded.worker)).toEqual({ updates: 0, dynamicReads: 0 });
    expect(await libraryRules(recorded.worker)).toEqual(before);
    for (const w of [woken, unrecorded, recorded]) await w.page.close();
  });
});

/** Stops the worker and wakes it with a page of the extension, as a navigation or alarm would. */
async function wake(h: UiHarness): Promise<{ worker: Worker; page: Page }> {
  const started = (w: Worker) => w.evaluate(() => performance.timeOrigin).catch(() => null);
  const before = new Set<number>();
  for (const w of h.ext.context.serviceWorkers()) {
    const origin = await started(w);
    if (origin !== null) before.add(origin);
  }
  const cdp = await h.ext.context.newCDPSession(await h.ext.context.newPage());
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  const page = await h.openOptions();
  let worker: Worker | null = null;
  await expect
    .poll(async () => {
      for (const w of h.ext.context.serviceWorkers()) {
        const origin = await started(w);
        if (origin !== null && !before.has(origin)) worker = w;
      }
      return worker !== null;
    }, POLL)
    .toBe(true);
  if (worker === null) throw new Error('no restarted worker');
  await (worker as Worker).evaluate(async () => {
    const ui = (globalThis as unknown as { httpsifyUi: { controller: Promise<unknown> } })
      .httpsifyUi;
    await ui.controller;
    // And what the start declared after it (the known hosts' rules).
    await (
      globalThis as unknown as { httpsifyWriter: { idle(): Promise<void> } }
    ).httpsifyWriter.idle();
  });
  return { worker, page };
}

/** What the woken worker's writer did: browser updates, and whole reads of the dynamic store. */
const counts = (w: Worker) =>
  w.evaluate(() => {
    const writer = (
      globalThis as unknown as { httpsifyWriter: { updates: number; dynamicReads: number } }
    ).httpsifyWriter;
    return { updates: writer.updates, dynamicReads: writer.dynamicReads };
  });
