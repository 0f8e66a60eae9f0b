import { describe, expect, it } from 'vitest';
import { LAYERS } from '../src/dnr/layout.js';
import {
  DnrBudgetError,
  DnrRefusedError,
  type DnrRulesApi,
  RuleWriter,
} from '../src/dnr/rule-writer.js';
import { type ExtRule, type RuleBody, RUNTIME_LIMITS } from '../src/dnr/rules.js';

/**
 * declarativeNetRequest as Chromium behaves: updates are all or nothing, ids must be unique,
 * and it answers slowly, so overlapping read-modify-writes would show.
 */
class FakeDnr implements DnrRulesApi {
  dynamic: ExtRule[] = [];
  session: ExtRule[] = [];
  calls: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** A rule whose urlFilter is this makes the browser refuse the update. */
  poison = '|http://refused.test/';

  async getDynamicRules() {
    return structuredClone(this.dynamic);
  }
  async getSessionRules() {
    return structuredClone(this.session);
  }
  updateDynamicRules(u: { removeRuleIds: number[]; addRules: ExtRule[] }) {
    return this.update('dynamic', u);
  }
  updateSessionRules(u: { removeRuleIds: number[]; addRules: ExtRule[] }) {
    return this.update('session', u);
  }
  private async update(
    store: 'dynamic' | 'session',
    { removeRuleIds, addRules }: { removeRuleIds: number[]; addRules: ExtRule[] },
  ) {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise((r) => setTimeout(r, 5));
    this.inFlight--;
    this.calls.push(`${store} -${removeRuleIds.length} +${addRules.length}`);
    if (addRules.some((r) => r.condition.urlFilter === this.poison))
      throw new Error('Rule with id 5 is invalid');
    const next = [
      ...this[store].filter((r) => !removeRuleIds.includes(r.id)),
      ...structuredClone(addRules),
    ];
    if (new Set(next.map((r) => r.id)).size !== next.length)
      throw new Error('Rule does not have a unique ID');
    this[store] = next;
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
const ids = (rules: ExtRule[]) => rules.map((r) => r.id).sort((a, b) => a - b);

describe('the DNR rule writer', () => {
  it('numbers each layer in its own range and writes only what changed', async () => {
    const dnr = new FakeDnr();
    const w = new RuleWriter(dnr);
    await w.setLayer('settings', [allow('a.test'), allow('b.test'), allow('c.test')]);
    await w.setLayer('loops', [allow('loop.test')]);
    const base = LAYERS.settings.base;
    expect(ids(dnr.dynamic)).toEqual([base, base + 1, base + 2]);
    expect(ids(dnr.session)).toEqual([LAYERS.loops.base]);

    dnr.calls = [];
    await w.setLayer('settings', [allow('a.test'), allow('b.test'), allow('c.test')]);
    expect(dnr.calls).toEqual([]);
    await w.setLayer('settings', [allow('a.test'), allow('x.test')]);
    // One changed rule replaced, one dropped, one kept.
    expect(dnr.calls).toEqual(['dynamic -2 +1']);
    expect(dnr.dynamic.map((r) => r.condition.urlFilter).sort()).toEqual([
      '|http://a.test/',
      '|http://x.test/',
    ]);
    expect(await w.rules('settings')).toHaveLength(2);
  });

  it('keeps the rules it finds (field order aside), and removes stale ones outside every range', async () => {
    const dnr = new FakeDnr();
    const kept = {
      condition: { urlFilter: '|http://a.test/' },
      action: { type: 'allow' as const },
      priority: 5,
      id: LAYERS.handoff.base,
    };
    dnr.dynamic = [kept, { ...allow('old.test'), id: 9_500_000 }];
    const w = new RuleWriter(dnr);
    await w.setLayer('handoff', [allow('a.test')]);
    expect(dnr.calls).toEqual(['dynamic -1 +0']);
    expect(dnr.dynamic).toEqual([kept]);
  });

  it('batches layers declared together into one update per store, the later rules winning', async () => {
    const dnr = new FakeDnr();
    const w = new RuleWriter(dnr);
    const done = Promise.all([
      w.setLayer('settings', [allow('a.test')]),
      w.setLayer('handoff', [allow('p.test')]),
      w.setLayer('settings', [allow('b.test')]),
      w.setLayer('handoffOnce', [allow('once.test')]),
    ]);
    await done;
    expect(dnr.calls).toEqual(['dynamic -0 +2', 'session -0 +1']);
    expect(dnr.dynamic.map((r) => r.condition.urlFilter).sort()).toEqual([
      '|http://b.test/',
      '|http://p.test/',
    ]);
  });

  it('never runs two updates at once, and plans each against what the previous one left', async () => {
    const dnr = new FakeDnr();
    const w = new RuleWriter(dnr);
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      writes.push(
        w.setLayer(
          'loops',
          Array.from({ length: (i % 4) + 1 }, (_, j) => allow(`h${j}.test`)),
        ),
      );
      writes.push(w.setLayer('handoffOnce', [allow(`t${i}.test`)]));
      await new Promise((r) => setTimeout(r, i % 3));
    }
    await Promise.all(writes);
    expect(dnr.maxInFlight).toBe(1);
    expect(dnr.session.map((r) => r.condition.urlFilter).sort()).toEqual([
      '|http://h0.test/',
      '|http://h1.test/',
      '|http://h2.test/',
      '|http://h3.test/',
      '|http://t19.test/',
    ]);
  });

  it('counts the regex budget once over every layer of both stores, and reports an overflow', async () => {
    const dnr = new FakeDnr();
    const w = new RuleWriter(dnr, { ...RUNTIME_LIMITS, regexRules: 10 });
    await w.setLayer(
      'channels',
      Array.from({ length: 6 }, (_, i) => regex(i)),
    );
    await w.setLayer('loops', [regex(100), regex(101)]);
    expect(await w.usageOutside('handoff')).toEqual({ rules: 6, regexRules: 8, unsafeRules: 0 });
    // 8 used elsewhere: three more do not fit; the layer keeps its previous rules.
    await w.setLayer('handoff', [regex(200)]);
    const refused = w.setLayer('handoff', [regex(200), regex(201), regex(202)]);
    await expect(refused).rejects.toBeInstanceOf(DnrBudgetError);
    await expect(refused).rejects.toThrow(/11 regex rules \(dynamic and session\) > 10/);
    expect(w.problem('handoff')).toMatch(/handoff rules do not fit/);
    expect(dnr.dynamic.filter((r) => r.id >= LAYERS.handoff.base)).toHaveLength(1);
    // Room made elsewhere: it fits now, and the problem is gone.
    await w.setLayer('loops', []);
    await w.setLayer('handoff', [regex(200), regex(201), regex(202)]);
    expect(w.problem('handoff')).toBeUndefined();
  });

  it('writes the other layers of a batch the browser refused, and reports the refused one', async () => {
    const dnr = new FakeDnr();
    const w = new RuleWriter(dnr);
    const bad = w.setLayer('settings', [allow('refused.test')]);
    const good = w.setLayer('handoff', [allow('p.test')]);
    await expect(bad).rejects.toThrow(/invalid/);
    await good;
    expect(dnr.dynamic.map((r) => r.condition.urlFilter)).toEqual(['|http://p.test/']);
    expect(w.problem('settings')).toMatch(/Chromium refused the settings rules/);
  });

  it('keeps no allow in a refused layer, still asked for or not; its old upgrades stay', async () => {
    const dnr = new FakeDnr();
    const w = new RuleWriter(dnr, { ...RUNTIME_LIMITS, regexRules: 3 });
    await w.setLayer('channels', [regex(0), regex(1)]);
    // The layer held two allows (a switch off, a site) and an upgrade; the new set drops one
    // allow, keeps the other and adds two regexes, one more than the budget leaves.
    await w.setLayer('settings', [allow('off.test'), allow('site.test'), regex(10)]);
    const refused = w.setLayer('settings', [allow('site.test'), regex(11), regex(12)]);
    await expect(refused).rejects.toThrow(/the upgrades applied before stay in use/);
    const settings = dnr.dynamic.filter((r) => r.id >= LAYERS.settings.base);
    expect(settings.map((r) => r.condition.regexFilter ?? r.condition.urlFilter)).toEqual([
      '^http://r10\\.test/',
    ]);
    expect(w.problem('settings')).toMatch(/settings rules do not fit/);
  });

  it('writes the first smaller set that fits, and says what it leaves out', async () => {
    const dnr = new FakeDnr();
    const w = new RuleWriter(dnr, { ...RUNTIME_LIMITS, regexRules: 2 });
    await w.setLayer('channels', [regex(0)]);
    const asked = w.setLayer(
      'settings',
      [allow('a.test'), regex(10), regex(11)],
      [
        { rules: [allow('a.test'), regex(10), regex(11)], without: 'nothing (still too big)' },
        { rules: [allow('a.test'), regex(10)], without: 'the second regex' },
        { rules: [allow('a.test')], without: 'both regexes' },
      ],
    );
    await expect(asked).rejects.toThrow(DnrBudgetError);
    await expect(asked).rejects.toThrow(/written without the second regex/);
    expect(dnr.dynamic.filter((r) => r.id >= LAYERS.settings.base)).toHaveLength(2);
    // It fits again once room is made: the whole set, and the problem is gone.
    await w.setLayer('channels', []);
    await w.setLayer('settings', [allow('a.test'), regex(10), regex(11)]);
    expect(dnr.dynamic).toHaveLength(3);
    expect(w.problem('settings')).toBeUndefined();
  });

  it('writes a smaller set when Chromium refuses the whole one, else what still holds', async () => {
    const dnr = new FakeDnr();
    const w = new RuleWriter(dnr);
    await w.setLayer('settings', [allow('old.test'), allow('kept.test')]);
    const withFallback = w.setLayer(
      'settings',
      [allow('kept.test'), allow('refused.test'), allow('new.test')],
      [{ rules: [allow('kept.test'), allow('new.test')], without: 'the refused one' }],
    );
    await expect(withFallback).rejects.toThrow(DnrRefusedError);
    await expect(withFallback).rejects.toThrow(/invalid.*written without the refused one/);
    expect(dnr.dynamic.map((r) => r.condition.urlFilter)).toEqual([
      '|http://kept.test/',
      '|http://new.test/',
    ]);
    // No smaller set: every allow goes (an exception kept alone may relax more than asked).
    await w.setLayer('settings', [allow('old.test'), allow('kept.test')]);
    await expect(
      w.setLayer('settings', [allow('kept.test'), allow('refused.test')]),
    ).rejects.toThrow(/the upgrades applied before stay in use/);
    expect(dnr.dynamic).toEqual([]);
  });

  it('keeps no redirect a refused layer no longer asks for (it may send elsewhere)', async () => {
    const dnr = new FakeDnr();
    const w = new RuleWriter(dnr, { ...RUNTIME_LIMITS, regexRules: 2 });
    const to = (host: string, i: number): RuleBody => ({
      priority: 5,
      action: { type: 'redirect', redirect: { regexSubstitution: `https://${host}/\\1` } },
      condition: { regexFilter: `^http://r${i}\\.test/(.*)` },
    });
    await w.setLayer('channels', [to('kept.test', 1), to('elsewhere.test', 2)]);
    // The bundle behind the second is no longer trusted; the new plan needs one regex too many.
    await expect(w.setLayer('channels', [to('kept.test', 1), regex(3), regex(4)])).rejects.toThrow(
      DnrBudgetError,
    );
    const to_ = (r: ExtRule) =>
      r.action.type === 'redirect' ? r.action.redirect.regexSubstitution : r.action.type;
    expect(dnr.dynamic.map(to_)).toEqual(['https://kept.test/\\1']);
  });

  it("fits and plans the other layers around a layer's reserve", async () => {
    const dnr = new FakeDnr();
    const reserve = { rules: 3, regexRules: 3, unsafeRules: 0 };
    const w = new RuleWriter(
      dnr,
      { ...RUNTIME_LIMITS, regexRules: 5 },
      {
        reserves: { settings: reserve },
      },
    );
    // The settings layer holds one regex: the other layers see three held.
    await w.setLayer('settings', [regex(100)]);
    expect((await w.free('channels')).regexRules).toBe(2);
    await expect(w.setLayer('channels', [regex(0), regex(1), regex(2)])).rejects.toThrow(
      DnrBudgetError,
    );
    await w.setLayer('channels', [regex(0), regex(1)]);
    // The settings layer itself may grow into its reserve at any time.
    await w.setLayer('settings', [regex(100), regex(101), regex(102)]);
    expect(dnr.dynamic.filter((r) => r.condition.regexFilter !== undefined)).toHaveLength(5);
  });

  it('notes a partial set as in force, and keeps refusals across a restart', async () => {
    const dnr = new FakeDnr();
    const kept: unknown[] = [];
    const w = new RuleWriter(dnr, RUNTIME_LIMITS, { refusalsChanged: (r) => kept.push(r) });
    await w.setLayer('overrides', [regex(1)], [], 'two rules DNR cannot express');
    expect(w.refusals()).toEqual([
      {
        layer: 'overrides',
        message: 'the overrides rules leave out two rules DNR cannot express',
        outcome: { partial: 'two rules DNR cannot express' },
      },
    ]);
    expect(kept.at(-1)).toEqual(w.refusals());
    // A new worker: the refusal is read back until the layer is written again.
    const next = new RuleWriter(dnr);
    next.restoreRefusals(w.refusals());
    expect(next.problem('overrides')).toMatch(/two rules DNR cannot express/);
    await next.setLayer('overrides', [regex(1)]);
    expect(next.refusals()).toEqual([]);
    next.restoreRefusals(w.refusals());
    expect(next.refusals()).toEqual([]);
    // Read back after another layer's batch stored its own: stored again, all of them.
    const stored: unknown[] = [];
    const late = new RuleWriter(dnr, RUNTIME_LIMITS, { refusalsChanged: (r) => stored.push(r) });
    await late.setLayer('handoff', [regex(7)]);
    late.restoreRefusals(w.refusals());
    expect(stored.at(-1)).toEqual(w.refusals());
  });

  it('refuses more rules than the layer has ids', async () => {
    const w = new RuleWriter(new FakeDnr());
    const size = LAYERS.handoff.limit - LAYERS.handoff.base;
    await expect(
      w.setLayer('handoff', new Array<RuleBody>(size + 1).fill(allow('a.test'))),
    ).rejects.toBeInstanceOf(DnrBudgetError);
  });
});
