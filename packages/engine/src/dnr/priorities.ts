/** Priorities of compiled rules: a band per ruleset, a step per rule (see the table below). */
import type { Ruleset } from '../model/ruleset.js';
import { classifyTarget, type ClassifiedTarget } from './hosts.js';

/*
 * Priorities reproduce the reference order with DNR's "highest priority wins":
 * - a band per ruleset from its least specific target (exact > right/middle wildcard > left
 *   wildcard, longer suffix first), as candidate rulesets are tried in that order;
 * - inside a band, earlier rules rank higher (the first rule that changes the URL wins) and the
 *   ruleset's exclusions (`allow`) rank above all of its rules.
 */
export const BAND_WIDTH = 256;
/** Plain exclusions; re-enabled carve-outs of negative-lookahead exclusions; those exclusions. */
export const ALLOW_PRIORITY = 255;
export const REENABLE_PRIORITY = 254;
export const LOOKAHEAD_ALLOW_PRIORITY = 253;
export const MAX_RULES_PER_RULESET = 120;
const EXACT_BAND = 40;
const PATTERN_BAND = 30;
const LEFT_BAND = 10;
/** The highest priority a compiled rule set uses (the exact band's exclusions). */
export const MAX_COMPILED_PRIORITY = EXACT_BAND * BAND_WIDTH + ALLOW_PRIORITY;

export function rulePriority(band: number, ruleIndex: number): number {
  return band * BAND_WIDTH + 250 - 2 * ruleIndex;
}

export function bandOf(targets: ClassifiedTarget[]): number {
  return targets.reduce(
    (band, t) =>
      Math.min(
        band,
        t.kind === 'exact'
          ? EXACT_BAND
          : t.kind === 'pattern'
            ? PATTERN_BAND
            : LEFT_BAND + Math.min(t.labels, 9),
      ),
    Infinity,
  );
}

/**
 * The priority just above everything a ruleset's compiled rules use (its exclusions included):
 * an `allow` there switches the ruleset off for its hosts without touching more specific ones.
 */
export function rulesetCeilingPriority(ruleset: Ruleset): number | null {
  const targets = ruleset.targets
    .map((t) => classifyTarget(t.host))
    .filter((t): t is ClassifiedTarget => t !== null);
  if (targets.length === 0) return null;
  return bandOf(targets) * BAND_WIDTH + ALLOW_PRIORITY;
}
