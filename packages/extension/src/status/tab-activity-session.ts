/**
 * The tabs' records kept in storage.session: Chromium may stop the service worker between two
 * requests of a page, and the popup must still list what the page matched.
 */
import type { StorageArea } from '../platform/browser-api.js';
import type { TabActivity, TabRecord } from './tab-activity.js';

export const TABS_SESSION_KEY = 'uiTabActivity';
const SAVE_DELAY_MS = 300;

export class TabActivitySession {
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly activity: TabActivity,
    private readonly session: StorageArea,
  ) {}

  /** Brings back the records saved before the worker stopped (`stored`: the key's value). */
  restore(stored: unknown): void {
    this.activity.restore((stored as [number, TabRecord][] | undefined) ?? []);
  }

  /** A record changed: saved shortly, once for a burst of changes. */
  saveSoon(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.session.set({ [TABS_SESSION_KEY]: this.activity.snapshot() });
    }, SAVE_DELAY_MS);
  }
}
