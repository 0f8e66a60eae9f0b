/**
 * What a checked settings file (import.ts) would change, for the preview, and the patch that
 * applies it once the user confirmed every channel and user rule it adds or redefines.
 */
import { channelNameKey } from './channel-name.js';
import { FLAG_KEYS, type FlagKey, type ImportValues } from './import.js';
import type { Settings } from './schema.js';
import { summariseUserRule, type UserRuleSummary } from './user-rule-summary.js';
import { toUserRule } from './user-rules.js';

/** One setting the import would change, for the preview. */
export type ImportChange =
  | { key: FlagKey; kind: 'flag'; from: boolean; to: boolean }
  | {
      key: 'disabledSites' | 'httpAllowedSites' | 'userRules' | 'channels';
      kind: 'list';
      added: string[];
      removed: string[];
      changed: string[];
    }
  | {
      key: 'rulesetOverrides';
      kind: 'overrides';
      set: { name: string; on: boolean }[];
      cleared: string[];
    };

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
    if (to !== undefined && to !== current[key])
      changes.push({ key, kind: 'flag', from: current[key], to });
  }
  if (values.rulesetOverrides !== undefined) {
    const next = values.rulesetOverrides;
    const set = Object.entries(next)
      .filter(([n, on]) => current.rulesetOverrides[n] !== on)
      .map(([name, on]) => ({ name, on }));
    const cleared = Object.keys(current.rulesetOverrides).filter((n) => !Object.hasOwn(next, n));
    if (set.length > 0 || cleared.length > 0)
      changes.push({ key: 'rulesetOverrides', kind: 'overrides', set, cleared });
  }
  for (const key of ['disabledSites', 'httpAllowedSites'] as const) {
    const next = values[key];
    if (next === undefined) continue;
    const added = next.filter((s) => !current[key].includes(s));
    const removed = current[key].filter((s) => !next.includes(s));
    if (added.length > 0 || removed.length > 0)
      changes.push({ key, kind: 'list', added, removed, changed: [] });
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
        'errors' in checked
          ? { targets: [], sendsTo: [{ kind: 'computed' }], leavesItsSites: true }
          : summariseUserRule(checked.ruleset);
      userRules.push({ name: r.name, replacing: old !== undefined, ...summary });
    }
  }
  const channels: ChannelToConfirm[] = [];
  if (values.channels !== undefined) {
    changes.push(
      ...listChange('channels', values.channels, current.channels, (c) => JSON.stringify(c)),
    );
    for (const c of values.channels) {
      const old = current.channels.find((x) => x.name === c.name);
      if (old !== undefined && JSON.stringify(old) === JSON.stringify(c)) continue;
      channels.push({
        name: c.name,
        urlPrefix: c.urlPrefix,
        scope: c.scope,
        replacesDefaults: c.replacesDefaults,
        replacing: old !== undefined,
      });
    }
  }
  return { changes, channels, userRules };
}

function listChange<T extends { name: string }>(
  key: 'userRules' | 'channels',
  next: T[],
  current: T[],
  body: (x: T) => string,
): ImportChange[] {
  const added = next.filter((x) => !current.some((c) => c.name === x.name)).map((x) => x.name);
  const removed = current.filter((c) => !next.some((x) => x.name === c.name)).map((c) => c.name);
  const changed = next
    .filter((x) => current.some((c) => c.name === x.name && body(c) !== body(x)))
    .map((x) => x.name);
  return added.length + removed.length + changed.length > 0
    ? [{ key, kind: 'list', added, removed, changed }]
    : [];
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
    const other = current.channels.find(
      (c) => c.name !== channel.name && channelNameKey(c.name) === key,
    );
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
  if (channels.length > 0)
    problems.push(`update channels not confirmed: ${channels.map((c) => c.name).join(', ')}`);
  const rules = plan.userRules.filter((r) => !confirmedUserRules.includes(r.name));
  if (rules.length > 0)
    problems.push(`user rules not confirmed: ${rules.map((r) => r.name).join(', ')}`);
  if (problems.length > 0) throw new ImportRefused(problems);
  return structuredClone(values);
}
