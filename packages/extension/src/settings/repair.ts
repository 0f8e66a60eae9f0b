import {
  CHANNEL_FORMAT,
  parseChannelDefinition,
  type ChannelDefinition,
} from '@httpsify/engine/channels';
import { channelNameProblem } from './channel-name.js';
import { parseSitePattern } from '../site-rules/site-pattern.js';
import {
  defaultSettings,
  MAX_HTTP_HOSTS,
  MAX_REPAIRS,
  SCHEMA_VERSION,
  SETTING_KEYS,
  type RepairRecord,
  type Settings,
  type UserRule,
} from './schema.js';

export interface RepairResult {
  settings: Settings;
  /** Keys whose stored value differs from `settings` and must be written back. */
  changed: (keyof Settings)[];
  records: RepairRecord[];
}

type Checker<T> = (value: unknown, note: (problem: string, original: unknown) => void) => T;

const bool =
  (fallback: boolean): Checker<boolean> =>
  (v, note) => {
    if (typeof v === 'boolean') return v;
    // Old stores kept "true"/"false" strings; read them the way they were meant.
    if (v === 'true' || v === 'false') return v === 'true';
    note('not a boolean', v);
    return fallback;
  };

function record(v: unknown, note: (p: string, o: unknown) => void): Record<string, unknown> | null {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  note('not an object', v);
  return null;
}

function list(v: unknown, note: (p: string, o: unknown) => void): unknown[] | null {
  if (Array.isArray(v)) return v;
  note('not a list', v);
  return null;
}

const sites: Checker<string[]> = (v, note) => {
  const out: string[] = [];
  for (const entry of list(v, note) ?? []) {
    const p = typeof entry === 'string' ? parseSitePattern(entry) : null;
    if (p === null) note('not a host, host:port or *.domain', entry);
    else if (!out.includes(p.text)) out.push(p.text);
  }
  return out.sort();
};

const CHECKERS: { [K in keyof Settings]: Checker<Settings[K]> } = {
  schemaVersion: () => SCHEMA_VERSION,
  globalEnabled: bool(true),
  httpsFirst: bool(true),
  mixedContent: bool(false),
  showBadge: bool(true),
  rulesetOverrides: (v, note) => {
    const r = record(v, note);
    const out: Record<string, boolean> = {};
    for (const [name, on] of Object.entries(r ?? {})) {
      if (typeof on === 'boolean') out[name] = on;
      else if (on === 'true' || on === 'false') out[name] = on === 'true';
      else note(`override for "${name}" is not a boolean`, on);
    }
    return out;
  },
  disabledSites: sites,
  httpAllowedSites: sites,
  userRules: (v, note) => {
    const out: UserRule[] = [];
    for (const r of list(v, note) ?? []) {
      const o = r as Partial<UserRule> | null;
      if (
        typeof o !== 'object' ||
        o === null ||
        typeof o.name !== 'string' ||
        typeof o.xml !== 'string' ||
        o.name === ''
      )
        note('not a user rule', r);
      else if (out.some((x) => x.name === o.name)) note(`duplicate user rule "${o.name}"`, r);
      else out.push({ name: o.name, xml: o.xml });
    }
    return out;
  },
  // Settings keep definitions as parsed, without their "format" (always CHANNEL_FORMAT there).
  channels: (v, note) => {
    const out: ChannelDefinition[] = [];
    for (const [i, item] of (list(v, note) ?? []).entries()) {
      let channel: ChannelDefinition;
      try {
        channel = parseChannelDefinition(withFormat(item));
      } catch (err) {
        note(err instanceof Error ? err.message : String(err), item);
        continue;
      }
      // The name keys the channel's stored state and is how the user tells channels apart.
      const problem = channelNameProblem(
        channel.name,
        out.map((c) => c.name),
      );
      if (problem !== null)
        note(`channel ${i + 1} (${JSON.stringify(channel.name)}): ${problem}`, item);
      else out.push(channel);
    }
    return out;
  },
  stats: (v, note) => {
    const r = record(v, note) ?? {};
    const count = (k: string): number => {
      const n = r[k];
      if (n === undefined) return 0;
      if (typeof n === 'number' && Number.isFinite(n) && n >= 0) return Math.floor(n);
      note(`stats.${k} is not a count`, n);
      return 0;
    };
    const hosts = Array.isArray(r.httpHosts)
      ? r.httpHosts.filter((h): h is string => typeof h === 'string').slice(-MAX_HTTP_HOSTS)
      : [];
    return { upgrades: count('upgrades'), fallbacks: count('fallbacks'), httpHosts: hosts };
  },
  portalProbeUrl: (v, note) => {
    if (typeof v === 'string' && /^https?:\/\/[^/]/.test(v)) return v;
    note('not an http(s) URL', v);
    return defaultSettings().portalProbeUrl;
  },
  repairs: (v) =>
    Array.isArray(v)
      ? v.filter(
          (r): r is RepairRecord =>
            typeof r === 'object' && r !== null && typeof (r as RepairRecord).key === 'string',
        )
      : [],
};

/** Settings as read from storage or built by a change: any key may hold anything. */
export type StoredSettings = { readonly [K in keyof Settings]?: unknown };

/**
 * Validates every setting. A damaged value is replaced by the best salvage (bad list items and
 * map entries dropped one by one, else the default) and the rejected value is recorded in
 * `repairs` so the options page can show it; nothing is wiped silently.
 */
export function repairSettings(raw: StoredSettings, now = Date.now()): RepairResult {
  const settings = defaultSettings();
  const changed: (keyof Settings)[] = [];
  const records: RepairRecord[] = [];
  for (const key of SETTING_KEYS) {
    if (!(key in raw) || raw[key] === undefined) {
      if (key === 'schemaVersion') changed.push(key);
      continue;
    }
    const notes: RepairRecord[] = [];
    const note = (problem: string, original: unknown): void => {
      notes.push({ key, problem, original: safeJson(original), at: now });
    };
    const value = repairInto(settings, key, raw[key], note);
    if (notes.length > 0 || JSON.stringify(value) !== JSON.stringify(raw[key])) changed.push(key);
    records.push(...notes);
  }
  if (records.length > 0) {
    settings.repairs = [...settings.repairs, ...records].slice(-MAX_REPAIRS);
    if (!changed.includes('repairs')) changed.push('repairs');
  }
  return { settings, changed, records };
}

/** Stores the checked value of one setting; its checker gives the key's own type. */
function repairInto<K extends keyof Settings>(
  settings: Settings,
  key: K,
  raw: unknown,
  note: (problem: string, original: unknown) => void,
): Settings[K] {
  const value = CHECKERS[key](raw, note);
  settings[key] = value;
  return value;
}

function safeJson(v: unknown): string {
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.slice(0, 4000);
  } catch {
    return String(v);
  }
}

/** Checks one value for a key (imports, messages from pages): the repaired value and problems. */
export function checkSetting<K extends keyof Settings>(
  key: K,
  value: unknown,
): { value: Settings[K]; problems: string[] } {
  const problems: string[] = [];
  const v = (CHECKERS[key] as Checker<Settings[K]>)(value, (p) => problems.push(p));
  return { value: v, problems };
}

/** A stored definition gets its format back; a format 1 one (with "publicKey") is left to be refused with its own message. */
function withFormat(item: unknown): unknown {
  if (
    typeof item !== 'object' ||
    item === null ||
    Array.isArray(item) ||
    'format' in item ||
    'publicKey' in item
  )
    return item;
  return { format: CHANNEL_FORMAT, ...item };
}
