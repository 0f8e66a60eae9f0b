/** What the DNR compiler plans per ruleset before the regex budget is spent, and shared helpers. */
import type { Ruleset } from '../model/ruleset.js';
import type { ClassifiedTarget } from './hosts.js';
import { ALL_RESOURCE_TYPES, type DnrCondition, type DnrRule } from './types.js';

export type Planned = Omit<DnrRule, 'id'>;

export interface RulePlan {
  /** Trivial rule: hosts go into the shared label-count groups. */
  trivial: boolean;
  /** A scheme-only regex rule reduced to exact hosts (path must follow the host directly). */
  upgradeHosts?: string[];
  /** ...and `*.` targets all of whose hosts it upgrades (the path must follow the host directly). */
  upgradeSuffixes?: string[];
  /** ...and `*.` targets whose hosts one label below it upgrades, that label of the given class (RE2). */
  upgradeOneBelow?: { suffix: string; label: string }[];
  rules: Planned[];
  regexes: number;
}

export interface RulesetPlan {
  ruleset: Ruleset;
  band: number;
  targets: ClassifiedTarget[];
  allows: Planned[];
  /** Exclusions that need a regex but have a regex-free, wider stand-in. */
  widenable: ExclusionPlan[];
  rules: RulePlan[];
  regexes: number;
}

export const caseSensitive = { isUrlFilterCaseSensitive: true } as const;

export interface ExclusionPlan {
  index: number;
  exact: Planned[];
  widened: { prefixes: string[]; rules: Planned[] };
}

export interface PlanContext {
  ruleset: Ruleset;
  targets: ClassifiedTarget[];
  maxInstructions: number;
  domainCondition: Partial<DnrCondition>;
  covered: (host: string) => boolean;
  /** The ruleset's exclusion priority, which its fences share. */
  allowPriority: number;
  /**
   * No redirect limit counts the rules (the static set): a regex may be traded for several
   * literal redirects (a `\d` spelled out as ten; a path-dropping transform per prefix).
   */
  redirectsUncounted: boolean;
  /** `allow` rules for hosts the domain condition admits but no target covers, by host pattern. */
  fences: Map<string, Planned>;
}

export const ALL_TYPES = (): { resourceTypes: DnrCondition['resourceTypes'] } => ({
  resourceTypes: [...ALL_RESOURCE_TYPES],
});

export function prefixFilter(text: string, exact: boolean): string {
  return `|${text}${exact ? '|' : ''}`;
}
