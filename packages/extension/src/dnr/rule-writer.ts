/**
 * The one writer of the extension's dynamic and session declarativeNetRequest rules (Chromium).
 * Modules declare the whole set of rules they want in their layer (`setLayer`); the writer
 * numbers them in the layer's id range (layout.ts), checks the sum of every layer against
 * Chromium's limits (the regex budget is shared by all layers of both stores and counted here
 * only), and brings the browser in line with one diffed update per store.
 *
 * Updates are serialised: a batch is planned against the rules the previous batch left, so two
 * read-modify-writes never interleave. Layers declared while a batch runs go in the next one;
 * a layer declared twice before its batch starts is written once, with the later rules.
 */
import { LAYER_NAMES, LAYERS, layerOf, type LayerName, type RuleStore } from './layout.js';
import {
  type DnrLimits,
  type DnrUsage,
  type ExtRule,
  overLimits,
  type RuleBody,
  ruleKey,
  RUNTIME_LIMITS,
  type StoreUsage,
  usageOf,
} from './rules.js';

/** The part of `chrome.declarativeNetRequest` the writer drives (browser-api.ts provides it). */
export interface DnrRulesApi {
  getDynamicRules(): Promise<ExtRule[]>;
  getSessionRules(): Promise<ExtRule[]>;
  updateDynamicRules(update: { removeRuleIds: number[]; addRules: ExtRule[] }): Promise<void>;
  updateSessionRules(update: { removeRuleIds: number[]; addRules: ExtRule[] }): Promise<void>;
}

/** A layer's rules would break Chromium's limits: refused, the layer's previous rules stay. */
export class DnrBudgetError extends Error {
  constructor(
    readonly layer: LayerName,
    readonly over: string[],
  ) {
    super(
      `the ${layer} rules do not fit Chromium's limits (${over.join('; ')}); the rules applied before stay in use`,
    );
    this.name = 'DnrBudgetError';
  }
}

interface Pending {
  rules: ExtRule[];
  waiters: { resolve(): void; reject(e: unknown): void }[];
}

const EMPTY: DnrUsage = { rules: 0, regexRules: 0, unsafeRules: 0 };

export class RuleWriter {
  /** What the browser holds, per layer, in id order (null until read). */
  private applied: Map<LayerName, ExtRule[]> | null = null;
  /** Stale rules found at load (outside every range): removed by the first batch. */
  private stale: { dynamic: number[]; session: number[] } = { dynamic: [], session: [] };
  private readonly pending = new Map<LayerName, Pending>();
  private readonly problems = new Map<LayerName, string>();
  private queue: Promise<void> = Promise.resolve();
  private scheduled = false;
  /** Browser updates sent (tests: batching and skipped no-op writes). */
  updates = 0;

  constructor(
    private readonly api: DnrRulesApi,
    private readonly limits: DnrLimits = RUNTIME_LIMITS,
  ) {}

  /**
   * Declares every rule of `layer` (ids are assigned here: the i-th gets the layer's base + i).
   * Resolves once the browser holds them; rejects with DnrBudgetError when they do not fit, or
   * with the browser's error, and then the layer's previous rules stay in force.
   */
  setLayer(layer: LayerName, rules: readonly RuleBody[]): Promise<void> {
    const { base, limit } = LAYERS[layer];
    if (rules.length > limit - base)
      return Promise.reject(
        new DnrBudgetError(layer, [`${rules.length} rules > ${limit - base} ids of the layer`]),
      );
    const numbered = rules.map((r, i) => ({ ...withoutId(r), id: base + i }));
    return new Promise<void>((resolve, reject) => {
      const p = this.pending.get(layer) ?? { rules: [], waiters: [] };
      p.rules = numbered;
      p.waiters.push({ resolve, reject });
      this.pending.set(layer, p);
      this.schedule();
    });
  }

  /** The rules the browser holds for `layer` now, with their ids (after the batches queued so far). */
  async rules(layer: LayerName): Promise<ExtRule[]> {
    await this.idle();
    return [...((await this.load()).get(layer) ?? [])];
  }

  /**
   * What every other layer uses: dynamic rules and redirects, and regex rules of both stores
   * (declared rules not yet written included). A planner compiles into the rest; the writer
   * checks the sum again when the layer is written.
   */
  async usageOutside(layer: LayerName): Promise<DnrUsage> {
    const u = await this.othersUsage(layer);
    return {
      rules: u.dynamic.rules,
      regexRules: u.dynamic.regexRules + u.session.regexRules,
      unsafeRules: u.dynamic.unsafeRules,
    };
  }

  /** What the limits leave for `layer`, in its own store, given every other layer. */
  async free(layer: LayerName): Promise<DnrUsage> {
    const u = await this.othersUsage(layer);
    const dynamic = LAYERS[layer].store === 'dynamic';
    const mine = dynamic ? u.dynamic : u.session;
    return {
      rules: Math.max(
        0,
        (dynamic ? this.limits.dynamicRules : this.limits.sessionRules) - mine.rules,
      ),
      regexRules: Math.max(0, this.limits.regexRules - u.dynamic.regexRules - u.session.regexRules),
      unsafeRules: Math.max(
        0,
        (dynamic ? this.limits.unsafeDynamicRules : this.limits.unsafeSessionRules) -
          mine.unsafeRules,
      ),
    };
  }

  private async othersUsage(layer: LayerName): Promise<StoreUsage> {
    const applied = await this.load();
    const others = new Map<LayerName, readonly RuleBody[]>();
    for (const name of LAYER_NAMES)
      if (name !== layer)
        others.set(name, this.pending.get(name)?.rules ?? applied.get(name) ?? []);
    return usageByStore(others);
  }

  /** Why the layer's last declared rules are not in force, if they are not. */
  problem(layer: LayerName): string | undefined {
    return this.problems.get(layer);
  }

  /** Resolves when every batch queued so far has been written. */
  async idle(): Promise<void> {
    while (this.scheduled || this.pending.size > 0) await this.queue;
    await this.queue;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.queue = this.queue
      .then(() => {
        this.scheduled = false;
        return this.flush();
      })
      .catch((e: unknown) => console.error('httpsify: DNR rules not written', e));
  }

  private async load(): Promise<Map<LayerName, ExtRule[]>> {
    if (this.applied !== null) return this.applied;
    const [dynamic, session] = await Promise.all([
      this.api.getDynamicRules(),
      this.api.getSessionRules(),
    ]);
    const applied = new Map<LayerName, ExtRule[]>();
    const stale: { dynamic: number[]; session: number[] } = { dynamic: [], session: [] };
    for (const [store, rules] of [
      ['dynamic', dynamic],
      ['session', session],
    ] as const)
      for (const r of [...rules].sort((a, b) => a.id - b.id)) {
        const layer = layerOf(store, r.id);
        if (layer === null) stale[store].push(r.id);
        else if (applied.has(layer)) applied.get(layer)?.push(r);
        else applied.set(layer, [r]);
      }
    // Another caller may have loaded meanwhile: keep the first.
    if (this.applied === null) {
      this.applied = applied;
      this.stale = stale;
    }
    return this.applied;
  }

  /** Writes every pending layer that fits, in one update per store. */
  private async flush(): Promise<void> {
    const batch = new Map(this.pending);
    this.pending.clear();
    let applied: Map<LayerName, ExtRule[]>;
    try {
      applied = await this.load();
    } catch (e) {
      for (const p of batch.values()) for (const w of p.waiters) w.reject(e);
      return;
    }
    // Accept layers one by one, in layout order, each against the sum of what is accepted so far.
    const next = new Map(applied);
    const accepted: LayerName[] = [];
    for (const layer of LAYER_NAMES) {
      const p = batch.get(layer);
      if (p === undefined) continue;
      const trial = new Map(next).set(layer, p.rules);
      const over = overLimits(usageByStore(trial), this.limits);
      if (over.length > 0) {
        const err = new DnrBudgetError(layer, over);
        this.problems.set(layer, err.message);
        for (const w of p.waiters) w.reject(err);
        continue;
      }
      next.set(layer, p.rules);
      accepted.push(layer);
    }
    try {
      await this.write(applied, next, accepted);
    } catch {
      // Chromium refused the batch whole: write the layers one at a time, to tell whose it was.
      for (const layer of accepted) {
        const p = batch.get(layer) as Pending;
        try {
          await this.write(applied, new Map(applied).set(layer, p.rules), [layer]);
        } catch (e) {
          this.problems.set(
            layer,
            `Chromium refused the ${layer} rules (${e instanceof Error ? e.message : String(e)}); the rules applied before stay in use`,
          );
          for (const w of p.waiters) w.reject(e);
          batch.delete(layer);
        }
      }
    }
    for (const layer of accepted) {
      const p = batch.get(layer);
      if (p === undefined) continue;
      this.problems.delete(layer);
      for (const w of p.waiters) w.resolve();
    }
  }

  /** Brings the browser from `from` to `to` for `layers`; updates `from` in place once written. */
  private async write(
    from: Map<LayerName, ExtRule[]>,
    to: Map<LayerName, ExtRule[]>,
    layers: LayerName[],
  ): Promise<void> {
    const updates: Record<RuleStore, { removeRuleIds: number[]; addRules: ExtRule[] }> = {
      dynamic: { removeRuleIds: [...this.stale.dynamic], addRules: [] },
      session: { removeRuleIds: [...this.stale.session], addRules: [] },
    };
    for (const layer of layers) {
      const update = updates[LAYERS[layer].store];
      const before = new Map((from.get(layer) ?? []).map((r) => [r.id, ruleKey(withoutId(r))]));
      const wanted = to.get(layer) ?? [];
      for (const r of wanted) {
        const had = before.get(r.id);
        if (had === ruleKey(withoutId(r))) continue;
        if (had !== undefined) update.removeRuleIds.push(r.id);
        update.addRules.push(r);
      }
      const kept = new Set(wanted.map((r) => r.id));
      for (const id of before.keys()) if (!kept.has(id)) update.removeRuleIds.push(id);
    }
    for (const store of ['dynamic', 'session'] as const) {
      const u = updates[store];
      if (u.removeRuleIds.length === 0 && u.addRules.length === 0) continue;
      if (store === 'dynamic') await this.api.updateDynamicRules(u);
      else await this.api.updateSessionRules(u);
      this.updates++;
      this.stale[store] = [];
      // Written: this store's layers now hold what was asked (a later store may still fail).
      for (const layer of layers)
        if (LAYERS[layer].store === store) from.set(layer, to.get(layer) ?? []);
    }
    for (const layer of layers) from.set(layer, to.get(layer) ?? []);
  }
}

function withoutId(r: RuleBody & { id?: number }): RuleBody {
  const { id: _id, ...body } = r;
  return body;
}

function usageByStore(layers: Map<LayerName, readonly RuleBody[]>): StoreUsage {
  const out: StoreUsage = { dynamic: { ...EMPTY }, session: { ...EMPTY } };
  for (const [layer, rules] of layers) {
    const u = usageOf(rules);
    const s = out[LAYERS[layer].store];
    s.rules += u.rules;
    s.regexRules += u.regexRules;
    s.unsafeRules += u.unsafeRules;
  }
  return out;
}
