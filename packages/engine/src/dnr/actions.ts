import { isTrivialRule, type Rule } from '../model/ruleset.js';
import { splitHttpPrefix } from './hosts.js';
import {
  expandLiteralLanguage,
  literalPrefixes,
  substituteReplacement,
  type LiteralExpansion,
} from '../regex/literal-language.js';
import { captureCount } from '../regex/pattern-ast.js';
import type { DnrAction } from './types.js';

/** urlFilter reserves `*`, `^` and `|`; non-ASCII never appears in a request URL. */
export function urlFilterSafe(text: string): boolean {
  return /^[\x21-\x7e]*$/.test(text) && !/[*^|]/.test(text);
}

/**
 * The regex-free DNR action equal to `href.replace(from, to)` for every URL starting with the
 * literal prefix `e`: a pure scheme change is `upgradeScheme`, a host swap keeping the rest is a
 * `transform`, a match of the whole URL (`wholeUrl`) is a fixed `url`. Null otherwise.
 */
export function literalAction(
  e: LiteralExpansion,
  wholeUrl: boolean,
  to: string,
  captures: number,
): DnrAction | null {
  const parts = splitHttpPrefix(e.text);
  if (!parts) return null;
  const target = substituteReplacement(to, e.text, e.groups, captures);
  if (target === null) return null;
  if (target === `https${e.text.slice(4)}` && !wholeUrl) return { type: 'upgradeScheme' };
  if (wholeUrl) {
    try {
      if (!/^https?:$/.test(new URL(target).protocol)) return null;
    } catch {
      return null;
    }
    return { type: 'redirect', redirect: { url: target } };
  }
  const m = /^(https?):\/\/([a-z0-9.-]+)(.*)$/s.exec(target);
  if (!m || m[3] !== parts.rest) return null;
  return { type: 'redirect', redirect: { transform: { scheme: m[1]!, host: m[2]! } } };
}

/**
 * What rules `from` onwards of a ruleset do to every URL starting with `prefix` (exactly
 * `prefix` when `exact`): the action of the first one that applies, `'none'` when none can, or
 * null when that is not the same for all such URLs (or needs a regex). Used where a lookaround
 * carves URLs out of one rule or exclusion and the following rules take over.
 */
export function fallthroughAction(
  rules: readonly Rule[],
  from: number,
  prefix: string,
  exact: boolean,
): DnrAction | 'none' | null {
  for (let k = from; k < rules.length; k++) {
    const rule = rules[k]!;
    if (isTrivialRule(rule)) return prefix.startsWith('http:') ? { type: 'upgradeScheme' } : 'none';
    // Every match starts with one of these: when none of them and `prefix` starts the other,
    // the rule matches no URL under `prefix`, whatever the regex after them.
    const starts = literalPrefixes(rule.from);
    if (starts !== null && starts.every((p) => !prefix.startsWith(p) && !p.startsWith(prefix)))
      continue;
    const lit = expandLiteralLanguage(rule.from);
    if (!lit || (lit.consumesRest && rule.to.includes('$&'))) return null;
    const captures = captureCount(rule.from);
    for (const e of lit.expansions) {
      if (e.exact) {
        if (exact && e.text === prefix) return literalAction(e, true, rule.to, captures);
        if (e.text.startsWith(prefix)) return null;
        continue;
      }
      if (prefix.startsWith(e.text)) return literalAction(e, lit.consumesRest, rule.to, captures);
      if (e.text.startsWith(prefix)) return null;
    }
  }
  return 'none';
}
