import type { Page, Worker } from 'playwright-core';
import { expect } from 'vitest';
import { POLL, type UiHarness } from './ui-harness.js';

/**
 * Stops Chromium's service worker (CDP, as Chromium stops it after 30 idle seconds) and wakes
 * it with a page of the extension, as a navigation or an alarm would; resolves once the new
 * worker has started and its rule writer has written what the start declared.
 */
export async function wakeWorker(h: UiHarness): Promise<{ worker: Worker; page: Page }> {
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
    const g = globalThis as unknown as {
      httpsifyUi: { controller: Promise<unknown> };
      httpsifyWriter: { idle(): Promise<void> };
    };
    await g.httpsifyUi.controller;
    await g.httpsifyWriter.idle();
  });
  return { worker, page };
}

/** What a worker's rule writer did since it started: browser updates, whole dynamic reads. */
export const writerCounts = (w: Worker) =>
  w.evaluate(() => {
    const writer = (
      globalThis as unknown as { httpsifyWriter: { updates: number; dynamicReads: number } }
    ).httpsifyWriter;
    return { updates: writer.updates, dynamicReads: writer.dynamicReads };
  });
