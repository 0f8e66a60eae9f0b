/**
 * The per-ruleset, per-rule, per-exclusion and per-cookie columns (Section.RsFlags through
 * Section.CookieName): the writer, and the order full verification demands of the values the
 * matcher follows (match/ruleset-state.ts and match/pattern-cache.ts read them).
 */
import { isTrivialRule, type Ruleset } from '../model/ruleset.js';
import { isLiteralRule } from '../regex/prepared-pattern.js';
import { RuleKind, RulesetFlag, Section } from './format.js';
import type { PackedArray } from './packed-array.js';
import { StringTable } from './pool.js';

/** The columns whose values are cold strings (StrBytes offsets once the pool is laid out). */
export const STRING_COLUMNS: readonly Section[] = [
  Section.RsName,
  Section.Note,
  Section.Platform,
  Section.RuleFrom,
  Section.RuleTo,
  Section.ExclPattern,
  Section.CookieHost,
  Section.CookieName,
];

/**
 * The columns of `rulesets`, indexed by Section (RsFlags through CookieName); the STRING_COLUMNS
 * hold indexes into `strings`, the cold strings in the order they are to be pooled.
 */
export function writeRulesetColumns(rulesets: readonly Ruleset[]): {
  columns: number[][];
  strings: string[];
} {
  const strings = new StringTable();
  // Cold strings are laid out in first-use order and every column is as wide as its largest
  // offset, so intern the columns with few distinct strings first (narrow offsets for them);
  // the ruleset names, one per ruleset, come last.
  for (const rs of rulesets) if (rs.platform !== undefined) strings.id(rs.platform);
  for (const rs of rulesets) if (rs.defaultOff !== undefined) strings.id(rs.defaultOff);
  for (const rs of rulesets) {
    for (const cookie of rs.secureCookies) {
      strings.id(cookie.host);
      strings.id(cookie.name);
    }
  }
  for (const rs of rulesets) for (const exclusion of rs.exclusions) strings.id(exclusion.pattern);
  for (const rs of rulesets) {
    for (const rule of rs.rules) {
      strings.id(rule.from);
      strings.id(rule.to);
    }
  }
  const column = (s: Section): number[] => (columns[s] = []);
  const columns: number[][] = [];
  const rsFlags = column(Section.RsFlags);
  const rsName = column(Section.RsName);
  const noteOwner = column(Section.NoteOwner);
  const note = column(Section.Note);
  const platformOwner = column(Section.PlatformOwner);
  const platform = column(Section.Platform);
  const rsRuleStart = column(Section.RsRuleStart);
  const rsExclStart = column(Section.RsExclStart);
  const rsCookieStart = column(Section.RsCookieStart);
  const ruleFrom = column(Section.RuleFrom);
  const ruleTo = column(Section.RuleTo);
  const ruleKind = column(Section.RuleKind);
  const exclPattern = column(Section.ExclPattern);
  const cookieHost = column(Section.CookieHost);
  const cookieName = column(Section.CookieName);
  rulesets.forEach((rs, id) => {
    rsName.push(strings.id(rs.name));
    if (rs.defaultOff !== undefined) {
      noteOwner.push(id);
      note.push(strings.id(rs.defaultOff));
    }
    if (rs.platform !== undefined) {
      platformOwner.push(id);
      platform.push(strings.id(rs.platform));
    }
    rsFlags.push(rulesetFlags(rs));
    // Ranges: ruleset i owns [start[i], start[i + 1]).
    rsRuleStart.push(ruleFrom.length);
    for (const rule of rs.rules) {
      ruleFrom.push(strings.id(rule.from));
      ruleTo.push(strings.id(rule.to));
      ruleKind.push(
        isTrivialRule(rule)
          ? RuleKind.Trivial
          : isLiteralRule(rule.from, rule.to)
            ? RuleKind.Literal
            : RuleKind.General,
      );
    }
    rsExclStart.push(exclPattern.length);
    for (const exclusion of rs.exclusions) exclPattern.push(strings.id(exclusion.pattern));
    rsCookieStart.push(cookieHost.length);
    for (const cookie of rs.secureCookies) {
      cookieHost.push(strings.id(cookie.host));
      cookieName.push(strings.id(cookie.name));
    }
  });
  rsRuleStart.push(ruleFrom.length);
  rsExclStart.push(exclPattern.length);
  rsCookieStart.push(cookieHost.length);
  return { columns, strings: strings.strings };
}

function rulesetFlags(rs: Ruleset): number {
  let flags = 0;
  if (rs.defaultOff === undefined && rs.platform === undefined) flags |= RulesetFlag.DefaultOn;
  if (rs.defaultOff === undefined && rs.platform === 'mixedcontent')
    flags |= RulesetFlag.MixedContent;
  if (
    rs.rules.length === 1 &&
    isTrivialRule(rs.rules[0] as Ruleset['rules'][number]) &&
    rs.exclusions.length === 0
  )
    flags |= RulesetFlag.TrivialOnly;
  return flags;
}

/**
 * Checks what the matcher follows in these columns of `rulesetCount` rulesets (their lengths
 * agree already: format.ts packedColumns): the sparse owners ascend and lie in range (they are
 * binary-searched), each range column ascends and ends at its items' count. Returns an error
 * message, or null. Full verification's.
 */
export function checkRulesetColumns(rulesetCount: number, packed: PackedArray[]): string | null {
  const n = rulesetCount;
  for (const owners of [Section.NoteOwner, Section.PlatformOwner]) {
    const ids = packed[owners] as PackedArray;
    for (let i = 0, previous = -1; i < ids.length; i++) {
      const id = ids.get(i);
      if (id >= n || id <= previous) return 'sparse ruleset ids out of order';
      previous = id;
    }
  }
  const ranges: [Section, Section][] = [
    [Section.RsRuleStart, Section.RuleFrom],
    [Section.RsExclStart, Section.ExclPattern],
    [Section.RsCookieStart, Section.CookieHost],
  ];
  for (const [startSection, itemSection] of ranges) {
    const starts = packed[startSection] as PackedArray;
    let previous = 0;
    for (let i = 0; i <= n; i++) {
      const v = starts.get(i);
      if (v < previous) return 'ruleset ranges out of order';
      previous = v;
    }
    if (previous !== (packed[itemSection] as PackedArray).length)
      return 'ruleset ranges do not cover their items';
  }
  return null;
}
