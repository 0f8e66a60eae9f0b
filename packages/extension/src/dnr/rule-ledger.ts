/**
 * The rule writer's record of the dynamic store (Chromium), so that a worker that wakes need not
 * read the whole store to learn that nothing changed: with the 2018 library's 25,000 rules
 * `getDynamicRules()` takes about a second, and every other extension call (storage, the
 * handoff's answer) waits behind it (issue 43).
 *
 * It lives in storage.session, which Chromium clears when it may load the dynamic rules anew: a
 * browser restart, an update or a reload of the extension. The first worker after each reads the
 * store in full; the record is removed before every dynamic update and written after it, so a
 * worker stopped in between leaves none, and the next start reads the store again.
 */
import { LAYER_NAMES, LAYERS, type LayerName } from './layout.js';
import { type DnrUsage, type ExtRule, ruleKey, usageOf } from './rules.js';
import type { StorageArea } from '../platform/browser-api.js';

/**
 * What the browser holds in one dynamic layer: a digest of its rules, what they use, and one
 * past its highest id (its base when empty). The ids are not all taken: a layer that kept only
 * its upgrades after a refusal has gaps, so a layer rewritten unread removes every id up to it.
 */
export interface LayerRecord {
  fingerprint: string;
  usage: DnrUsage;
  end: number;
}

/** A record of every dynamic layer (an empty layer included). */
export type Ledger = Map<LayerName, LayerRecord>;

/** Where the ledger is kept (storage.session in the worker; memory in tests). */
export interface LedgerStore {
  read(): Promise<unknown>;
  /** null: remove it. */
  write(ledger: Ledger | null): Promise<void>;
}

const VERSION = 2;

/** storage.session key of the ledger. */
export const LEDGER_KEY = 'dnrLedger';

export const DYNAMIC_LAYERS = LAYER_NAMES.filter((n) => LAYERS[n].store === 'dynamic');

/** The ledger kept under `key` of `area`. */
export function ledgerIn(area: StorageArea, key: string): LedgerStore {
  return {
    read: async () => (await area.get([key]))[key],
    write: (ledger) =>
      ledger === null ? area.remove(key) : area.set({ [key]: ledgerValue(ledger) }),
  };
}

function ledgerValue(ledger: Ledger): unknown {
  return { version: VERSION, layers: Object.fromEntries(ledger) };
}

/** A stored ledger, or null when it is missing or not exactly of this shape (read in full then). */
export function parseLedger(value: unknown): Ledger | null {
  if (!isObject(value) || value['version'] !== VERSION || !isObject(value['layers'])) return null;
  const layers = value['layers'];
  if (Object.keys(layers).length !== DYNAMIC_LAYERS.length) return null;
  const ledger: Ledger = new Map();
  for (const name of DYNAMIC_LAYERS) {
    const r = layers[name];
    if (!isObject(r) || typeof r['fingerprint'] !== 'string' || !isObject(r['usage'])) return null;
    const u = r['usage'];
    const counts = [u['rules'], u['regexRules'], u['unsafeRules']];
    if (!counts.every((c) => typeof c === 'number' && Number.isSafeInteger(c) && c >= 0))
      return null;
    const [rules, regexRules, unsafeRules] = counts as number[];
    const end = r['end'];
    const { base, limit } = LAYERS[name];
    if (typeof end !== 'number' || !Number.isSafeInteger(end) || end < base + rules || end > limit)
      return null;
    const usage = { rules, regexRules, unsafeRules };
    ledger.set(name, { fingerprint: r['fingerprint'], usage, end });
  }
  return ledger;
}

/** The record of `layer` holding `rules`. */
export async function recordOf(layer: LayerName, rules: readonly ExtRule[]): Promise<LayerRecord> {
  const end = rules.reduce<number>((e, r) => Math.max(e, r.id + 1), LAYERS[layer].base);
  return { fingerprint: await fingerprint(rules), usage: usageOf(rules), end };
}

const digests = new WeakMap<readonly ExtRule[], Promise<string>>();

/**
 * A digest of a layer's rules with their ids, the same for the rules declared and for the same
 * rules read back from the browser (keys in any order).
 */
export function fingerprint(rules: readonly ExtRule[]): Promise<string> {
  let d = digests.get(rules);
  if (d === undefined) {
    const text = rules.map((r) => `${r.id} ${ruleKey(withoutId(r))}`).join('\n');
    d = crypto.subtle
      .digest('SHA-256', new TextEncoder().encode(text))
      .then((bytes) =>
        [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join(''),
      );
    digests.set(rules, d);
  }
  return d;
}

function withoutId(r: ExtRule): Omit<ExtRule, 'id'> {
  const { id: _id, ...body } = r;
  return body;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
