/**
 * Attack on the writer's record of the dynamic store (rule-ledger.ts): a record computed from
 * what the store held before a write must never be left in storage for after it.
 *
 * The writer keeps the record (keepLedger) after a full read of the store as well as after each
 * write, and the read is not one of the serialised batches: a planner's `free()` (overrides) or
 * `rules()` (channels) starts it. Its SHA-256 digests are awaited layer by layer (long with a
 * large library); a batch that starts meanwhile removes the record and sends its update, and
 * the read's record, of the rules as they were, lands after the removal. A worker stopped before
 * that update is answered leaves that record behind, and the next start trusts it.
 *
 * "Open over HTTP once" shows the harm without any further click: the host joins the settings
 * layer (an `allow`), and the session's list of such hosts is stored only after the rules are
 * written (ui-port.ts). Stopped in between, the next start declares the layer without the host,
 * as recorded: nothing is written, and Chromium keeps letting the host load over HTTP while
 * decide() upgrades it, until the layer next changes or the browser restarts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LAYERS } from '../src/dnr/layout.js';
import { LEDGER_KEY, ledgerIn } from '../src/dnr/rule-ledger.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { type RuleBody, RUNTIME_LIMITS } from '../src/dnr/rules.js';
import { uiDnrRules, type UiRuleInputs } from '../src/dnr/settings-rules.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { RuleStores } from './support/rule-stores.js';

/** Holds every SHA-256 digest until released: a large layer's digest still being computed. */
function holdDigests() {
  const subtle = globalThis.crypto.subtle;
  const real = subtle.digest.bind(subtle);
  const held: (() => void)[] = [];
  vi.spyOn(subtle, 'digest').mockImplementation(
    (algorithm, data) =>
      new Promise<ArrayBuffer>((resolve, reject) => {
        held.push(() => void real(algorithm, data).then(resolve, reject));
      }),
  );
  return {
    held,
    release() {
      vi.restoreAllMocks();
      for (const go of held.splice(0)) go();
    },
  };
}

const settingsOf = (httpOnceHosts: string[]): RuleBody[] => {
  const inputs: UiRuleInputs = {
    globalEnabled: true,
    disabledSites: [],
    httpAllowedSites: [],
    httpOnceHosts,
    userRulesets: [],
    httpsFirst: true,
  };
  return uiDnrRules(inputs).rules;
};
/** The settings as stored; and with one host opened over HTTP once (its list not yet stored). */
const BEFORE = settingsOf([]);
const ONCE = settingsOf(['once.example']);
const overrides: RuleBody[] = [
  { priority: 5, action: { type: 'upgradeScheme' }, condition: { urlFilter: '|http://o.test/' } },
];
const channels: RuleBody[] = [
  {
    priority: 20_000,
    action: { type: 'upgradeScheme' },
    condition: { urlFilter: '|http://c.test/' },
  },
];

const settingsHeld = (stores: RuleStores) =>
  stores.dynamic
    .filter((r) => r.id >= LAYERS.settings.base && r.id < LAYERS.settings.limit)
    .map(({ id: _id, ...body }) => body);

/** A browser whose worker wrote the switch on, then stopped. */
async function browser() {
  const session = new MemoryStorageArea();
  const stores = new RuleStores();
  const start = () =>
    new RuleWriter(stores, RUNTIME_LIMITS, { ledger: ledgerIn(session, LEDGER_KEY) });
  const first = start();
  await first.setLayer('overrides', overrides);
  await first.setLayer('channels', channels);
  await first.setLayer('settings', BEFORE);
  expect(session.data.has(LEDGER_KEY)).toBe(true);
  return { session, stores, start };
}

/** The stopped worker's work still in flight (a digest, a storage call) settles. */
const settle = () => new Promise((r) => setTimeout(r, 50));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a record taken by a full read while a write runs', () => {
  it('is not left behind by a worker stopped mid-write (first start after a restart)', async () => {
    const { session, stores, start } = await browser();
    // The browser restarts: storage.session is cleared, the dynamic rules stay.
    session.data.clear();
    stores.session = [];

    const digests = holdDigests();
    const woken = start();
    // The overrides' sync asks what is free: the store is read in full, its record being made.
    void woken.free('overrides');
    await vi.waitFor(() => expect(digests.held.length).toBeGreaterThan(0));
    // The user opens a page over HTTP once meanwhile; Chromium applies it, the worker stops
    // before the update is answered (the host's session record is never stored).
    stores.hangNextDynamic = true;
    void woken.setLayer('settings', ONCE);
    await vi.waitFor(() => expect(settingsHeld(stores)).toEqual(ONCE));
    digests.release();
    await settle();

    // The next start declares the settings as stored: the host is not among them.
    const next = start();
    await next.setLayer('settings', BEFORE);
    expect(settingsHeld(stores)).toEqual(BEFORE);
  });

  it("is not left behind when the channels' read of a recorded store overlaps a write", async () => {
    const { stores, start } = await browser();
    const digests = holdDigests();
    const woken = start();
    // The channels' sync asks for its rules: the whole store is read, the record made again.
    void woken.rules('channels');
    await vi.waitFor(() => expect(digests.held.length).toBeGreaterThan(0));
    stores.hangNextDynamic = true;
    void woken.setLayer('settings', ONCE);
    await vi.waitFor(() => expect(settingsHeld(stores)).toEqual(ONCE));
    digests.release();
    await settle();

    const next = start();
    await next.setLayer('settings', BEFORE);
    expect(settingsHeld(stores)).toEqual(BEFORE);
  });
});
