import { createEngine, type Ruleset } from '@httpsify/engine';
import { parseSitePattern } from '../site-rules/site-pattern.js';
import { checkSetting } from './repair.js';
import { EXPORTED_KEYS, type ExportedKey, SCHEMA_VERSION, type Settings } from './schema.js';
import { toUserRule } from './user-rules.js';

/**
 * The settings file (export and import). Import is all or nothing: the whole file is checked
 * first (here), any problem refuses it whole, the user sees what would change (and confirms every
 * update channel and every user rule it would add or change, since both decide what sites they
 * are sent to: a user rule outranks every ruleset and has no destination check), and the result
 * is applied in one settings write (import-plan.ts).
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
/** The on/off settings a file may carry. */
export const FLAG_KEYS = ['globalEnabled', 'httpsFirst', 'mixedContent', 'showBadge'] as const;
export type FlagKey = (typeof FLAG_KEYS)[number];

/** The settings a file carries, every value checked and in stored form. */
export type ImportValues = Partial<Pick<Settings, ExportedKey>>;

export type ParsedImport = { ok: true; values: ImportValues } | { ok: false; problems: string[] };

export function exportSettingsFile(settings: Settings, now = new Date()): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of EXPORTED_KEYS) out[k] = settings[k];
  return {
    format: EXPORT_FORMAT,
    schemaVersion: SCHEMA_VERSION,
    exportedAt: now.toISOString(),
    settings: out,
  };
}

/** Parses and checks a settings file's text; every problem found is reported, not just the first. */
export function parseSettingsFile(text: unknown): ParsedImport {
  if (typeof text !== 'string') return refuse('the file is not text');
  if (text.length > MAX_IMPORT_CHARS)
    return refuse(`the file is too large (${text.length} characters; at most ${MAX_IMPORT_CHARS})`);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return refuse(`the file is not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const shape = shapeProblem(data);
  if (shape !== null) return refuse(shape);
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return refuse('not an httpsify settings file (expected a JSON object)');
  const top = data as Record<string, unknown>;
  if (top.format !== EXPORT_FORMAT)
    return refuse(
      `not an httpsify settings file ("format" is ${JSON.stringify(top.format) ?? 'missing'}, expected "${EXPORT_FORMAT}")`,
    );
  const version = top.schemaVersion;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1)
    return refuse(
      `"schemaVersion" must be a whole number from 1 to ${SCHEMA_VERSION}, got ${JSON.stringify(version) ?? 'nothing'}`,
    );
  if (version > SCHEMA_VERSION)
    return refuse(
      `the file was made by a newer httpsify (settings version ${version}; this one reads up to ${SCHEMA_VERSION})`,
    );
  const problems: string[] = [];
  for (const k of Object.keys(top))
    if (!TOP_KEYS.has(k)) problems.push(`unknown key ${JSON.stringify(k)} at the top of the file`);
  if (top.exportedAt !== undefined && typeof top.exportedAt !== 'string')
    problems.push('"exportedAt" is not a date text');
  const settings = top.settings;
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings))
    return refuse(...problems, '"settings" must be an object');
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
  return problems.length > 0
    ? { ok: false, problems }
    : { ok: true, values: values as ImportValues };
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
    if (depth > MAX_IMPORT_DEPTH)
      return `the file is nested deeper than ${MAX_IMPORT_DEPTH} levels`;
    if (Array.isArray(v)) {
      for (const item of v) stack.push([item, depth + 1]);
      continue;
    }
    for (const [k, item] of Object.entries(v)) {
      if (FORBIDDEN_KEYS.has(k))
        return `the file contains the key ${JSON.stringify(k)}, which settings never use`;
      stack.push([item, depth + 1]);
    }
  }
  return null;
}

/** Stricter than the repair of stored data: nothing is coerced or salvaged, a problem refuses the file. */
function checkValue(key: ExportedKey, value: unknown): { value: unknown; problems: string[] } {
  if ((FLAG_KEYS as readonly string[]).includes(key)) {
    return typeof value === 'boolean'
      ? { value, problems: [] }
      : { value, problems: [`must be true or false, got ${describe(value)}`] };
  }
  switch (key) {
    case 'rulesetOverrides': {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return {
          value,
          problems: [`must be an object of ruleset names to true/false, got ${describe(value)}`],
        };
      const entries = Object.entries(value);
      if (entries.length > MAX_LIST)
        return { value, problems: [`has ${entries.length} entries (at most ${MAX_LIST})`] };
      const problems = entries
        .filter(([, on]) => typeof on !== 'boolean')
        .map(
          ([name, on]) =>
            `the switch for ${JSON.stringify(name)} must be true or false, got ${describe(on)}`,
        );
      return { value: Object.fromEntries(entries), problems };
    }
    case 'disabledSites':
    case 'httpAllowedSites': {
      if (!Array.isArray(value))
        return { value, problems: [`must be a list of sites, got ${describe(value)}`] };
      if (value.length > MAX_LIST)
        return { value, problems: [`has ${value.length} entries (at most ${MAX_LIST})`] };
      const problems = value
        .filter((e) => typeof e !== 'string' || parseSitePattern(e) === null)
        .map((e) => `${describe(e)} is not a host, host:port or *.domain`);
      return { value: checkSetting(key, value).value, problems };
    }
    case 'userRules':
      return checkUserRules(value);
    case 'channels': {
      if (!Array.isArray(value))
        return {
          value,
          problems: [`must be a list of channel definitions, got ${describe(value)}`],
        };
      const checked = checkSetting('channels', value);
      return { value: checked.value, problems: checked.problems };
    }
    default:
      return { value, problems: ['cannot be imported'] };
  }
}

function checkUserRules(value: unknown): { value: unknown; problems: string[] } {
  if (!Array.isArray(value))
    return { value, problems: [`must be a list of rules, got ${describe(value)}`] };
  if (value.length > MAX_USER_RULES)
    return { value, problems: [`has ${value.length} rules (at most ${MAX_USER_RULES})`] };
  const problems: string[] = [];
  const out: Settings['userRules'] = [];
  const parsed: { where: string; ruleset: Ruleset }[] = [];
  value.forEach((r: unknown, i) => {
    const where = `rule ${i + 1}`;
    const o = r as Record<string, unknown> | null;
    if (
      typeof o !== 'object' ||
      o === null ||
      Array.isArray(o) ||
      typeof o.name !== 'string' ||
      typeof o.xml !== 'string' ||
      o.name === ''
    ) {
      problems.push(`${where} must have a "name" and an "xml" text, got ${describe(r)}`);
      return;
    }
    const extra = Object.keys(o).filter((k) => k !== 'name' && k !== 'xml');
    if (extra.length > 0)
      problems.push(
        `${where} (${JSON.stringify(o.name)}) has unknown fields ${extra.map((k) => JSON.stringify(k)).join(', ')}`,
      );
    const checked = toUserRule(o.xml);
    if ('errors' in checked) {
      problems.push(
        `${where} (${JSON.stringify(o.name)}): ${checked.errors.map((d) => `line ${d.line}:${d.column} ${d.message}`).join('; ')}`,
      );
      return;
    }
    if (checked.rule.name !== o.name)
      problems.push(
        `${where} is named ${JSON.stringify(o.name)} but its XML names it ${JSON.stringify(checked.rule.name)}`,
      );
    if (out.some((x) => x.name === o.name))
      problems.push(`two rules are named ${JSON.stringify(o.name)}`);
    else {
      out.push({ name: o.name, xml: o.xml });
      parsed.push({ where: `${where} (${JSON.stringify(o.name)})`, ruleset: checked.ruleset });
    }
  });
  // The engine's own guards (regex safety) must accept them, as when the user saves a rule:
  // one engine for all (building one per rule made a hostile file cost minutes), and one per
  // rule only to name the rule when the whole set is refused.
  const together = engineRefusal(parsed.map((p) => p.ruleset));
  if (together !== null) {
    const before = problems.length;
    for (const p of parsed) {
      const error = engineRefusal([p.ruleset]);
      if (error !== null) problems.push(`${p.where}: ${error}`);
    }
    // Refused together though each one passes alone: still refused, never a silent skip.
    if (problems.length === before) problems.push(`the rules together: ${together}`);
  }
  return { value: out, problems };
}

function engineRefusal(rulesets: Ruleset[]): string | null {
  try {
    createEngine(rulesets);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
