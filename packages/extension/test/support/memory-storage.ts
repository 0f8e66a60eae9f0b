import type { StorageArea } from '../../src/platform/browser-api.js';

/**
 * An in-memory area with storage.local's semantics (values are structured-cloned on the way in
 * and out, every call is asynchronous): used where no browser storage exists, e.g. Node tests.
 */
export class MemoryStorageArea implements StorageArea {
  readonly data = new Map<string, unknown>();
  writes = 0;
  /** The next removal fails (a storage that stops answering). */
  failNextRemove = false;

  async get(keys: string[] | null): Promise<Record<string, unknown>> {
    await Promise.resolve();
    const out: Record<string, unknown> = {};
    for (const [k, v] of this.data)
      if (keys === null || keys.includes(k)) out[k] = structuredClone(v);
    return out;
  }

  async set(items: Record<string, unknown>): Promise<void> {
    await Promise.resolve();
    this.writes++;
    for (const [k, v] of Object.entries(items)) this.data.set(k, structuredClone(v));
  }

  async remove(keys: string | string[]): Promise<void> {
    await Promise.resolve();
    if (this.failNextRemove) {
      this.failNextRemove = false;
      throw new Error('storage is not available');
    }
    // One key as a string, as chrome.storage takes it (not its characters).
    for (const k of [keys].flat()) this.data.delete(k);
  }
}
