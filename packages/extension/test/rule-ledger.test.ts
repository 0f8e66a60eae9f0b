import { describe, expect, it } from 'vitest';
import { LAYERS, OPEN_OVER_HTTP_IDS } from '../src/dnr/layout.js';
import { LEDGER_KEY, ledgerIn } from '../src/dnr/rule-ledger.js';
import { DnrBudgetError, RuleWriter } from '../src/dnr/rule-writer.js';
import { type ExtRule, type RuleBody, RUNTIME_LIMITS } from '../src/dnr/rules.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { RuleStores } from './support/rule-stores.js';

/** The browser's stores, noting whether the record was kept while each dynamic update began. */
class CountedStores extends RuleStores {
  /** Whether the record was in storage when each dynamic update began. */
  recordDuringUpdate: boolean[] = [];
  /** A rule with this urlFilter makes Chromium refuse the update whole. */
  poison = '|http://refused.test/';

  constructor(private readonly area: MemoryStorageArea) {
    super();
  }
  override async updateDynamicRules(u: { removeRuleIds: number[]; addRules: ExtRule[] }) {
    this.recordDuringUpdate.push(this.area.data.has(LEDGER_KEY));
    if (u.addRules.some((r) => r.condition.urlFilter === this.poison))
      throw new Error('Rule with id 1 is invalid');
    await super.updateDynamicRules(u);
  }
}

const allow = (host: string): RuleBody => ({
  priority: 5,
  action: { type: 'allow' },
  condition: { urlFilter: `|http://${host}/` },
});
const regex = (i: number): RuleBody => ({
  priority: 5,
  action: { type: 'upgradeScheme' },
  condition: { regexFilter: `^http://r${i}\\.test/` },
});
const upgrade = (host: string): RuleBody => ({
  priority: 2,
  action: { type: 'upgradeScheme' },
  condition: { urlFilter: `|http://${host}/` },
});
const filters = (rules: ExtRule[]) => rules.map((r) => r.condition.urlFilter).sort();

/** A browser whose worker wrote some of every kind of layer, then stopped. */
async function written() {
  const session = new MemoryStorageArea();
  const stores = new CountedStores(session);
  const first = new RuleWriter(stores, RUNTIME_LIMITS, { ledger: ledgerIn(session, LEDGER_KEY) });
  await first.setLayer('overrides', [regex(1), regex(2)]);
  await first.setLayer('settings', [allow('a.test'), allow('b.test')]);
  await first.setLayer('handoff', [allow('p.test')]);
  await first.setLayer('loops', [allow('loop.test')]);
  const wake = () =>
    new RuleWriter(stores, RUNTIME_LIMITS, { ledger: ledgerIn(session, LEDGER_KEY) });
  stores.dynamicReads = 0;
  return { session, stores, wake };
}

describe("the rule writer's record of the dynamic store", () => {
  it('lets a waking worker declare its layers as they are without reading or writing them', async () => {
    const { stores, wake } = await written();
    const before = structuredClone(stores.dynamic);
    const w = wake();
    await w.setLayer('settings', [allow('a.test'), allow('b.test')]);
    await w.setLayer('handoff', [allow('p.test')]);
    // A session layer is read and written as always, fitted beside the recorded ones.
    await w.setLayer('loops', [allow('loop.test'), allow('loop2.test')]);
    expect(stores.dynamicReads).toBe(0);
    expect(w.updates).toBe(1);
    expect(stores.dynamic).toEqual(before);
    expect(filters(stores.session)).toEqual(['|http://loop.test/', '|http://loop2.test/']);
    expect(w.refusals()).toEqual([]);
  });

  it('rewrites a changed layer over the ids it holds, unread, and records it', async () => {
    const { stores, wake } = await written();
    const w = wake();
    await w.setLayer('settings', [allow('a.test'), allow('c.test')]);
    expect(stores.dynamicReads).toBe(0);
    expect(filters(stores.dynamic.filter((r) => r.id >= LAYERS.settings.base))).toEqual([
      '|http://a.test/',
      '|http://c.test/',
      '|http://p.test/',
    ]);
    // The next wake knows the new rules; the old ones are no longer "as they are".
    const next = wake();
    await next.setLayer('settings', [allow('a.test'), allow('c.test')]);
    expect(next.updates).toBe(0);
    await next.setLayer('settings', [allow('b.test')]);
    expect(stores.dynamicReads).toBe(0);
    expect(filters(stores.dynamic.filter((r) => r.id >= LAYERS.settings.base))).toEqual([
      '|http://b.test/',
      '|http://p.test/',
    ]);
    expect(await next.rules('settings')).toHaveLength(1);
  });

  it('removes every id a layer kept after a refusal, gaps included, when it rewrites it', async () => {
    const { stores, wake } = await written();
    const w = wake();
    await w.setLayer('handoff', [upgrade('a.test'), allow('b.test'), upgrade('c.test')]);
    // Refused: it keeps its upgrades, at their ids (base and base + 2).
    await expect(w.setLayer('handoff', [allow('refused.test')])).rejects.toThrow();
    const base = LAYERS.handoff.base;
    expect(stores.dynamic.filter((r) => r.id >= base).map((r) => r.id)).toEqual([base, base + 2]);
    const next = wake();
    await next.setLayer('handoff', [allow('x.test')]);
    expect(stores.dynamicReads).toBe(0);
    expect(filters(stores.dynamic.filter((r) => r.id >= base))).toEqual(['|http://x.test/']);
  });

  it('reads a changed layer that fits nowhere, to keep its old upgrades and no allow', async () => {
    const session = new MemoryStorageArea();
    const stores = new CountedStores(session);
    const limits = { ...RUNTIME_LIMITS, regexRules: 10 };
    const ledger = ledgerIn(session, LEDGER_KEY);
    const first = new RuleWriter(stores, limits, { ledger });
    await first.setLayer(
      'overrides',
      Array.from({ length: 9 }, (_, i) => regex(i)),
    );
    await first.setLayer('handoff', [upgrade('a.test'), allow('b.test')]);
    stores.dynamicReads = 0;
    const w = new RuleWriter(stores, limits, { ledger });
    await expect(w.setLayer('handoff', [regex(50), regex(51)])).rejects.toThrow(DnrBudgetError);
    expect(stores.dynamicReads).toBe(1);
    expect(filters(stores.dynamic.filter((r) => r.id >= LAYERS.handoff.base))).toEqual([
      '|http://a.test/',
    ]);
  });

  it('is never in storage while the store changes: a worker stopped then leaves none', async () => {
    const { stores, wake } = await written();
    expect(stores.recordDuringUpdate.length).toBeGreaterThan(0);
    expect(stores.recordDuringUpdate.every((had) => !had)).toBe(true);
    // The update lands, and the worker stops before it hears so.
    stores.hangNextDynamic = true;
    void wake().setLayer('settings', [allow('gone.test')]);
    await expect.poll(() => filters(stores.dynamic)).toContain('|http://gone.test/');
    // Back to the old settings (their record would say "as they are"): read, and written.
    const w = wake();
    stores.dynamicReads = 0;
    await w.setLayer('settings', [allow('a.test'), allow('b.test')]);
    expect(stores.dynamicReads).toBe(1);
    expect(filters(stores.dynamic)).not.toContain('|http://gone.test/');
    expect(filters(stores.dynamic)).toContain('|http://b.test/');
  });

  it('counts the recorded layers in the budgets a session layer is fitted to', async () => {
    const session = new MemoryStorageArea();
    const stores = new CountedStores(session);
    const limits = { ...RUNTIME_LIMITS, regexRules: 10 };
    const ledger = ledgerIn(session, LEDGER_KEY);
    const first = new RuleWriter(stores, limits, { ledger });
    await first.setLayer(
      'overrides',
      Array.from({ length: 9 }, (_, i) => regex(i)),
    );
    stores.dynamicReads = 0;
    const w = new RuleWriter(stores, limits, { ledger });
    await expect(w.setLayer('loops', [regex(100), regex(101)])).rejects.toThrow(DnrBudgetError);
    expect(await w.free('loops')).toMatchObject({ regexRules: 1 });
    expect(stores.dynamicReads).toBe(0);
    expect(stores.session).toEqual([]);
  });

  it('trusts no record of another shape, and keeps none while a stale rule is left', async () => {
    const { session, stores, wake } = await written();
    const good = session.data.get(LEDGER_KEY) as { layers: Record<string, unknown> };
    for (const bad of [
      null,
      'x',
      { ...good, version: 99 },
      {
        ...good,
        layers: {
          ...good.layers,
          settings: { ...(good.layers['settings'] as object), end: LAYERS.settings.base },
        },
      },
      {
        ...good,
        layers: {
          ...good.layers,
          settings: { ...(good.layers['settings'] as object), usage: { rules: -1, regexRules: 0 } },
        },
      },
      { ...good, layers: { ...good.layers, extra: good.layers['settings'] } },
    ]) {
      session.data.set(LEDGER_KEY, bad);
      stores.dynamicReads = 0;
      await wake().setLayer('settings', [allow('a.test'), allow('b.test')]);
      expect(stores.dynamicReads).toBe(1);
    }
    // An older version's rule outside every range: read, not recorded until it is removed.
    stores.dynamic.push({ ...allow('old.test'), id: 9_500_000 });
    session.data.delete(LEDGER_KEY);
    const w = wake();
    expect(await w.free('settings')).toBeDefined();
    expect(session.data.has(LEDGER_KEY)).toBe(false);
    await w.setLayer('handoff', [allow('q.test')]);
    expect(filters(stores.dynamic)).not.toContain('|http://old.test/');
    expect(session.data.has(LEDGER_KEY)).toBe(true);
  });

  it('records the store as it stays when Chromium refuses an update', async () => {
    const { stores, wake } = await written();
    const w = wake();
    await w.setLayer('handoff', [upgrade('up.test')]);
    // Refused whole; what the layer keeps (its upgrade) is what it holds: nothing more written.
    const updates = w.updates;
    await expect(
      w.setLayer('handoff', [upgrade('up.test'), allow('refused.test')]),
    ).rejects.toThrow();
    expect(w.updates).toBe(updates);
    stores.dynamicReads = 0;
    const next = wake();
    await next.setLayer('settings', [allow('a.test'), allow('b.test')]);
    await next.setLayer('handoff', [upgrade('up.test')]);
    expect(next.updates).toBe(0);
    expect(stores.dynamicReads).toBe(0);
  });
});

describe('session rules the writer does not own', () => {
  it('leaves an "open over HTTP" redirect alone (written before the tab navigates)', async () => {
    const session = new MemoryStorageArea();
    const stores = new CountedStores(session);
    const redirect: ExtRule = {
      id: OPEN_OVER_HTTP_IDS.base + 5,
      priority: 3_000_000,
      action: { type: 'redirect', redirect: { transform: { scheme: 'http' } } },
      condition: { regexFilter: '^https://once\\.test/$', resourceTypes: ['main_frame'] },
    };
    stores.session = [redirect, { ...allow('stale.test'), id: 3_500_000 }];
    const w = new RuleWriter(stores, RUNTIME_LIMITS, { ledger: ledgerIn(session, LEDGER_KEY) });
    await w.setLayer('loops', [allow('loop.test')]);
    expect(stores.session.map((r) => r.id).sort()).toEqual([LAYERS.loops.base, redirect.id]);
  });
});
