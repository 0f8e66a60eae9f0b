import { createEngine } from '@httpsify/engine';
import { channelNameKey } from '../channels/channel-name.js';
import { parseSitePattern } from '../site-rules/site-pattern.js';
import { checkSetting } from './repair.js';
import { EXPORTED_KEYS, type ExportedKey, SCHEMA_VERSION, type Settings } from './schema.js';
import { summariseUserRule, type UserRuleSummary } from './user-rule-summary.js';
import { toUserRule } from './user-rules.js';

/**
 * The settings file (export and import). Import is all or nothing: the whole file is checked
 * first, any problem refuses it whole, the user sees what would change (and confirms every
 * update channel and every user rule it would add or change, since both decide what sites they
 * are sent to: a user rule outranks every ruleset and has no destination check), and the result
 * is applied in one settings write.
 */
export const EXPORT_FORMAT = 'httpsify-settings';
/** Far above any real export (24k overrides are ~1 MB); bounds the work a hostile file can cause. */
export const MAX_IMPORT_CHARS = 8 * 1024 * 1024;
/** A settings file is four levels deep; channel definitions add two. */
export const MAX_IMPORT_DEPTH = 12;
const MAX_LIST = 50_000;
const MAX_USER_RULES = 2_000;
/** Names that would reach an object's prototype chain if ever used as a plain key. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const TOP_KEYS = new Set(['format', 'schemaVersion', 'exportedAt', 'settings']);
const FLAG_KEYS = ['globalEnabled', 'httpsFirst', 'mixedContent', 'showBadge'] as const;
type FlagKey = (typeof FLAG_KEYS)[number];

/** The settings a file carries, every value checked and in stored form. */
export type ImportValues = Partial<Pick<Settings, ExportedKey>>;

export type ParsedImport = { ok: true; values: ImportValues } | { ok: false; problems: string[] };

export function exportSettingsFile(settings: Settings, now = new Date()): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of EXPORTED_KEYS) out[k] = settings[k];
  return { format: EXPORT_FORMAT, schemaVersion: SCHEMA_VERSION, exportedAt: now.toISOString(), settings: out };
}

/** Parses and checks a settings file's text; every problem found is reported, not just the first. */
export function parseSettingsFile(text: unknown): ParsedImport {
  if (typeof text !== 'string') return refuse('the file is not text');
  if (text.length > MAX_IMPORT_CHARS) return refuse(`the file is too large (${text.length} characters; at most ${MAX_IMPORT_CHARS})`);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return refuse(`the file is not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const shape = shapeProblem(data);
  if (shape !== null) return refuse(shape);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return refuse('not an httpsify settings file (expected a JSON object)');
  const top = data as Record<string, unknown>;
  if (top.format !== EXPORT_FORMAT)
    return refuse(`not an httpsify settings file ("format" is ${JSON.stringify(top.format) ?? 'missing'}, expected "${EXPORT_FORMAT}")`);
  const version = top.schemaVersion;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1)
    return refuse(`"schemaVersion" must be a whole number from 1 to ${SCHEMA_VERSION}, got ${JSON.stringify(version) ?? 'nothing'}`);
  if (version > SCHEMA_VERSION) return refuse(`the file was made by a newer httpsify (settings version ${version}; this one reads up to ${SCHEMA_VERSION})`);
  const problems: string[] = [];
  for (const k of Object.keys(top)) if (!TOP_KEYS.has(k)) problems.push(`unknown key ${JSON.stringify(k)} at the top of the file`);
  if (top.exportedAt !== undefined && typeof top.exportedAt !== 'string') problems.push('"exportedAt" is not a date text');
  const settings = top.settings;
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) return refuse(...problems, '"settings" must be an object');
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings as Record<string, unknown>)) {
    if (!(EXPORTED_KEYS as readonly string[]).includes(key)) {
      problems.push(`unknown setting ${JSON.stringify(key)}`);
      continue;
    }
    const checked = checkValue(key as ExportedKey, value);
    problems.push(...checked.problems.map((p) => `${key}: ${p}`));
    values[key] = checked.value;
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, values: values as ImportValues };
}

function refuse(...problems: string[]): ParsedImport {
  return { ok: false, problems };
}

/** Nesting depth and forbidden keys, checked without recursion (a hostile file may be deep). */
function shapeProblem(data: unknown): string | null {
  const stack: [unknown, number][] = [[data, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth > MAX_IMPORT_DEPTH) return `the file is nested deeper than ${MAX_IMPORT_DEPTH} levels`;
    if (Array.isArray(v)) {
      for (const item of v) stack.push([item, depth + 1]);
      continue;
    }
    for (const [k, item] of Object.entries(v)) {
      if (FORBIDDEN_KEYS.has(k)) return `the file contains the key ${JSON.stringify(k)}, which settings never use`;
      stack.push([item, depth + 1]);
    }
  }
  return null;
}

/** Stricter than the repair of stored data: nothing is coerced or salvaged, a problem refuses the file. */
function checkValue(key: ExportedKey, value: unknown): { value: unknown; problems: string[] } {
  if ((FLAG_KEYS as readonly string[]).includes(key)) {
    return typeof value === 'boolean' ? { value, problems: [] } : { value, problems: [`must be true or false, got ${describe(value)}`] };
  }
  switch (key) {
    case 'rulesetOverrides': {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return { value, problems: [`must be an object of ruleset names to true/false, got ${describe(value)}`] };
      const entries = Object.entries(value);
      if (entries.length > MAX_LIST) return { value, problems: [`has ${entries.length} entries (at most ${MAX_LIST})`] };
      const problems = entries
        .filter(([, on]) => typeof on !== 'boolean')
        .map(([name, on]) => `the switch for ${JSON.stringify(name)} must be true or false, got ${describe(on)}`);
      return { value: Object.fromEntries(entries), problems };
    }
    case 'disabledSites':
    case 'httpAllowedSites': {
      if (!Array.isArray(value)) return { value, problems: [`must be a list of sites, got ${describe(value)}`] };
      if (value.length > MAX_LIST) return { value, problems: [`has ${value.length} entries (at most ${MAX_LIST})`] };
      const problems = value
        .filter((e) => typeof e !== 'string' || parseSitePattern(e) === null)
        .map((e) => `${describe(e)} is not a host, host:port or *.domain`);
      return { value: checkSetting(key, value).value, problems };
    }
    case 'userRules':
      return checkUserRules(value);
    case 'channels': {
      if (!Array.isArray(value)) return { value, problems: [`must be a list of channel definitions, got ${describe(value)}`] };
      const checked = checkSetting('channels', value);
      return { value: checked.value, problems: checked.problems };
    }
    default:
      return { value, problems: ['cannot be imported'] };
  }
}

function checkUserRules(value: unknown): { value: unknown; problems: string[] } {
  if (!Array.isArray(value)) return { value, problems: [`must be a list of rules, got ${describe(value)}`] };
  if (value.length > MAX_USER_RULES) return { value, problems: [`has ${value.length} rules (at most ${MAX_USER_RULES})`] };
  const problems: string[] = [];
  const out: Settings['userRules'] = [];
  value.forEach((r: unknown, i) => {
    const where = `rule ${i + 1}`;
    const o = r as Record<string, unknown> | null;
    if (typeof o !== 'object' || o === null || Array.isArray(o) || typeof o.name !== 'string' || typeof o.xml !== 'string' || o.name === '') {
      problems.push(`${where} must have a "name" and an "xml" text, got ${describe(r)}`);
      return;
    }
    const extra = Object.keys(o).filter((k) => k !== 'name' && k !== 'xml');
    if (extra.length > 0) problems.push(`${where} (${JSON.stringify(o.name)}) has unknown fields ${extra.map((k) => JSON.stringify(k)).join(', ')}`);
    const checked = toUserRule(o.xml);
    if ('errors' in checked) {
      problems.push(`${where} (${JSON.stringify(o.name)}): ${checked.errors.map((d) => `line ${d.line}:${d.column} ${d.message}`).join('; ')}`);
      return;
    }
    if (checked.rule.name !== o.name) problems.push(`${where} is named ${JSON.stringify(o.name)} but its XML names it ${JSON.stringify(checked.rule.name)}`);
    try {
      // The engine's own guards (regex safety) must accept it, as when the user saves a rule.
      createEngine([checked.ruleset]);
    } catch (e) {
      problems.push(`${where} (${JSON.stringify(o.name)}): ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    if (out.some((x) => x.name === o.name)) problems.push(`two rules are named ${JSON.stringify(o.name)}`);
    else out.push({ name: o.name, xml: o.xml });
  });
  return { value: out, problems };
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** One setting the import would change, for the preview. */
export type ImportChange =
  | { key: FlagKey; kind: 'flag'; from: boolean; to: boolean }
  | { key: 'disabledSites' | 'httpAllowedSites' | 'userRules' | 'channels'; kind: 'list'; added: string[]; removed: string[]; changed: string[] }
  | { key: 'rulesetOverrides'; kind: 'overrides'; set: { name: string; on: boolean }[]; cleared: string[] };

/** A channel the file would add or redefine: applied only if the user confirms it by name. */
export interface ChannelToConfirm {
  name: string;
  urlPrefix: string;
  scope: string;
  replacesDefaults: boolean;
  /** True when a channel of this name exists with another definition. */
  replacing: boolean;
}

/** A user rule the file would add or replace, in plain words: applied only if the user confirms it by name. */
export interface UserRuleToConfirm extends UserRuleSummary {
  name: string;
  /** True when a user rule of this name exists with other contents. */
  replacing: boolean;
}

export interface ImportPlan {
  changes: ImportChange[];
  channels: ChannelToConfirm[];
  userRules: UserRuleToConfirm[];
}

/** What importing `values` over `current` changes (empty when the file matches the settings). */
export function planImport(values: ImportValues, current: Settings): ImportPlan {
  const changes: ImportChange[] = [];
  for (const key of FLAG_KEYS) {
    const to = values[key];
    if (to !== undefined && to !== current[key]) changes.push({ key, kind: 'flag', from: current[key], to });
  }
  if (values.rulesetOverrides !== undefined) {
    const next = values.rulesetOverrides;
    const set = Object.entries(next)
      .filter(([n, on]) => current.rulesetOverrides[n] !== on)
      .map(([name, on]) => ({ name, on }));
    const cleared = Object.keys(current.rulesetOverrides).filter((n) => !Object.hasOwn(next, n));
    if (set.length > 0 || cleared.length > 0) changes.push({ key: 'rulesetOverrides', kind: 'overrides', set, cleared });
  }
  for (const key of ['disabledSites', 'httpAllowedSites'] as const) {
    const next = values[key];
    if (next === undefined) continue;
    const added = next.filter((s) => !current[key].includes(s));
    const removed = current[key].filter((s) => !next.includes(s));
    if (added.length > 0 || removed.length > 0) changes.push({ key, kind: 'list', added, removed, changed: [] });
  }
  const userRules: UserRuleToConfirm[] = [];
  if (values.userRules !== undefined) {
    changes.push(...listChange('userRules', values.userRules, current.userRules, (r) => r.xml));
    for (const r of values.userRules) {
      const old = current.userRules.find((x) => x.name === r.name);
      if (old !== undefined && old.xml === r.xml) continue;
      const checked = toUserRule(r.xml);
      // parseSettingsFile accepted every rule; one that no longer parses says the worst.
      const summary: UserRuleSummary =
        'errors' in checked ? { targets: [], sendsTo: [{ kind: 'computed' }], leavesItsSites: true } : summariseUserRule(checked.ruleset);
      userRules.push({ name: r.name, replacing: old !== undefined, ...summary });
    }
  }
  const channels: ChannelToConfirm[] = [];
  if (values.channels !== undefined) {
    changes.push(...listChange('channels', values.channels, current.channels, (c) => JSON.stringify(c)));
    for (const c of values.channels) {
      const old = current.channels.find((x) => x.name === c.name);
      if (old !== undefined && JSON.stringify(old) === JSON.stringify(c)) continue;
      channels.push({ name: c.name, urlPrefix: c.urlPrefix, scope: c.scope, replacesDefaults: c.replacesDefaults, replacing: old !== undefined });
    }
  }
  return { changes, channels, userRules };
}

function listChange<T extends { name: string }>(key: 'userRules' | 'channels', next: T[], current: T[], body: (x: T) => string): ImportChange[] {
  const added = next.filter((x) => !current.some((c) => c.name === x.name)).map((x) => x.name);
  const removed = current.filter((c) => !next.some((x) => x.name === c.name)).map((c) => c.name);
  const changed = next.filter((x) => current.some((c) => c.name === x.name && body(c) !== body(x))).map((x) => x.name);
  return added.length + removed.length + changed.length > 0 ? [{ key, kind: 'list', added, removed, changed }] : [];
}

/**
 * Channels of the file that read the same as a channel the user has under another spelling
 * ("team rules " beside "Team rules"). A file's channel list replaces the current one and a
 * channel of exactly the same name is redefined (after confirmation); a look-alike would instead
 * pass for that redefinition while being a new channel, so it is refused. The file's own names
 * (unique, none the library's) are checked with the file (settings/repair.ts).
 */
export function channelNameClashes(values: ImportValues, current: Settings): string[] {
  const problems: string[] = [];
  values.channels?.forEach((channel, i) => {
    const key = channelNameKey(channel.name);
    const other = current.channels.find((c) => c.name !== channel.name && channelNameKey(c.name) === key);
    if (other !== undefined)
      problems.push(
        `channels: channel ${i + 1} (${JSON.stringify(channel.name)}): it reads the same as your channel ${JSON.stringify(other.name)}; to redefine that one, the file must use its exact name`,
      );
  });
  return problems;
}

/** Why an import was refused at the moment of applying (inside the settings lock). */
export class ImportRefused extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
  }
}

/**
 * The patch that applies `values` over `current`, refused whole when a channel's name clashes
 * with one the user has, or a channel or user rule the file adds or redefines was not confirmed
 * by name (the settings may have changed since the preview).
 */
export function importPatch(
  values: ImportValues,
  current: Settings,
  confirmedChannels: readonly string[],
  confirmedUserRules: readonly string[] = [],
): ImportValues {
  const clashes = channelNameClashes(values, current);
  if (clashes.length > 0) throw new ImportRefused(clashes);
  const plan = planImport(values, current);
  const problems: string[] = [];
  const channels = plan.channels.filter((c) => !confirmedChannels.includes(c.name));
  if (channels.length > 0) problems.push(`update channels not confirmed: ${channels.map((c) => c.name).join(', ')}`);
  const rules = plan.userRules.filter((r) => !confirmedUserRules.includes(r.name));
  if (rules.length > 0) problems.push(`user rules not confirmed: ${rules.map((r) => r.name).join(', ')}`);
  if (problems.length > 0) throw new ImportRefused(problems);
  return structuredClone(values);
}
