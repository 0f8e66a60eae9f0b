/**
 * What an imported library would change, shown before it is applied (issue 40): a library of
 * thousands of files from anyone's pull request can override a bundled ruleset and send a site
 * to another site, or keep it on plain HTTP, and a settings import already confirms each user
 * rule. Every rule is judged by where it can send a visit (user-rule-summary.ts, the settings
 * import's own judge), so the user sees by name each ruleset that takes visits elsewhere or to
 * http://, and which bundled rulesets it stands in front of.
 */
import type { Ruleset } from '@httpsify/engine';
import { summariseUserRule } from '../settings/user-rule-summary.js';

/** Names listed per kind at most (the counts stay exact). */
export const PREVIEW_LIST_LIMIT = 2000;

export interface LibraryPreview {
  rulesetCount: number;
  /** Bundled rulesets whose sites a library ruleset also covers: the library's rule comes first there. */
  overrides: { count: number; names: string[] };
  /** Library rulesets with a rule that may send a visit to a site the ruleset does not cover. */
  crossSite: { count: number; items: PreviewItem[] };
  /** Library rulesets with a rule whose result is an http:// address. */
  toHttp: { count: number; items: PreviewItem[] };
}

export interface PreviewItem {
  ruleset: string;
  /** The rule as written: from → to. */
  rule: string;
}

/** Exact names of the hosts a ruleset targets (wildcards are looked up by their fixed part). */
function lookupHosts(r: Ruleset): string[] {
  return r.targets.map((t) => t.host.replace(/^\*\./, '').replace(/\.\*$/, '.com'));
}

/** True for a library ruleset that may take a visit away from its sites or onto HTTP. */
export function flagged(r: Ruleset): { crossSite: PreviewItem | null; toHttp: PreviewItem | null } {
  const toHttpRule = r.rules.find((rule) => /^http:/i.test(rule.to));
  let crossSite: PreviewItem | null = null;
  const summary = summariseUserRule(r);
  if (summary.leavesItsSites) {
    // The first rule that can: judged one by one with the same targets.
    const rule =
      r.rules.find((one) => summariseUserRule({ ...r, rules: [one] }).leavesItsSites) ?? r.rules[0];
    crossSite = { ruleset: r.name, rule: rule === undefined ? '' : `${rule.from} → ${rule.to}` };
  }
  return {
    crossSite,
    toHttp:
      toHttpRule === undefined
        ? null
        : { ruleset: r.name, rule: `${toHttpRule.from} → ${toHttpRule.to}` },
  };
}

export function previewLibrary(
  rulesets: readonly Ruleset[],
  bundledNamesForHost: (host: string) => string[],
): LibraryPreview {
  const overrides = new Set<string>();
  const crossSite: PreviewItem[] = [];
  const toHttp: PreviewItem[] = [];
  let crossCount = 0;
  let httpCount = 0;
  for (const r of rulesets) {
    for (const host of lookupHosts(r)) for (const n of bundledNamesForHost(host)) overrides.add(n);
    const f = flagged(r);
    if (f.crossSite !== null && crossCount++ < PREVIEW_LIST_LIMIT) crossSite.push(f.crossSite);
    if (f.toHttp !== null && httpCount++ < PREVIEW_LIST_LIMIT) toHttp.push(f.toHttp);
  }
  const names = [...overrides].sort();
  return {
    rulesetCount: rulesets.length,
    overrides: { count: names.length, names: names.slice(0, PREVIEW_LIST_LIMIT) },
    crossSite: { count: crossCount, items: crossSite },
    toHttp: { count: httpCount, items: toHttp },
  };
}
