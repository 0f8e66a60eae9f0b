import { SCHEMA_VERSION, type RepairRecord } from './schema.js';
import { simpleRuleXml } from './user-rules.js';

export interface MigrationResult {
  values: Record<string, unknown>;
  /** Keys to delete from storage: old names whose data moved to new keys. */
  removed: string[];
  /** Old data that could not be converted, kept for the user to see. */
  notes: RepairRecord[];
  from: number;
}

type Step = (
  values: Record<string, unknown>,
  removed: Set<string>,
  notes: RepairRecord[],
  now: number,
) => void;

/**
 * Version 0 is storage without `schemaVersion`: either the first background build (which wrote
 * only `rulesetOverrides`) or settings carried over from HTTPS Everywhere (its key names:
 * `ruleActiveStates`, `disabledList`, `httpNowhere`, `enableMixedRulesets`, `userRules` in the
 * 2018 `{host, urlMatcher, redirectTo}` or the later JSON-ruleset form).
 */
const from0: Step = (v, removed, notes, now) => {
  const moved = (oldKey: string, newKey: string, convert: (x: unknown) => unknown): void => {
    if (!(oldKey in v)) return;
    if (!(newKey in v)) v[newKey] = convert(v[oldKey]);
    delete v[oldKey];
    removed.add(oldKey);
  };
  if (
    v.ruleActiveStates !== undefined &&
    typeof v.ruleActiveStates === 'object' &&
    v.ruleActiveStates !== null
  ) {
    // Old overrides merge under ours; ours win where both exist.
    const ours =
      typeof v.rulesetOverrides === 'object' && v.rulesetOverrides !== null
        ? (v.rulesetOverrides as Record<string, unknown>)
        : {};
    v.rulesetOverrides = { ...(v.ruleActiveStates as Record<string, unknown>), ...ours };
    delete v.ruleActiveStates;
    removed.add('ruleActiveStates');
  }
  moved('disabledList', 'disabledSites', (x) => x);
  moved('httpNowhere', 'httpsFirst', (x) => x);
  moved('enableMixedRulesets', 'mixedContent', (x) => x);
  if (Array.isArray(v.userRules)) {
    v.userRules = v.userRules.flatMap((r: unknown) => {
      const converted = convertLegacyUserRule(r);
      if (converted !== null) return [converted];
      notes.push({
        key: 'userRules',
        problem: 'an HTTPS Everywhere user rule could not be converted',
        original: JSON.stringify(r).slice(0, 4000),
        at: now,
      });
      return [];
    });
  }
};

function convertLegacyUserRule(r: unknown): { name: string; xml: string } | null {
  if (typeof r !== 'object' || r === null) return null;
  const o = r as Record<string, unknown>;
  // Already ours.
  if (typeof o.name === 'string' && typeof o.xml === 'string') return { name: o.name, xml: o.xml };
  // 2018: {host, urlMatcher, redirectTo}.
  if (
    typeof o.host === 'string' &&
    typeof o.urlMatcher === 'string' &&
    typeof o.redirectTo === 'string'
  ) {
    return {
      name: `User rule: ${o.host}`,
      xml: simpleRuleXml({ host: o.host, from: o.urlMatcher, to: o.redirectTo }),
    };
  }
  // 2019+: {name, target: [host], rule: [{from, to}]}.
  if (typeof o.name === 'string' && Array.isArray(o.target) && Array.isArray(o.rule)) {
    const host = o.target[0];
    const first = o.rule[0] as { from?: unknown; to?: unknown } | undefined;
    if (
      typeof host === 'string' &&
      typeof first?.from === 'string' &&
      typeof first.to === 'string'
    ) {
      return {
        name: `User rule: ${host}`,
        xml: simpleRuleXml({ host, from: first.from, to: first.to }),
      };
    }
  }
  return null;
}

/** Keys only old layouts used: read alongside the settings so the steps above can convert them. */
export const LEGACY_KEYS = [
  'ruleActiveStates',
  'disabledList',
  'httpNowhere',
  'enableMixedRulesets',
] as const;

/** Steps by the version they upgrade from. */
const STEPS: Step[] = [from0];

/** Brings raw stored values up to SCHEMA_VERSION. Newer versions than ours are left alone. */
export function migrate(raw: Record<string, unknown>, now = Date.now()): MigrationResult {
  const values = { ...raw };
  const stored = values.schemaVersion;
  const from = typeof stored === 'number' && Number.isInteger(stored) && stored >= 0 ? stored : 0;
  const removed = new Set<string>();
  const notes: RepairRecord[] = [];
  for (let v = from; v < SCHEMA_VERSION; v++) (STEPS[v] as Step)(values, removed, notes, now);
  if (from < SCHEMA_VERSION) values.schemaVersion = SCHEMA_VERSION;
  return { values, removed: [...removed], notes, from };
}
