/**
 * A scheme-only rule of a ruleset with right or middle wildcard targets (`accounts.google.*`)
 * narrowed to the hosts its targets cover. Such a ruleset has no DNR domain list, so the rule's
 * regex must itself stay on the targets; one that also names hosts no target covers
 * (`(accounts|adwords)\.google\.…` beside `adwords.google.com.*` only) keeps the host
 * alternatives that lie wholly on targets and drops those that lie wholly off them, where the
 * reference never offers the ruleset.
 */
import type { AST } from '@eslint-community/regexpp';
import { hostPatterns, isDelimiter } from './host-labels.js';
import type { ClassifiedTarget } from './hosts.js';
import { patternCovered } from './fences.js';
import { topLevelElements } from '../regex/pattern-ast.js';

/** More host variants than this are not worth spelling out. */
const MAX_VARIANTS = 256;
/** Classes of at most this many host characters are spelled out (`lh\d` → `lh0`…`lh9`). */
const MAX_CLASS = 10;

class TooMany extends Error {}

/**
 * `from` (a `^http://HOST/…` regex whose match only decides whether the URL is upgraded) with
 * its host part reduced to the alternatives on covered hosts: `^http://(?:h1|h2)/…`; `''` when
 * none is; null when an alternative lies partly on and partly off the targets, or the regex
 * has another shape. Only for matching: groups are renumbered or gone.
 */
export function narrowToTargets(from: string, targets: readonly ClassifiedTarget[]): string | null {
  // A backreference would point at a group the variants renumber or drop.
  if (/\\[1-9]|\\k</.test(from)) return null;
  const els = topLevelElements(from);
  if (!els || els.length < 9) return null;
  const head = els
    .slice(0, 8)
    .map((e) => e.raw)
    .join('');
  if (head.replace(/\\\//g, '/') !== '^http://') return null;
  const end = els.findIndex((e, i) => i >= 8 && isDelimiter(e));
  if (end < 0) return null;
  const rest = els
    .slice(end)
    .map((e) => e.raw)
    .join('');
  let variants: string[];
  try {
    variants = sequenceVariants(els.slice(8, end));
  } catch (err) {
    if (err instanceof TooMany) return null;
    throw err;
  }
  const kept: string[] = [];
  for (const host of new Set(variants)) {
    if (host === '') return null;
    const patterns = hostPatterns(`^http://${host}${rest}`);
    if (patterns === null) return null;
    if (patterns.every((p) => patternCovered(targets, p))) kept.push(host);
    else if (patterns.some((p) => targets.some((t) => mayMeet(t, p)))) return null;
  }
  return kept.length === 0 ? '' : `^http://(?:${factorFirstLabels(kept).join('|')})${rest}`;
}

/**
 * Hosts that differ only in a literal first label written once with those labels as an
 * alternation, and the same label sets once with their rests as one
 * (`(?:accounts|maps)(?:\.google\.\w{2,3}|\.google\.com\.\w{2,3})`): fewer RE2 instructions.
 */
function factorFirstLabels(hosts: readonly string[]): string[] {
  const byRest = new Map<string, string[]>();
  const whole: string[] = [];
  for (const host of hosts) {
    const m = /^([a-z0-9_-]+)(\\\..*)$/i.exec(host);
    if (m) byRest.set(m[2]!, [...(byRest.get(m[2]!) ?? []), m[1]!]);
    else whole.push(host);
  }
  const byLabels = new Map<string, string[]>();
  for (const [rest, labels] of byRest) {
    const key = labels.length > 1 ? `(?:${labels.join('|')})` : labels[0]!;
    byLabels.set(key, [...(byLabels.get(key) ?? []), rest]);
  }
  return [
    ...[...byLabels].map(([labels, rests]) =>
      rests.length > 1 ? `${labels}${joinRests(rests)}` : `${labels}${rests[0]!}`,
    ),
    ...whole,
  ];
}

/**
 * Alternatives with the elements they all start and end with written once:
 * `\.google\.(?:|co\.|com\.)\w{2,3}`.
 */
function joinRests(rests: readonly string[]): string {
  const tokens = rests.map((r) => topLevelElements(r)?.map((e) => e.raw) ?? null);
  if (tokens.some((t) => t === null)) return `(?:${rests.join('|')})`;
  const lists = tokens as string[][];
  const shortest = lists.reduce((n, t) => Math.min(n, t.length), Infinity);
  let head = 0;
  while (head < shortest && lists.every((t) => t[head] === lists[0]![head])) head++;
  let tail = 0;
  while (
    tail < shortest - head &&
    lists.every((t) => t[t.length - 1 - tail] === lists[0]![lists[0]!.length - 1 - tail])
  )
    tail++;
  const first = lists[0]!;
  const middles = lists.map((t) => t.slice(head, t.length - tail).join(''));
  return `${first.slice(0, head).join('')}(?:${middles.join('|')})${first.slice(first.length - tail).join('')}`;
}

/**
 * Every spelling of a sequence with its alternations, optional pieces (`x?`, `(…)?`) and small
 * classes chosen out, as source text; other elements stay as they are.
 */
function sequenceVariants(elements: readonly AST.Element[]): string[] {
  let acc = [''];
  for (const el of elements) {
    const options = elementVariants(el);
    if (acc.length * options.length > MAX_VARIANTS) throw new TooMany();
    acc = acc.flatMap((a) => options.map((o) => a + o));
  }
  return acc;
}

function elementVariants(el: AST.Element): string[] {
  if ((el.type === 'Group' && !el.modifiers) || el.type === 'CapturingGroup') {
    const out = el.alternatives.flatMap((a) => sequenceVariants(a.elements));
    if (out.length > MAX_VARIANTS) throw new TooMany();
    return out;
  }
  if (el.type === 'Quantifier' && el.min === 0 && el.max === 1)
    return ['', ...elementVariants(el.element)];
  if (el.type === 'CharacterClass' || el.type === 'CharacterSet') return classChars(el) ?? [el.raw];
  return [el.raw];
}

/** The characters of a small class of label characters (letters, digits, `-`, `_`), or null. */
function classChars(el: AST.CharacterClass | AST.CharacterSet): string[] | null {
  const codes: number[] = [];
  if (el.type === 'CharacterSet') {
    if (el.kind !== 'digit' || el.negate) return null;
    for (let c = 0x30; c <= 0x39; c++) codes.push(c);
  } else {
    if (el.negate) return null;
    for (const item of el.elements) {
      if (item.type === 'Character') codes.push(item.value);
      else if (item.type === 'CharacterClassRange' && item.max.value - item.min.value < MAX_CLASS)
        for (let c = item.min.value; c <= item.max.value; c++) codes.push(c);
      else return null;
    }
  }
  const chars = [...new Set(codes)].map((c) => String.fromCharCode(c));
  return chars.length <= MAX_CLASS && chars.every((c) => /^[a-zA-Z0-9_-]$/.test(c)) ? chars : null;
}

/** Whether some host of `pattern` (labels, `*` for one the regex leaves open) may be on `t`. */
function mayMeet(t: ClassifiedTarget, pattern: string): boolean {
  const have = pattern.split('.');
  const fits = (want: readonly string[], from: number) =>
    want.every((label, i) => label === '*' || have[from + i] === '*' || have[from + i] === label);
  if (t.kind === 'exact') return have.length === t.labels && fits(t.host.split('.'), 0);
  if (t.kind === 'pattern') {
    const want = t.host.split('.');
    return have.length === want.length && fits(want, 0);
  }
  const extra = have.length - t.labels;
  return (extra === 1 || (extra > 1 && t.labels >= 2)) && fits(t.suffix.split('.'), extra);
}
