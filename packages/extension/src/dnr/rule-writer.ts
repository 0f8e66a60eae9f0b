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
 *
 * A layer that does not fit (or that Chromium refuses) gets its planner's smaller sets in turn;
 * failing those it keeps what it held without any `allow`: an old `allow` may be one the user has
 * just taken back (a global switch, a site, a ruleset switched on again), and one kept without
 * the rule beside it (a handoff, an upgrade it was an exception to) relaxes more than decide().
 * Old upgrades stay: a refusal may leave the browser stricter than decide(), never laxer.
 *
 * A layer may hold room in reserve (the settings' switches and mode): the other layers are
 * fitted and planned as if it used at least that much, so its smallest set always fits.
 *
 * With a ledger (rule-ledger.ts), a worker that wakes knows the dynamic layers by their digests:
 * a layer declared as it is held is not written, and the store is read in full only when a
 * dynamic layer changes (or its rules are asked for).
 */
import {
  LAYER_NAMES,
  LAYERS,
  layerOf,
  type LayerName,
  OPEN_OVER_HTTP_IDS,
  type RuleStore,
} from './layout.js';
import {
  DYNAMIC_LAYERS,
  fingerprint,
  type Ledger,
  type LedgerStore,
  parseLedger,
  recordOf,
} from './rule-ledger.js';
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

/** A smaller set of a layer's rules, to write when the whole set does not fit. */
export interface LayerFallback {
  rules: readonly RuleBody[];
  /** What it leaves out, in words that finish "written without …". */
  without: string;
}

/**
 * What a layer holds instead of the rules asked for: a smaller set, or its old rules without
 * any `allow` ('kept-upgrades'); or (`partial`) the rules asked for, which leave part of what the
 * planner was given out (rules DNR cannot express), in its words.
 */
export type RefusedOutcome = { without: string } | 'kept-upgrades' | { partial: string };

/** A layer's rules would break Chromium's limits: refused, and a smaller set written instead. */
export class DnrBudgetError extends Error {
  constructor(
    readonly layer: LayerName,
    readonly over: string[],
    readonly outcome: RefusedOutcome = 'kept-upgrades',
  ) {
    super(`the ${layer} rules do not fit Chromium's limits (${over.join('; ')}); ${said(outcome)}`);
    this.name = 'DnrBudgetError';
  }
}

/** Chromium refused a layer's rules (an update fails whole); a smaller set written instead. */
export class DnrRefusedError extends Error {
  constructor(
    readonly layer: LayerName,
    readonly reason: string,
    readonly outcome: RefusedOutcome,
  ) {
    super(`Chromium refused the ${layer} rules (${reason}); ${said(outcome)}`);
    this.name = 'DnrRefusedError';
  }
}

function said(outcome: RefusedOutcome): string {
  if (outcome === 'kept-upgrades')
    return "the upgrades applied before stay in use, without the layer's exceptions or redirects no longer asked for";
  return 'without' in outcome ? `written without ${outcome.without}` : outcome.partial;
}

/** A planner's note that the rules it wrote leave part of its input out (no refusal). */
export class DnrPartialError extends Error {
  constructor(
    readonly layer: LayerName,
    readonly outcome: { partial: string },
  ) {
    super(`the ${layer} rules leave out ${outcome.partial}`);
    this.name = 'DnrPartialError';
  }
}

/** What the writer knows of a layer not wholly in force, as kept across worker restarts. */
export interface LayerRefusal {
  layer: LayerName;
  message: string;
  outcome: RefusedOutcome | null;
}

/** How the writer is set up beyond the browser's API and limits. */
export interface RuleWriterOptions {
  /** Room each layer named here is counted at, at least, when the others are fitted. */
  reserves?: Partial<Record<LayerName, DnrUsage>>;
  /** The refusals changed (kept by the caller across restarts; see restoreRefusals). */
  refusalsChanged?(refusals: LayerRefusal[]): void;
  /** Where the record of the dynamic layers is kept (none: the store is read at every start). */
  ledger?: LedgerStore;
}

interface Candidate {
  rules: ExtRule[];
  /** null: the whole set asked for. */
  without: string | null;
  /** The whole set's note of what it leaves out (DnrPartialError), if anything. */
  partial: string | null;
}

interface Pending {
  /** The whole set first, then the planner's fallbacks, smallest last. */
  candidates: Candidate[];
  waiters: { resolve(): void; reject(e: unknown): void }[];
}

/** What a batch chose to write for a layer, and the error its waiters get if not the whole set. */
interface Choice {
  rules: ExtRule[];
  error: Error | null;
}

const EMPTY: DnrUsage = { rules: 0, regexRules: 0, unsafeRules: 0 };

export class RuleWriter {
  /**
   * What the browser holds, per layer, in id order (null until read). A dynamic layer known only
   * by the ledger is in `recorded` instead, until the dynamic store is read in full.
   */
  private applied: Map<LayerName, ExtRule[]> | null = null;
  private readonly recorded: Ledger = new Map();
  private loading: Promise<Map<LayerName, ExtRule[]>> | null = null;
  private loadingDynamic: Promise<void> | null = null;
  /**
   * Dynamic updates begun so far (odd while one runs): a record computed across one describes
   * the store before it, and is dropped (a full read's record runs outside the batches).
   */
  private dynamicWrites = 0;
  /** Stale rules found at load (outside every range): removed by the first batch. */
  private stale: { dynamic: number[]; session: number[] } = { dynamic: [], session: [] };
  private readonly pending = new Map<LayerName, Pending>();
  private readonly problems = new Map<LayerName, Error>();
  private queue: Promise<void> = Promise.resolve();
  private scheduled = false;
  /** Browser updates sent (tests: batching and skipped no-op writes). */
  updates = 0;
  /** Reads of the whole dynamic store (tests: a wake with a ledger reads none). */
  dynamicReads = 0;

  /** Layers written since this writer started (their refusals are this run's, not restored). */
  private readonly written = new Set<LayerName>();

  constructor(
    private readonly api: DnrRulesApi,
    private readonly limits: DnrLimits = RUNTIME_LIMITS,
    private readonly options: RuleWriterOptions = {},
  ) {}

  /**
   * Declares every rule of `layer` (ids are assigned here: the i-th gets the layer's base + i).
   * Resolves once the browser holds them. When they do not fit (DnrBudgetError) or Chromium
   * refuses them (DnrRefusedError), the first of `fallbacks` that fits is written instead, else
   * the layer keeps those of its rules still in `rules`; the error says which.
   */
  setLayer(
    layer: LayerName,
    rules: readonly RuleBody[],
    fallbacks: readonly LayerFallback[] = [],
    /** What `rules` leave out of the planner's input, if anything (reported, not refused). */
    partial: string | null = null,
  ): Promise<void> {
    const { base } = LAYERS[layer];
    const numbered = (set: readonly RuleBody[]) =>
      set.map((r, i) => ({ ...withoutId(r), id: base + i }));
    const candidates: Candidate[] = [{ rules: numbered(rules), without: null, partial }];
    for (const f of fallbacks)
      candidates.push({ rules: numbered(f.rules), without: f.without, partial: null });
    return new Promise<void>((resolve, reject) => {
      const p = this.pending.get(layer) ?? { candidates: [], waiters: [] };
      p.candidates = candidates;
      p.waiters.push({ resolve, reject });
      this.pending.set(layer, p);
      this.schedule();
    });
  }

  /** The rules the browser holds for `layer` now, with their ids (after the batches queued so far). */
  async rules(layer: LayerName): Promise<ExtRule[]> {
    await this.idle();
    const applied = await this.load();
    // A recorded layer is read (loadDynamic fills the same map).
    if (this.recorded.has(layer)) await this.loadDynamic();
    return [...(applied.get(layer) ?? [])];
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
    for (const name of LAYER_NAMES) {
      if (name === layer) continue;
      const rules = this.pending.get(name)?.candidates[0].rules ?? applied.get(name);
      if (rules !== undefined) others.set(name, rules);
      else if (!this.recorded.has(name)) others.set(name, []);
    }
    // The layer itself counts for nothing here, whether read or recorded.
    others.set(layer, []);
    return this.counted(others, layer);
  }

  /** `layers`' usage by store, each reserved layer but `fitting` counted at its reserve at least. */
  private counted(layers: Map<LayerName, readonly RuleBody[]>, fitting: LayerName): StoreUsage {
    const u = usageByStore(layers);
    for (const [name, record] of this.recorded)
      if (!layers.has(name)) addUsage(u[LAYERS[name].store], record.usage);
    for (const [name, reserve] of Object.entries(this.options.reserves ?? {}) as [
      LayerName,
      DnrUsage,
    ][]) {
      if (name === fitting) continue;
      const held = layers.has(name)
        ? usageOf(layers.get(name) ?? [])
        : (this.recorded.get(name)?.usage ?? EMPTY);
      const s = u[LAYERS[name].store];
      s.rules += Math.max(0, reserve.rules - held.rules);
      s.regexRules += Math.max(0, reserve.regexRules - held.regexRules);
      s.unsafeRules += Math.max(0, reserve.unsafeRules - held.unsafeRules);
    }
    return u;
  }

  /** Why the layer's last declared rules are not in force, if they are not. */
  problem(layer: LayerName): string | undefined {
    return this.problems.get(layer)?.message;
  }

  /** Every layer whose last declared rules are not all in force: why, and what was written. */
  refusals(): { layer: LayerName; message: string; outcome: RefusedOutcome | null }[] {
    return [...this.problems].map(([layer, e]) => ({
      layer,
      message: e.message,
      outcome:
        e instanceof DnrBudgetError ||
        e instanceof DnrRefusedError ||
        e instanceof DnrPartialError ||
        e instanceof RestoredRefusal
          ? e.outcome
          : null,
    }));
  }

  /**
   * The refusals a previous run of the worker left (the rules it wrote outlive it): kept for the
   * layers this run has not written yet.
   */
  restoreRefusals(refusals: readonly LayerRefusal[]): void {
    let restored = false;
    for (const r of refusals)
      if (!this.written.has(r.layer) && !this.problems.has(r.layer)) {
        this.problems.set(r.layer, new RestoredRefusal(r));
        restored = true;
      }
    // A batch written before they were read stored its own alone: store them all again.
    if (restored && this.written.size > 0) this.options.refusalsChanged?.(this.refusals());
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

  /**
   * What the browser holds: the session store read, and the dynamic one too unless the ledger
   * says what each of its layers holds (then they are in `recorded`).
   */
  private load(): Promise<Map<LayerName, ExtRule[]>> {
    if (this.applied !== null) return Promise.resolve(this.applied);
    this.loading ??= (async () => {
      const ledger = this.options.ledger;
      const [session, stored] = await Promise.all([
        this.api.getSessionRules(),
        ledger === undefined ? null : ledger.read().catch(() => null),
      ]);
      const recorded = parseLedger(stored);
      const dynamic = recorded === null ? await this.readDynamic() : [];
      const applied = new Map<LayerName, ExtRule[]>();
      this.stale = {
        dynamic: this.place(applied, 'dynamic', dynamic),
        session: this.place(applied, 'session', session),
      };
      for (const [name, record] of recorded ?? []) this.recorded.set(name, record);
      this.applied = applied;
      if (recorded === null) await this.keepLedger();
      return applied;
    })();
    // A failed read is tried again by the next caller.
    this.loading.catch(() => (this.loading = null));
    return this.loading;
  }

  /** Reads the dynamic layers known only by the ledger (before any of them is written). */
  private loadDynamic(): Promise<void> {
    this.loadingDynamic ??= (async () => {
      const applied = await this.load();
      if (this.recorded.size === 0) return;
      const dynamic = await this.readDynamic();
      const read = new Map<LayerName, ExtRule[]>();
      this.stale.dynamic = this.place(read, 'dynamic', dynamic);
      for (const name of this.recorded.keys()) applied.set(name, read.get(name) ?? []);
      this.recorded.clear();
      await this.keepLedger();
    })();
    this.loadingDynamic.catch(() => (this.loadingDynamic = null));
    return this.loadingDynamic;
  }

  private readDynamic(): Promise<ExtRule[]> {
    this.dynamicReads++;
    return this.api.getDynamicRules();
  }

  /** Files `rules` of `store` by layer into `into`; returns the ids outside every range. */
  private place(into: Map<LayerName, ExtRule[]>, store: RuleStore, rules: ExtRule[]): number[] {
    const stale: number[] = [];
    for (const r of [...rules].sort((a, b) => a.id - b.id)) {
      const layer = layerOf(store, r.id);
      const foreign =
        store === 'session' && r.id >= OPEN_OVER_HTTP_IDS.base && r.id < OPEN_OVER_HTTP_IDS.limit;
      if (foreign) continue;
      if (layer === null) stale.push(r.id);
      else if (into.has(layer)) into.get(layer)?.push(r);
      else into.set(layer, [r]);
    }
    return stale;
  }

  /**
   * Records what every dynamic layer holds, once all are read and none is stale (a later wake
   * would not remove a stale rule); a failure only costs the next start a full read.
   */
  private async keepLedger(): Promise<void> {
    const ledger = this.options.ledger;
    const applied = this.applied;
    const writes = this.dynamicWrites;
    if (ledger === undefined || applied === null) return;
    if (this.stale.dynamic.length > 0 || writes % 2 === 1) return;
    try {
      // Layers still known by their record alone are as recorded.
      const layers = DYNAMIC_LAYERS.map(
        (name) => [name, this.recorded.get(name) ?? applied.get(name) ?? []] as const,
      );
      const record: Ledger = new Map();
      for (const [name, held] of layers)
        record.set(name, Array.isArray(held) ? await recordOf(name, held) : held);
      // Storage keeps the order of calls: a removal sent after this check lands after it.
      if (this.dynamicWrites !== writes) return;
      await ledger.write(record);
    } catch (e) {
      console.warn('httpsify: the record of the DNR rules was not kept', e);
    }
  }

  /** Writes every pending layer (or what of it fits), in one update per store. */
  private async flush(): Promise<void> {
    const batch = new Map(this.pending);
    this.pending.clear();
    let applied: Map<LayerName, ExtRule[]>;
    /**
     * Dynamic layers declared as the ledger says they are held: nothing to write. Other recorded
     * layers are written whole over the ids they hold, unread.
     */
    const unchanged = new Set<LayerName>();
    try {
      applied = await this.load();
      for (const [layer, p] of batch) {
        const record = this.recorded.get(layer);
        if (
          record !== undefined &&
          (await fingerprint(p.candidates[0].rules)) === record.fingerprint
        )
          unchanged.add(layer);
      }
    } catch (e) {
      for (const p of batch.values()) for (const w of p.waiters) w.reject(e);
      return;
    }
    // Choose layers one by one, in layout order, each against the sum of what is chosen so far.
    const next = new Map(applied);
    const chosen = new Map<LayerName, Choice>();
    for (const layer of LAYER_NAMES) {
      const p = batch.get(layer);
      if (p === undefined) continue;
      if (unchanged.has(layer)) {
        // Held as asked; what the set leaves out is still out.
        const { partial } = p.candidates[0];
        const error = partial === null ? null : new DnrPartialError(layer, { partial });
        this.settle(layer, p, { rules: [], error });
        continue;
      }
      if (this.recorded.has(layer) && !p.candidates.some((c) => this.fits(layer, c.rules, next))) {
        // It keeps part of its old rules: read them (and every recorded layer with them).
        try {
          await this.loadDynamic();
        } catch (e) {
          for (const w of p.waiters) w.reject(e);
          continue;
        }
        for (const name of DYNAMIC_LAYERS)
          if (!chosen.has(name) && !next.has(name)) next.set(name, applied.get(name) ?? []);
      }
      const choice = this.fit(layer, p.candidates, next, applied.get(layer) ?? []);
      next.set(layer, choice.rules);
      chosen.set(layer, choice);
    }
    try {
      await this.write(applied, next, [...chosen.keys()]);
    } catch {
      // Chromium refused the batch whole: write the layers one at a time, to tell whose it was.
      for (const [layer, choice] of chosen) {
        try {
          await this.write(applied, new Map(applied).set(layer, choice.rules), [layer]);
        } catch (e) {
          chosen.set(
            layer,
            await this.afterRefusal(layer, batch.get(layer) as Pending, e, applied),
          );
        }
      }
    }
    for (const [layer, choice] of chosen) this.settle(layer, batch.get(layer) as Pending, choice);
    this.options.refusalsChanged?.(this.refusals());
  }

  /** The layer holds `choice` now: its problem, and its waiters' answer. */
  private settle(layer: LayerName, p: Pending, choice: Choice): void {
    this.written.add(layer);
    if (choice.error === null) this.problems.delete(layer);
    else this.problems.set(layer, choice.error);
    // A partial set is in force as asked: its note is for the options page, not the caller.
    for (const w of p.waiters)
      if (choice.error === null || choice.error instanceof DnrPartialError) w.resolve();
      else w.reject(choice.error);
  }

  /** The first candidate that fits beside `next`, else what of `held` is still asked for. */
  private fit(
    layer: LayerName,
    candidates: Candidate[],
    next: Map<LayerName, ExtRule[]>,
    held: ExtRule[],
  ): Choice {
    let over: string[] = [];
    for (const c of candidates) {
      const o = this.over(layer, c.rules, next);
      if (o.length === 0)
        return {
          rules: c.rules,
          error:
            c.without !== null
              ? new DnrBudgetError(layer, over, { without: c.without })
              : c.partial !== null
                ? new DnrPartialError(layer, { partial: c.partial })
                : null,
        };
      if (over.length === 0) over = o;
    }
    // A subset of what the layer held beside the same layers' rules (or fewer): it fits.
    return { rules: upgradesOf(held, candidates[0].rules), error: new DnrBudgetError(layer, over) };
  }

  /** What `rules` in `layer` beside `next` would break (nothing: they fit). */
  private over(
    layer: LayerName,
    rules: readonly RuleBody[],
    next: Map<LayerName, readonly RuleBody[]>,
  ): string[] {
    const { base, limit } = LAYERS[layer];
    if (rules.length > limit - base)
      return [`${rules.length} rules > ${limit - base} ids of the layer`];
    return overLimits(this.counted(new Map(next).set(layer, rules), layer), this.limits);
  }

  private fits(
    layer: LayerName,
    rules: readonly RuleBody[],
    next: Map<LayerName, readonly RuleBody[]>,
  ): boolean {
    return this.over(layer, rules, next).length === 0;
  }

  /** Chromium refused `layer`'s chosen rules: its fallbacks in turn, else what still holds. */
  private async afterRefusal(
    layer: LayerName,
    p: Pending,
    refusal: unknown,
    applied: Map<LayerName, ExtRule[]>,
  ): Promise<Choice> {
    const reason = refusal instanceof Error ? refusal.message : String(refusal);
    for (const { rules, without } of p.candidates) {
      if (without === null) continue;
      const trial = new Map(applied).set(layer, rules);
      if (!this.fits(layer, rules, applied)) continue;
      try {
        await this.write(applied, trial, [layer]);
        return { rules, error: new DnrRefusedError(layer, reason, { without }) };
      } catch {
        // The same rule may be in the smaller set too: try the next.
      }
    }
    // What it keeps are its old rules: read them (a failure to read is the caller's error).
    if (this.recorded.has(layer)) await this.loadDynamic();
    const kept = upgradesOf(applied.get(layer) ?? [], p.candidates[0].rules);
    try {
      await this.write(applied, new Map(applied).set(layer, kept), [layer]);
    } catch (e) {
      // Only removals, of rules Chromium took before: refused only if the browser is failing.
      console.error(`httpsify: the ${layer} rules could not be reduced either`, e);
    }
    return { rules: kept, error: new DnrRefusedError(layer, reason, 'kept-upgrades') };
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
      // A layer known by its record alone: every id it holds is replaced (unknown, null).
      const record = this.recorded.get(layer);
      const before = new Map<number, string | null>(
        record === undefined
          ? (from.get(layer) ?? []).map((r) => [r.id, ruleKey(withoutId(r))])
          : idsBetween(LAYERS[layer].base, record.end).map((id) => [id, null]),
      );
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
      if (store === 'dynamic') {
        // No record while the store changes: a worker stopped meanwhile leaves the next start
        // none, so it reads the store. Not removed, the update is not sent either (a record of
        // the old store would hide it from the next start): the layer's write fails as refused.
        this.dynamicWrites++;
        try {
          await this.options.ledger?.write(null);
        } catch (e) {
          this.dynamicWrites++;
          throw e;
        }
        try {
          await this.api.updateDynamicRules(u);
        } catch (e) {
          // Refused whole, the store is as it was: recorded again as such.
          this.dynamicWrites++;
          await this.keepLedger();
          throw e;
        }
        this.dynamicWrites++;
      } else await this.api.updateSessionRules(u);
      this.updates++;
      this.stale[store] = [];
      // Written: this store's layers now hold what was asked (a later store may still fail).
      for (const layer of layers)
        if (LAYERS[layer].store === store) {
          from.set(layer, to.get(layer) ?? []);
          this.recorded.delete(layer);
        }
      if (store === 'dynamic') await this.keepLedger();
    }
    for (const layer of layers) from.set(layer, to.get(layer) ?? []);
  }
}

/**
 * What a layer keeps when nothing asked for fits: of its old rules, the scheme upgrades (they
 * keep host and path: stricter at worst) and the redirects still asked for. Never an `allow`
 * (it may be taken back, or kept without the rule it was an exception to), nor a redirect no
 * longer asked for (it may send elsewhere: a bundle no longer trusted, a rule removed).
 */
function upgradesOf(held: readonly ExtRule[], asked: readonly RuleBody[]): ExtRule[] {
  const wanted = new Set(asked.map((r) => ruleKey(withoutId(r))));
  return held.filter(
    (r) =>
      r.action.type === 'upgradeScheme' ||
      (r.action.type === 'redirect' && wanted.has(ruleKey(withoutId(r)))),
  );
}

/** A refusal read back from storage at a worker's start. */
class RestoredRefusal extends Error {
  readonly outcome: RefusedOutcome | null;
  constructor(r: LayerRefusal) {
    super(r.message);
    this.outcome = r.outcome;
  }
}

function idsBetween(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}

function withoutId(r: RuleBody & { id?: number }): RuleBody {
  const { id: _id, ...body } = r;
  return body;
}

function usageByStore(layers: Map<LayerName, readonly RuleBody[]>): StoreUsage {
  const out: StoreUsage = { dynamic: { ...EMPTY }, session: { ...EMPTY } };
  for (const [layer, rules] of layers) addUsage(out[LAYERS[layer].store], usageOf(rules));
  return out;
}

function addUsage(to: DnrUsage, u: DnrUsage): void {
  to.rules += u.rules;
  to.regexRules += u.regexRules;
  to.unsafeRules += u.unsafeRules;
}
