/** Exclusions as `allow` rules above their ruleset's rules (exact, or widened when out of regexes). */
import { splitHttpPrefix } from './hosts.js';
import { expandLiteralLanguage, literalPrefixes } from '../regex/literal-language.js';
import { fallthroughAction, urlFilterSafe } from './actions.js';
import {
  analyzeLookaround,
  finiteNegativeTail,
  negativeTail,
  type CarvedPrefix,
} from './lookaround.js';
import { translateRegex } from './re2.js';
import { ALL_TYPES, caseSensitive, prefixFilter, type PlanContext, type Planned } from './plan.js';
import type { DnrAction } from './types.js';
import { ALLOW_PRIORITY, LOOKAHEAD_ALLOW_PRIORITY, REENABLE_PRIORITY } from './priorities.js';
import { OVER_BUDGET, regexCondition, regexPieceRules, rewriteDomains } from './fences.js';
import { splitToFit } from './split-alternation.js';
import type { AST } from '@eslint-community/regexpp';
import { childrenOf, parsePattern } from '../regex/pattern-ast.js';

/**
 * A safe stand-in for an exclusion DNR cannot express exactly: `allow` everything under the
 * literal prefixes all its matches start with. More URLs stay unrewritten, none is rewritten
 * that the reference leaves alone. Null when the prefixes do not reach into the host name.
 */
export function widenExclusion(
  ctx: PlanContext,
  pattern: string,
  base: number,
): { prefixes: string[]; rules: Planned[] } | null {
  // An exclusion without `^` matches anywhere in the URL: every match starts with one of its
  // prefixes somewhere, so a URL filter without `|`, which matches anywhere too, takes it in.
  const anchored = pattern.startsWith('^');
  const prefixes = literalPrefixes(anchored ? pattern : `^${pattern}`);
  if (!prefixes || prefixes.length === 0) return null;
  for (const p of prefixes) {
    const parts = splitHttpPrefix(p);
    if (!parts || !urlFilterSafe(p)) return null;
  }
  if (!ctx.domainCondition.requestDomains) return null;
  return {
    prefixes,
    rules: prefixes.map((p) => ({
      priority: base + ALLOW_PRIORITY,
      action: { type: 'allow' },
      condition: {
        urlFilter: anchored ? `|${p}` : p,
        ...caseSensitive,
        ...ctx.domainCondition,
        ...ALL_TYPES(),
      },
    })),
  };
}

/**
 * The last stand-in for an exclusion with a lookaround and no literal prefix reaching into the
 * host (`^http://(?!www\.)(?:[^./]+\.){2,}en\.example\.com/`): an `allow` for the pattern
 * with its lookarounds taken out, which matches every URL the pattern does and more (missed,
 * never rewritten against the reference). Needs regexes; null when it cannot be said.
 */
export function widenWithoutLookarounds(
  ctx: PlanContext,
  pattern: string,
  base: number,
): Planned[] | null {
  const source = withoutLookarounds(pattern);
  if (source === null) return null;
  const planned = allowByRegex(ctx, source, base + ALLOW_PRIORITY);
  return typeof planned === 'string' ? null : planned;
}

/** `pattern` without its lookaround assertions; null when one is quantified or none is left to match. */
function withoutLookarounds(pattern: string): string | null {
  const ast = parsePattern(pattern);
  if (ast === null) return null;
  const cuts: [number, number][] = [];
  const visit = (node: AST.Node): boolean => {
    if (node.type === 'Assertion' && (node.kind === 'lookahead' || node.kind === 'lookbehind')) {
      if (node.parent.type === 'Quantifier') return false;
      cuts.push([node.start, node.end]);
      return true;
    }
    return childrenOf(node).every(visit);
  };
  if (!visit(ast) || cuts.length === 0) return null;
  let out = '';
  let at = 0;
  for (const [start, end] of cuts.sort((a, b) => a[0] - b[0])) {
    out += pattern.slice(at, start);
    at = end;
  }
  out += pattern.slice(at);
  return /^\^?$/.test(out) ? null : out;
}

/** Literal URL starts an exclusion may spell out as `allow` rules, one rule each. */
const LITERAL_EXCLUSION_LIMIT = 256;

export function planExclusion(ctx: PlanContext, pattern: string, base: number): Planned[] | string {
  const priority = base + ALLOW_PRIORITY;
  // A long list of literal URL starts costs rules, of which there are plenty, not a regex.
  const lit = expandLiteralLanguage(pattern, LITERAL_EXCLUSION_LIMIT);
  if (lit && lit.expansions.every((e) => urlFilterSafe(e.text))) {
    return lit.expansions.map((e) => ({
      priority,
      action: { type: 'allow' },
      condition: {
        urlFilter: prefixFilter(e.text, e.exact === true),
        ...caseSensitive,
        ...ctx.domainCondition,
        ...ALL_TYPES(),
      },
    }));
  }
  return allowByRegex(ctx, pattern, priority);
}

/**
 * `P(?!A)` excludes URLs under P except those under P+A: an `allow` for P below a re-enabling
 * rule for P+A that does what the ruleset's rules do there. `P(?=A)` just excludes P+A.
 */
export function planLookaroundExclusion(
  ctx: PlanContext,
  pattern: string,
  base: number,
  negativePrefixes: string[][],
): Planned[] | string {
  const shape = analyzeLookaround(pattern);
  if (!shape || (shape.kind === 'trailing' && shape.negate && !shape.prefix)) {
    return (
      exactNegativeTail(ctx, pattern, base) ??
      planRegexReenabled(ctx, pattern, base, negativePrefixes)
    );
  }
  const out: Planned[] = [];
  const allowAt = (priority: number, urlFilter: string): Planned => ({
    priority,
    action: { type: 'allow' },
    condition: { urlFilter, ...caseSensitive, ...ctx.domainCondition, ...ALL_TYPES() },
  });
  if (shape.kind === 'trailing' && !shape.negate) {
    if (!shape.prefix) {
      const rc = regexCondition(ctx, shape.capturingSource!, 'allow');
      if (typeof rc === 'string') return rc;
      return rc === null
        ? []
        : [{ priority: base + ALLOW_PRIORITY, action: { type: 'allow' }, condition: rc.condition }];
    }
    for (const c of shape.carved) {
      if (!urlFilterSafe(c.prefix.text)) return 'lookahead text cannot be a URL filter';
      out.push(allowAt(base + ALLOW_PRIORITY, prefixFilter(c.prefix.text, c.prefix.exact)));
    }
    return out;
  }
  if (shape.kind === 'trailing') {
    if (!shape.prefix) return 'negative lookahead after a prefix that needs a regex';
    const prefixes = shape.prefix.expansions.map((e) => e.text);
    const reenabled = prefixes.every(urlFilterSafe)
      ? reenable(
          ctx,
          shape.carved.map((c) => c.prefix),
          base,
        )
      : 'lookahead prefix cannot be a URL filter';
    if (typeof reenabled !== 'string') {
      negativePrefixes.push(prefixes);
      return [
        ...prefixes.map((p) => allowAt(base + LOOKAHEAD_ALLOW_PRIORITY, prefixFilter(p, false))),
        ...reenabled,
      ];
    }
    // The carved URLs need a regex to be re-enabled: one `allow` regex says the exclusion exactly.
    return exactNegativeTail(ctx, pattern, base) ?? reenabled;
  }
  const rc = regexCondition(ctx, shape.restSource, 'allow');
  if (typeof rc === 'string') return rc;
  // The carved URLs lie among the rest's, so they cannot reach a target either.
  if (rc === null) return [];
  const reenabled = reenable(ctx, shape.carved, base);
  if (typeof reenabled === 'string') return reenabled;
  negativePrefixes.push(['http://']);
  return [
    {
      priority: base + LOOKAHEAD_ALLOW_PRIORITY,
      action: { type: 'allow' },
      condition: rc.condition,
    },
    ...reenabled,
  ];
}

/** Rules re-enabling the carved URLs one step above the lookahead's `allow`, doing what the ruleset's rules do there. */
function reenable(
  ctx: PlanContext,
  carved: readonly CarvedPrefix[],
  base: number,
): Planned[] | string {
  const out: Planned[] = [];
  for (const c of carved) {
    if (!urlFilterSafe(c.text)) return 'lookahead text cannot be a URL filter';
    const action = fallthroughAction(ctx.ruleset.rules, 0, c.text, c.exact);
    if (action === null) return 'the rules under a negative lookahead differ across its URLs';
    if (action === 'none') continue;
    const domains = rewriteDomains(ctx, [c.text], null);
    if (typeof domains === 'string') return `re-enabled URLs ${domains}`;
    if (domains === null) continue;
    out.push({
      priority: base + REENABLE_PRIORITY,
      action,
      condition: {
        urlFilter: prefixFilter(c.text, c.exact),
        ...caseSensitive,
        ...domains,
        ...ALL_TYPES(),
      },
    });
  }
  return out;
}

/**
 * `P(?!A)` with A a finite set of strings (some may have to end the URL) as `allow` regexes for
 * exactly its URLs: P followed by text that starts with no string of A. Whichever way P matches,
 * the lookahead only reads what follows, so this holds for any P RE2 can run, anchored or not.
 * Null when the pattern has another shape or its regex cannot be a condition.
 */
export function exactNegativeTail(
  ctx: PlanContext,
  pattern: string,
  base: number,
): Planned[] | null {
  const tail = finiteNegativeTail(pattern);
  if (!tail) return null;
  const rest = notStartingWith(tail.lookahead);
  // Every URL P matches goes on with a string of A: the exclusion matches nothing.
  if (rest === null) return [];
  // Nested alternations cost RE2 more than the estimate counts (Chromium refused some at full
  // size): three quarters of the estimate's budget, over more pieces when needed.
  const planned = allowByRegex(
    { ...ctx, maxInstructions: Math.floor((ctx.maxInstructions * 3) / 4) },
    `${tail.before}${rest}`,
    base + ALLOW_PRIORITY,
  );
  return typeof planned === 'string' ? null : planned;
}

interface TrieNode {
  next: Map<string, TrieNode>;
  /** A string of A ends here: whatever follows, the lookahead matches. */
  ends: boolean;
  /** A string of A ends here and must end the URL. */
  endsUrl: boolean;
}

/** A regex (JavaScript syntax) for text that starts with none of `strings`; null when none can. */
export function notStartingWith(strings: readonly CarvedPrefix[]): string | null {
  const root: TrieNode = { next: new Map(), ends: false, endsUrl: false };
  for (const s of strings) {
    let node = root;
    for (const ch of s.text) {
      let child = node.next.get(ch);
      if (!child) node.next.set(ch, (child = { next: new Map(), ends: false, endsUrl: false }));
      node = child;
    }
    if (s.exact) node.endsUrl = true;
    else node.ends = true;
  }
  const emit = (node: TrieNode): string | null => {
    if (node.ends) return null;
    const options: string[] = [];
    if (!node.endsUrl) options.push('$');
    options.push(asciiExcept([...node.next.keys()]));
    for (const [ch, child] of node.next) {
      const after = emit(child);
      if (after !== null) options.push(escapeRegex(ch) + after);
    }
    return `(?:${options.join('|')})`;
  };
  return emit(root);
}

/**
 * Any ASCII character but `chars`, as positive ranges: the same on request URLs (ASCII) as
 * `[^...]`, which Chromium's RE2 spells over all of Unicode and overflows its 2 KB with.
 */
function asciiExcept(chars: readonly string[]): string {
  const out = new Set(chars.map((c) => c.charCodeAt(0)));
  const hex = (n: number) => `\\x${n.toString(16).padStart(2, '0')}`;
  let body = '';
  for (let lo = 0; lo <= 0x7f; lo++) {
    if (out.has(lo)) continue;
    let hi = lo;
    while (hi < 0x7f && !out.has(hi + 1)) hi++;
    body += lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`;
    lo = hi;
  }
  return `[${body}]`;
}

/** An `allow` for the URLs of `source`, over a few regexes when it is too large for one. */
function allowByRegex(ctx: PlanContext, source: string, priority: number): Planned[] | string {
  const rc = regexCondition(ctx, source, 'allow');
  if (rc !== OVER_BUDGET) {
    if (typeof rc === 'string') return rc;
    return rc === null ? [] : [{ priority, action: { type: 'allow' }, condition: rc.condition }];
  }
  // Too large for one regex: its alternatives over a few.
  const pieces = splitToFit(source, ctx.maxInstructions);
  if (pieces === null) return rc;
  return regexPieceRules(ctx, pieces, 'allow', { type: 'allow' }, priority);
}

/**
 * `P(?!A)` with A any regex RE2 can run: `allow` for P below a re-enabling rule for `^P(?:A)`
 * that does what the ruleset's rules do under P (one regex per action). Without `^`, P found
 * later in the URL excludes it as well, and such URLs are all left alone (`|http*P`, above the
 * re-enabling rule: some missed, none rewritten differently).
 */
function planRegexReenabled(
  ctx: PlanContext,
  pattern: string,
  base: number,
  negativePrefixes: string[][],
): Planned[] | string {
  const tail = negativeTail(pattern);
  if (!tail) return 'lookaround that cannot be rewritten without it';
  if (!tail.prefixes.every(urlFilterSafe)) return 'lookahead prefix cannot be a URL filter';
  negativePrefixes.push(tail.prefixes);
  const allowAt = (priority: number, urlFilter: string): Planned => ({
    priority,
    action: { type: 'allow' },
    condition: { urlFilter, ...caseSensitive, ...ctx.domainCondition, ...ALL_TYPES() },
  });
  const out = tail.prefixes.map((p) =>
    allowAt(base + LOOKAHEAD_ALLOW_PRIORITY, prefixFilter(p, false)),
  );
  if (!tail.anchored)
    for (const p of tail.prefixes) out.push(allowAt(base + ALLOW_PRIORITY, `|http*${p}`));
  const byAction = new Map<string, { action: DnrAction; prefixes: string[] }>();
  for (const p of tail.prefixes) {
    const action = fallthroughAction(ctx.ruleset.rules, 0, p, false);
    if (action === null) return 'the rules under a negative lookahead differ across its URLs';
    if (action === 'none') continue;
    const key = JSON.stringify(action);
    const group = byAction.get(key) ?? { action, prefixes: [] };
    group.prefixes.push(p);
    byAction.set(key, group);
  }
  for (const { action, prefixes } of byAction.values()) {
    const source = `^(?:${prefixes.map(escapeRegex).join('|')})(?:${tail.lookSource})`;
    const tr = translateRegex(source);
    if (!tr.ok) return tr.reason;
    const pieces = splitToFit(source, ctx.maxInstructions);
    if (pieces === null) return OVER_BUDGET;
    const domains = rewriteDomains(ctx, prefixes, null);
    if (typeof domains === 'string') return `re-enabled URLs ${domains}`;
    if (domains === null) continue;
    for (const piece of pieces) {
      const re2 = translateRegex(piece);
      if (!re2.ok) return re2.reason;
      out.push({
        priority: base + REENABLE_PRIORITY,
        action,
        condition: { regexFilter: re2.re2, ...caseSensitive, ...domains, ...ALL_TYPES() },
      });
    }
  }
  return out;
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.|?*+()[\]{}/]/g, '\\$&');
}

/** Two negative-lookahead exclusions whose prefixes nest would re-enable each other's URLs. */
export function prefixSetsIndependent(sets: string[][]): boolean {
  for (let a = 0; a < sets.length; a++) {
    for (let b = a + 1; b < sets.length; b++) {
      for (const x of sets[a]!)
        for (const y of sets[b]!) if (x.startsWith(y) || y.startsWith(x)) return false;
    }
  }
  return true;
}
