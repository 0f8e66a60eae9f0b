/**
 * The rulesets as the pages list them: one row per name (user rules, then the defaults, then
 * each channel's), a ruleset's details, and the hosts each covers. Read-only over the layers.
 */
import type { Engine, Ruleset } from '@httpsify/engine';
import type { RulesetDetails, RulesetIndex, RulesetRow } from '../protocol/ui-protocol.js';
import type { RulesetSources } from './layered-rewriter.js';

/** The engines whose rulesets the user can switch by name: the defaults, then each channel's. */
function rulesetEngines(r: RulesetSources): Engine[] {
  return [r.engine, ...r.channels.channels.map((c) => c.engine)];
}

export function rulesetRow(r: RulesetSources, name: string): RulesetRow | null {
  const user = r.userRulesets.find((u) => u.name === name);
  if (user !== undefined && r.userEngine !== null) {
    const id = r.userEngine.rulesetIdsByName(name)[0] as number;
    return {
      name,
      active: r.userEngine.isActive(id),
      defaultActive: r.userEngine.isDefaultActive(id),
      note: user.defaultOff ?? null,
      user: true,
    };
  }
  // The defaults, then the channels: a switch applies to every ruleset of that name.
  for (const engine of rulesetEngines(r)) {
    const id = engine.rulesetIdsByName(name)[0];
    if (id === undefined) continue;
    return {
      name,
      active: engine.isActive(id),
      defaultActive: engine.isDefaultActive(id),
      note: noteOf(engine, id),
      user: false,
    };
  }
  return null;
}

/** A ruleset's targets and rules by name: user rules, then the defaults and channels. */
export function rulesetDetails(r: RulesetSources, name: string): RulesetDetails | null {
  const describe = (rs: Ruleset, source: string): RulesetDetails => ({
    name: rs.name,
    defaultOff: rs.defaultOff ?? (rs.platform !== undefined ? `platform: ${rs.platform}` : null),
    hosts: rs.targets.map((t) => t.host),
    rules: rs.rules.map((rule) => ({ from: rule.from, to: rule.to })),
    exclusions: rs.exclusions.map((e) => e.pattern),
    source,
  });
  const user = r.userRulesets.find((u) => u.name === name);
  if (user !== undefined) return describe(user, 'user');
  const engines: [Engine, string][] = [
    [r.engine, 'defaults'],
    ...r.channels.channels.map((c): [Engine, string] => [c.engine, c.name]),
  ];
  for (const [engine, source] of engines) {
    const id = engine.rulesetIdsByName(name)[0];
    if (id !== undefined) return describe(engine.ruleset(id), source);
  }
  return null;
}

export function rulesetIndex(r: RulesetSources): RulesetIndex {
  const index: RulesetIndex = { names: [], active: [], defaultActive: [], notes: [], user: [] };
  const seen = new Set<string>();
  const push = (row: RulesetRow) => {
    if (seen.has(row.name)) return;
    seen.add(row.name);
    index.names.push(row.name);
    index.active.push(row.active);
    index.defaultActive.push(row.defaultActive);
    index.notes.push(row.note);
    index.user.push(row.user);
  };
  for (const u of r.userRulesets) {
    const row = rulesetRow(r, u.name);
    if (row) push(row);
  }
  for (const engine of rulesetEngines(r)) {
    for (let id = 0; id < engine.rulesetCount; id++) {
      const name = engine.rulesetName(id);
      if (seen.has(name)) continue;
      const flagsNote = engine.isDefaultActive(id) ? null : noteOf(engine, id);
      push({
        name,
        active: engine.isActive(id),
        defaultActive: engine.isDefaultActive(id),
        note: flagsNote,
        user: false,
      });
    }
  }
  return index;
}

/** Hosts of every ruleset by name, as the list shows them (the first of a name wins, as in the index). */
export function rulesetHosts(r: RulesetSources): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const u of r.userRulesets) out[u.name] ??= hostsSummary(u.targets.map((t) => t.host));
  for (const engine of rulesetEngines(r)) {
    // In one pass that keeps nothing: the Firefox background lives on after the page has gone.
    const targets = engine.allTargets();
    for (let id = 0; id < engine.rulesetCount; id++)
      out[engine.rulesetName(id)] ??= hostsSummary(targets[id] ?? []);
  }
  return out;
}

/** How many rulesets the defaults hold, counted by name as the "All rulesets" list shows them. */
export function defaultRulesetCount(engine: Engine): number {
  // A few names repeat in the corpus.
  const names = new Set<string>();
  for (let id = 0; id < engine.rulesetCount; id++) names.add(engine.rulesetName(id));
  return names.size;
}

/** Up to three target hosts and how many more: enough to recognise a ruleset in a list. */
function hostsSummary(hosts: readonly string[]): string {
  return hosts.length <= 3
    ? hosts.join(', ')
    : `${hosts.slice(0, 3).join(', ')}, +${hosts.length - 3}`;
}

function noteOf(engine: Engine, id: number): string | null {
  // Not engine.ruleset(id): that decodes (and keeps) every ruleset's targets, for two strings.
  const platform = engine.platformOf(id);
  return engine.defaultOffNote(id) ?? (platform !== null ? `platform: ${platform}` : null);
}
