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
import { type RuleBody, RUNTIME_LIMITS } from '../src/dnr/rules.js';
import { uiDnrRules } from '../src/dnr/settings-rules.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { RuleStores } from './support/rule-stores.js';

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
    const session = new MemoryStorageArea();
    const stores = new RuleStores();
    const start = () =>
      new RuleWriter(stores, RUNTIME_LIMITS, { ledger: ledgerIn(session, LEDGER_KEY) });
    await start().setLayer('settings', BEFORE);
    expect(session.data.has(LEDGER_KEY)).toBe(true);

    // The user opens a page over HTTP once; the record's removal fails, Chromium applies the
    // update, and the worker stops before it is answered.
    const woken = start();
    session.failNextRemove = true;
    stores.hangNextDynamic = true;
    void woken.setLayer('settings', ONCE);
    await vi.waitFor(() => expect(settingsHeld(stores)).toEqual(ONCE));
    await new Promise((r) => setTimeout(r, 20));

    // The next start declares the settings as stored (the host's list was never kept).
    await start().setLayer('settings', BEFORE);
    expect(settingsHeld(stores)).toEqual(BEFORE);
    vi.restoreAllMocks();
  });
});
