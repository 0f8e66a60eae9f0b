/**
 * Attack on the writer's record of the dynamic store (rule-ledger.ts): "no record while the
 * store changes" must hold even when the record's removal fails.
 *
 * write() removes the record before each dynamic update, but a failed removal is only logged and
 * the update is sent anyway: the record of the store as it was stands while Chromium applies the
 * change. A worker stopped before the update is answered (so before the record is written
 * again) leaves that old record behind, and the next start trusts it: a layer declared as the
 * old record says is not written, and Chromium keeps what the stopped worker wrote.
 *
 * Shown with "open over HTTP once": the host's `allow` joins the settings layer, the worker stops
 * before the session's list of such hosts is stored; the next start declares the settings
 * without the host, and the host must lose its allow (decide() upgrades it again).
 */
import { describe, expect, it, vi } from 'vitest';
import { LAYERS } from '../src/dnr/layout.js';
import { LEDGER_KEY, ledgerIn } from '../src/dnr/rule-ledger.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { type ExtRule, type RuleBody, RUNTIME_LIMITS } from '../src/dnr/rules.js';
import { uiDnrRules } from '../src/dnr/settings-rules.js';
import type { StorageArea } from '../src/platform/browser-api.js';
import { RuleStores } from './support/rule-stores.js';

/** storage.session as a map (kept across worker stops); the next removal may fail. */
class FailingArea implements StorageArea {
  values = new Map<string, unknown>();
  failNextRemove = false;
  async get(keys: string | string[] | null) {
    const wanted = keys === null ? [...this.values.keys()] : [keys].flat();
    return Object.fromEntries(
      wanted.filter((k) => this.values.has(k)).map((k) => [k, structuredClone(this.values.get(k))]),
    );
  }
  async set(items: Record<string, unknown>) {
    for (const [k, v] of Object.entries(items)) this.values.set(k, structuredClone(v));
  }
  async remove(keys: string | string[]) {
    if (this.failNextRemove) {
      this.failNextRemove = false;
      throw new Error('storage.session is not available');
    }
    for (const k of [keys].flat()) this.values.delete(k);
  }
}

/** Chromium's stores; the next dynamic update is applied and never answered (worker stopped). */
class StoppingStores extends RuleStores {
  hangNext = false;
  override async updateDynamicRules(u: { removeRuleIds: number[]; addRules: ExtRule[] }) {
    await super.updateDynamicRules(u);
    if (this.hangNext) {
      this.hangNext = false;
      await new Promise(() => undefined);
    }
  }
}

const settingsOf = (httpOnceHosts: string[]): RuleBody[] =>
  uiDnrRules({
    globalEnabled: true,
    disabledSites: [],
    httpAllowedSites: [],
    httpOnceHosts,
    userRulesets: [],
    httpsFirst: true,
  }).rules;
const BEFORE = settingsOf([]);
const ONCE = settingsOf(['once.example']);

const settingsHeld = (stores: RuleStores) =>
  stores.dynamic
    .filter((r) => r.id >= LAYERS.settings.base && r.id < LAYERS.settings.limit)
    .map(({ id: _id, ...body }) => body);

describe('a dynamic update sent while the record could not be removed', () => {
  it('leaves no record of the store before it to a worker stopped mid-write', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const session = new FailingArea();
    const stores = new StoppingStores();
    const start = () =>
      new RuleWriter(stores, RUNTIME_LIMITS, { ledger: ledgerIn(session, LEDGER_KEY) });
    await start().setLayer('settings', BEFORE);
    expect(session.values.has(LEDGER_KEY)).toBe(true);

    // The user opens a page over HTTP once; the record's removal fails, Chromium applies the
    // update, and the worker stops before it is answered.
    const woken = start();
    session.failNextRemove = true;
    stores.hangNext = true;
    void woken.setLayer('settings', ONCE);
    await vi.waitFor(() => expect(settingsHeld(stores)).toEqual(ONCE));
    await new Promise((r) => setTimeout(r, 20));

    // The next start declares the settings as stored (the host's list was never kept).
    await start().setLayer('settings', BEFORE);
    expect(settingsHeld(stores)).toEqual(BEFORE);
    vi.restoreAllMocks();
  });
});
