/** One ruleset rule as DNR rules: literal prefixes, scheme-only host lists, regex redirects, lookarounds. */
import { hostShape, matchesChar, mayMatchChar } from './host-labels.js';
import { splitHttpPrefix, type ClassifiedTarget } from './hosts.js';
import { expandLiteralLanguage, substituteReplacement } from '../regex/literal-language.js';
import { fallthroughAction, literalAction, urlFilterSafe } from './actions.js';
import { analyzeLookaround, type CarvedPrefix } from './lookaround.js';
import type { AST } from '@eslint-community/regexpp';
import { captureCount, topLevelElements } from '../regex/pattern-ast.js';
import { translateRegex, translateReplacement } from './re2.js';
import type { DnrAction, DnrCondition } from './types.js';
import {
  ALL_TYPES,
  caseSensitive,
  prefixFilter,
  type PlanContext,
  type Planned,
  type RulePlan,
} from './plan.js';
import { narrowToTargets } from './covered-hosts.js';
import {
  hostCondition,
  OVER_BUDGET,
  UNCOVERED_HOSTS,
  regexCondition,
  regexPieceRules,
  rewriteDomains,
} from './fences.js';
import { MAX_PIECES, runsThatFit, splitToFit } from './split-alternation.js';
import { rulesetRegexOrNull } from '../regex/safe-regex.js';
import { insertedGroups } from '../regex/replacement.js';

/**
 * `^http://HOST/` rules whose replacement only changes the scheme (`(www\.)?example\.com/` →
 * `https://$1example.com/`) are upgrades of the target hosts they match: as such they join the
 * shared host groups instead of spending a regex. Exact targets are listed when they match; a
 * `*.b` target joins when the rule takes every host below it (`([^/:@]+\.)?b/`) and is left
 * out when, by its literal end, the rule takes none. Null for anything else (right or middle
 * wildcards among them), which needs the regex.
 */
export function schemeOnlyHosts(
  from: string,
  to: string,
  targets: readonly ClassifiedTarget[],
): { hosts: string[]; suffixes: string[]; oneBelow: { suffix: string; label: string }[] } | null {
  if (targets.some((t) => t.kind === 'pattern')) return null;
  const els = topLevelElements(from);
  if (!els) return null;
  const head = els
    .slice(0, 8)
    .map((e) => e.raw)
    .join('');
  if (
    head.replace(/\\\//g, '/') !== '^http://' ||
    els[els.length - 1]?.type !== 'Character' ||
    els[els.length - 1]!.raw.replace('\\', '') !== '/'
  )
    return null;
  // The replacement must spell the match back: literal characters as they are, each capturing
  // group (optional or not) as its `$n`.
  let expected = 'https://';
  let group = 0;
  for (const el of els.slice(8)) {
    if (el.type === 'Character') expected += String.fromCharCode(el.value);
    else if (
      el.type === 'CapturingGroup' ||
      (el.type === 'Quantifier' &&
        el.min === 0 &&
        el.max === 1 &&
        el.element.type === 'CapturingGroup')
    ) {
      const g = el.type === 'CapturingGroup' ? el : (el.element as AST.CapturingGroup);
      if (
        /\((?!\?)/.test(
          g.alternatives
            .map((a) => a.raw)
            .join('|')
            .replace(/\\./g, ''),
        )
      )
        return null;
      expected += `$${++group}`;
    } else return null;
  }
  if (group > 9 || to !== expected || /\$/.test(expected.replace(/\$\d/g, ''))) return null;
  // The reduction holds only for port-less URLs: a host piece that can match ':' could take a port.
  if (els.slice(8, -1).some((e) => mayMatchChar(e, ':'))) return null;
  const re = rulesetRegexOrNull(from);
  if (re === null) return null;
  const hosts: string[] = [];
  const suffixes: string[] = [];
  const oneBelow: { suffix: string; label: string }[] = [];
  const below = openBelow(els.slice(8, -1));
  const one = below === null ? oneLabelBelow(els.slice(8, -1)) : null;
  for (const t of targets) {
    if (t.kind === 'exact') {
      if (re.test(`http://${t.host}/`)) hosts.push(t.host);
      continue;
    }
    const { suffix } = t as { suffix: string };
    // Everything below `*.b` matches, or (by its literal end) nothing can; else a regex it is.
    if (below !== null && (suffix === below || suffix.endsWith(`.${below}`))) suffixes.push(suffix);
    // `([\w-]+)\.b/` under `*.b`: the hosts one label below, deeper ones left to later rules.
    else if (one !== null && suffix === one.domain) oneBelow.push({ suffix, label: one.label });
    else if (below === null || !(below.endsWith(`.${suffix}`) || suffix.endsWith(`.${below}`))) {
      const shape = hostShape(from);
      if (
        shape === null ||
        `.${suffix}`.endsWith(shape.suffix) ||
        shape.suffix.endsWith(`.${suffix}`)
      )
        return null;
    } else return null;
  }
  // Empty lists: the rule matches none of the hosts the ruleset is offered for.
  return { hosts, suffixes, oneBelow };
}

/** Canonical host characters: lowercase letters, digits, `.`, `-`, `_` (punycode for the rest). */
const HOST_CHARS = [...'abcdefghijklmnopqrstuvwxyz0123456789.-_'];

/**
 * The domain `d` when a host part matches every host below it: `(X+)?\.d` or `(X+\.)?d`, where
 * X is a class that takes every host character (dots included). Null for any other shape.
 */
export function openBelow(host: readonly AST.Element[]): string | null {
  const [first, ...rest] = host;
  if (first === undefined || rest.length === 0 || !rest.every((e) => e.type === 'Character'))
    return null;
  let literal = rest.map((e) => String.fromCharCode((e as AST.Character).value)).join('');
  const group =
    first.type === 'Quantifier' && first.min === 0 && first.max === 1 ? first.element : first;
  if (group.type !== 'CapturingGroup' || group.alternatives.length !== 1) return null;
  const [run, dot, ...more] = group.alternatives[0]!.elements;
  if (more.length > 0 || run?.type !== 'Quantifier' || run.min > 1 || run.max !== Infinity)
    return null;
  const cls = run.element;
  if (
    (cls.type !== 'CharacterClass' && cls.type !== 'CharacterSet') ||
    !HOST_CHARS.every((c) => matchesChar(cls, c))
  )
    return null;
  if (dot !== undefined) {
    if (dot.type !== 'Character' || dot.value !== 0x2e) return null;
  } else {
    if (!literal.startsWith('.')) return null;
    literal = literal.slice(1);
  }
  return literal === '' || literal.startsWith('.') ? null : literal;
}

/** Characters that end a host label or the host: a label class must match none of them. */
const LABEL_ENDS = ['.', '/', ':', '@', '?', '#'];

/**
 * The domain `d` and the label class (RE2) when a host part matches exactly one label below it,
 * each character of the class: `(C+)\.d` or `(C+\.)?d` (the latter also `d` itself, which the
 * exact targets cover). Null for any other shape.
 */
export function oneLabelBelow(
  host: readonly AST.Element[],
): { domain: string; label: string } | null {
  const [first, ...rest] = host;
  if (first === undefined || rest.length === 0 || !rest.every((e) => e.type === 'Character'))
    return null;
  let literal = rest.map((e) => String.fromCharCode((e as AST.Character).value)).join('');
  const optional = first.type === 'Quantifier' && first.min === 0 && first.max === 1;
  const group = first.type === 'Quantifier' && optional ? first.element : first;
  if (group.type !== 'CapturingGroup' || group.alternatives.length !== 1) return null;
  const [run, dot, ...more] = group.alternatives[0]!.elements;
  if (more.length > 0 || run?.type !== 'Quantifier' || run.min !== 1 || run.max !== Infinity)
    return null;
  const cls = run.element;
  if (
    (cls.type !== 'CharacterClass' && cls.type !== 'CharacterSet') ||
    LABEL_ENDS.some((c) => matchesChar(cls, c))
  )
    return null;
  if (dot !== undefined) {
    if (dot.type !== 'Character' || dot.value !== 0x2e) return null;
  } else {
    if (optional || !literal.startsWith('.')) return null;
    literal = literal.slice(1);
  }
  if (literal === '' || literal.startsWith('.')) return null;
  const label = translateRegex(cls.raw);
  return label.ok ? { domain: literal, label: label.re2 } : null;
}

export function planRule(ctx: PlanContext, j: number, priority: number): RulePlan | string {
  const rule = ctx.ruleset.rules[j]!;
  const literal =
    literalRule(rule.from, rule.to, priority, ctx.covered, ctx.redirectsUncounted) ??
    slashRunRule(rule.from, rule.to, priority, ctx.covered, ctx.redirectsUncounted) ??
    (ctx.redirectsUncounted ? pathDropRule(rule.from, rule.to, priority, ctx.covered) : null);
  if (literal) return { trivial: false, rules: literal, regexes: 0 };
  const upgrade = schemeOnlyHosts(rule.from, rule.to, ctx.targets);
  if (upgrade)
    return {
      trivial: false,
      upgradeHosts: upgrade.hosts,
      upgradeSuffixes: upgrade.suffixes,
      upgradeOneBelow: upgrade.oneBelow,
      rules: [],
      regexes: 0,
    };
  if (spellsMatchBack(rule.from, rule.to)) {
    const upgrade = upgradeRule(ctx, rule.from, priority);
    if (upgrade !== UNCOVERED_HOSTS) return upgrade;
    // Without a domain list: the alternatives on the targets alone, if they part cleanly.
    const narrowed = narrowToTargets(rule.from, ctx.targets);
    if (narrowed === null) return upgrade;
    return narrowed === ''
      ? { trivial: false, rules: [], regexes: 0 }
      : upgradeRule(ctx, narrowed, priority);
  }
  const redirect = redirectRule(ctx, rule.from, rule.to, priority);
  if (redirect === OVER_BUDGET)
    return splitHostRedirect(ctx, rule.from, rule.to, priority) ?? redirect;
  if (typeof redirect === 'string') return redirect;
  return redirect === null
    ? { trivial: false, rules: [], regexes: 0 }
    : { trivial: false, regexes: 1, rules: [redirect] };
}

/**
 * A redirect of the URLs `source` matches to `to` by regex substitution; null when it matches no
 * URL of a target host, else the reason it cannot be one.
 */
function redirectRule(
  ctx: PlanContext,
  source: string,
  to: string,
  priority: number,
): Planned | string | null {
  const rc = regexCondition(ctx, source, { rewriteTo: to });
  if (rc === null || typeof rc === 'string') return rc;
  const substitution = translateReplacement(to, rc.captures);
  if (substitution === null)
    return "replacement uses $`, $' or a group number RE2 cannot substitute";
  return {
    priority,
    action: { type: 'redirect', redirect: { regexSubstitution: substitution } },
    condition: rc.condition,
  };
}

/**
 * Whether `to` writes back exactly what `from` matched, on https: `^http://` and then only
 * literal characters and capturing groups (optional ones too), each copied as its `$n`.
 */
export function spellsMatchBack(from: string, to: string): boolean {
  const els = topLevelElements(from);
  if (!els || els.length < 8) return false;
  const head = els
    .slice(0, 8)
    .map((e) => e.raw)
    .join('');
  if (head.replace(/\\\//g, '/') !== '^http://') return false;
  let expected = 'https://';
  let groups = 0;
  for (const el of els.slice(8)) {
    if (el.type === 'Character') {
      const c = String.fromCharCode(el.value);
      if (c === '$') return false;
      expected += c;
      continue;
    }
    const g = el.type === 'Quantifier' && el.min === 0 && el.max === 1 ? el.element : el;
    if (g.type !== 'CapturingGroup') return false;
    // Numbered by opening parenthesis: this one, then the ones nested in it.
    const n = ++groups;
    groups += captureCount(g.raw.slice(1, -1).replace(/^\?<[^>]*>/, ''));
    if (n > 9) return false;
    expected += `$${n}`;
  }
  return to === expected;
}

/**
 * A rule that only changes the scheme of what it matches is an `upgradeScheme` where it
 * matches: its regex needs no captures, and a large alternation can be split (any piece that
 * matches gives the same URL), as many pieces as the size limit asks.
 */
function upgradeRule(ctx: PlanContext, from: string, priority: number): RulePlan | string {
  const pieces = splitToFit(from, ctx.maxInstructions);
  if (pieces === null) return OVER_BUDGET;
  const rules = regexPieceRules(ctx, pieces, 'upgrade', { type: 'upgradeScheme' }, priority);
  if (typeof rules === 'string') return rules;
  return { trivial: false, rules, regexes: rules.length };
}

/** Characters a literal host alternative must not hold: they end the host or stand before it. */
const NOT_IN_HOST = new Set([...'/:@?#'].map((c) => c.charCodeAt(0)));

/**
 * A redirect too large for one regex whose host is literal but for one alternation of literal
 * names (`^http://(a|b|c)\.example\.com/…` → `https://www.example.com/$1/`): one redirect per
 * run of names that fits. The host decides the name, so no two pieces match the same URL and
 * DNR's choice among equal priorities never matters. Null for any other shape.
 */
function splitHostRedirect(
  ctx: PlanContext,
  from: string,
  to: string,
  priority: number,
): RulePlan | null {
  const els = topLevelElements(from);
  if (
    !els ||
    els.length < 10 ||
    !from.startsWith('^http://') ||
    hostShape(from)?.delimited !== true
  )
    return null;
  const isChar = (e: AST.Element | AST.Alternative['elements'][number]) =>
    e.type === 'Character' && !NOT_IN_HOST.has(e.value);
  const at = els.findIndex((e, i) => i >= 8 && !isChar(e));
  const g = els[at];
  if (
    g === undefined ||
    (g.type !== 'Group' && g.type !== 'CapturingGroup') ||
    g.alternatives.length < 2
  )
    return null;
  if (!g.alternatives.every((a) => a.elements.length > 0 && a.elements.every(isChar))) return null;
  // The host goes on as literal characters up to the `/` or `:` that ends it.
  let end = at + 1;
  while (end < els.length && isChar(els[end]!)) end++;
  const delimiter = els[end];
  if (delimiter?.type !== 'Character' || (delimiter.value !== 0x2f && delimiter.value !== 0x3a))
    return null;
  const before = from.slice(0, g.start);
  const after = from.slice(g.end);
  const open = g.type === 'CapturingGroup' ? '(' : '(?:';
  const wrap = (alts: readonly string[]) => `${before}${open}${alts.join('|')})${after}`;
  const fits = (source: string) => {
    const tr = translateRegex(source, insertedGroups(to, captureCount(source)));
    return tr.ok && tr.estimatedInstructions <= ctx.maxInstructions;
  };
  const pieces = runsThatFit(
    g.alternatives.map((x) => x.raw),
    wrap,
    fits,
    MAX_PIECES,
  );
  if (pieces === null) return null;
  const rules: Planned[] = [];
  for (const piece of pieces) {
    const redirect = redirectRule(ctx, piece, to, priority);
    if (typeof redirect === 'string') return null;
    if (redirect !== null) rules.push(redirect);
  }
  return { trivial: false, rules, regexes: rules.length };
}

/**
 * Rules with a lookahead: the prefix before a trailing lookahead becomes filters (positive: only
 * the carved URLs; negative: everything else, with the carved URLs handed one priority step up
 * to whatever the following rules do); `^http://(?!A)rest` becomes a regex for `rest` plus
 * carve-outs. A positive lookahead that needs a substitution is captured and put back (`\N`).
 */
export function planLookaroundRule(
  ctx: PlanContext,
  j: number,
  priority: number,
): RulePlan | string {
  const rule = ctx.ruleset.rules[j]!;
  const shape = analyzeLookaround(rule.from);
  if (!shape) return 'lookaround that cannot be rewritten without it';
  const captures = captureCount(rule.from);
  const filterRule = (
    p: number,
    action: DnrAction,
    text: string,
    exact: boolean,
    domains: Partial<DnrCondition> = {},
  ): Planned => ({
    priority: p,
    action,
    condition: {
      urlFilter: prefixFilter(text, exact),
      ...caseSensitive,
      ...domains,
      ...ALL_TYPES(),
    },
  });
  const carveOuts = (carved: CarvedPrefix[], scoped: boolean): Planned[] | string => {
    const out: Planned[] = [];
    for (const c of carved) {
      if (!urlFilterSafe(c.text)) return 'lookahead text cannot be a URL filter';
      let domains: Partial<DnrCondition> = {};
      if (!scoped) {
        const host = splitHttpPrefix(c.text)?.host;
        if (host === undefined || !ctx.covered(host)) continue;
      }
      const action = fallthroughAction(ctx.ruleset.rules, j + 1, c.text, c.exact);
      if (action === null) return 'the rules after a negative lookahead differ across its URLs';
      if (scoped) {
        const d =
          action === 'none' ? hostCondition(ctx, [c.text]) : rewriteDomains(ctx, [c.text], null);
        if (typeof d === 'string') return `carved-out URLs ${d}`;
        if (d === null) continue;
        domains = d;
      }
      // No later rule applies: the ruleset leaves these URLs alone.
      out.push(
        filterRule(
          priority + 1,
          action === 'none' ? { type: 'allow' } : action,
          c.text,
          c.exact,
          domains,
        ),
      );
    }
    return out;
  };

  if (shape.kind === 'leading') {
    const rc = regexCondition(ctx, shape.restSource, { rewriteTo: rule.to });
    if (typeof rc === 'string') return rc;
    if (rc === null) return { trivial: false, rules: [], regexes: 0 };
    const substitution = translateReplacement(rule.to, rc.captures);
    if (substitution === null)
      return "replacement uses $`, $' or a group number RE2 cannot substitute";
    const carved = carveOuts(shape.carved, true);
    if (typeof carved === 'string') return carved;
    const main: Planned = {
      priority,
      action: { type: 'redirect', redirect: { regexSubstitution: substitution } },
      condition: rc.condition,
    };
    return { trivial: false, regexes: 1, rules: [main, ...carved] };
  }

  const out: Planned[] = [];
  if (!shape.negate) {
    let literalOk = shape.prefix !== null;
    for (const c of literalOk ? shape.carved : []) {
      const e = shape.prefix!.expansions[c.prefixIndex]!;
      const host = splitHttpPrefix(c.prefix.text)?.host;
      const action = literalAction(e, false, rule.to, captures);
      if (!action || !urlFilterSafe(c.prefix.text) || host === undefined) {
        literalOk = false;
        break;
      }
      if (ctx.covered(host)) out.push(filterRule(priority, action, c.prefix.text, c.prefix.exact));
    }
    if (literalOk) return { trivial: false, rules: out, regexes: 0 };
    if (!shape.capturingSource) return 'lookahead cannot be captured';
    const rc = regexCondition(ctx, shape.capturingSource, { rewriteTo: rule.to });
    if (typeof rc === 'string') return rc;
    if (rc === null) return { trivial: false, rules: [], regexes: 0 };
    const substitution = translateReplacement(rule.to, captures);
    if (substitution === null || captures + 1 > 9)
      return "replacement uses $`, $' or a group number RE2 cannot substitute";
    return {
      trivial: false,
      regexes: 1,
      rules: [
        {
          priority,
          action: {
            type: 'redirect',
            redirect: { regexSubstitution: `${substitution}\\${captures + 1}` },
          },
          condition: rc.condition,
        },
      ],
    };
  }

  if (!shape.prefix) return 'negative lookahead after a prefix that needs a regex';
  const run = shape.collapsedRun;
  for (const e of shape.prefix.expansions) {
    const parts = splitHttpPrefix(e.text);
    const action = literalAction(e, false, rule.to, captures);
    if (!parts || parts.rest === '' || !action || !urlFilterSafe(e.text))
      return 'negative lookahead after a prefix that needs a regex';
    if (!ctx.covered(parts.host)) continue;
    out.push(filterRule(priority, action, e.text, false));
    // `/+(?!A)` replaces the whole run of slashes, which a prefix action cannot: a URL with two
    // or more is left alone (missed, never rewritten differently from the reference).
    if (run !== null) {
      if (!urlFilterSafe(e.text + run))
        return 'negative lookahead after a run that cannot be a URL filter';
      out.push(filterRule(priority + 1, { type: 'allow' }, e.text + run, false));
    }
  }
  const carved = carveOuts(
    shape.carved.map((c) => c.prefix),
    false,
  );
  if (typeof carved === 'string') return carved;
  return { trivial: false, rules: [...out, ...carved], regexes: 0 };
}

/**
 * A rule whose `from` is a finite set of URL prefixes becomes regex-free DNR rules (see
 * `literalAction`). Null when any prefix needs a real substitution.
 */
export function literalRule(
  from: string,
  to: string,
  priority: number,
  covered: (host: string) => boolean,
  digits = false,
): Planned[] | null {
  const lit = expandLiteralLanguage(from, 32, { digits });
  // `$&` would be the whole URL, which a filter does not know.
  if (!lit || (lit.consumesRest && to.includes('$&'))) return null;
  const captures = captureCount(from);
  const out: Planned[] = [];
  for (const e of lit.expansions) {
    const parts = splitHttpPrefix(e.text);
    if (!parts || !urlFilterSafe(e.text)) return null;
    const exact = e.exact === true;
    const action = literalAction(e, exact || lit.consumesRest, to, captures);
    if (!action) return null;
    // The reference only applies a ruleset to its targets; prefixes for other hosts never fire.
    if (!covered(parts.host)) continue;
    // A prefix ending inside the host name cannot be told apart from longer hosts by a filter;
    // `^` pins it to exactly this host (a longer host is left unrewritten, never mis-rewritten).
    const boundary = parts.rest === '' && !exact ? '^' : '';
    out.push({
      priority,
      action,
      condition: {
        urlFilter: `|${e.text}${boundary}${exact ? '|' : ''}`,
        ...caseSensitive,
        ...ALL_TYPES(),
      },
    });
  }
  return out;
}

/**
 * `^http://host/+`, whose replacement swallows a whole run of slashes (`^http://example\.com/+`
 * → `https://www.example.com/`): the one-slash URLs as literalRule has them, and an `allow` one
 * step up for two slashes or more, which a prefix action would keep (missed, never rewritten
 * differently). Null when the rule has another shape.
 */
export function slashRunRule(
  from: string,
  to: string,
  priority: number,
  covered: (host: string) => boolean,
  digits = false,
): Planned[] | null {
  const els = topLevelElements(from);
  const last = els?.[els.length - 1];
  if (last?.type !== 'Quantifier' || last.min !== 1 || last.max !== Infinity || !last.greedy)
    return null;
  if (last.element.type !== 'Character' || last.element.value !== 0x2f) return null;
  const rules = literalRule(
    from.slice(0, last.start) + last.element.raw,
    to,
    priority,
    covered,
    digits,
  );
  if (!rules || rules.some((r) => !r.condition.urlFilter?.endsWith('/'))) return null;
  return rules.flatMap((r) => [
    r,
    {
      priority: priority + 1,
      action: { type: 'allow' },
      condition: { ...r.condition, urlFilter: `${r.condition.urlFilter}/` },
    },
  ]);
}

/** A path DNR may write as it is: URL path characters that canonical URLs keep unchanged. */
const PLAIN_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;

/**
 * `^http://host/path[^?]*` → `https://other/new`: the reference replaces the path (up to the
 * query) and keeps the query, as a `transform` of scheme, host and path does: one regex-free
 * redirect per literal prefix (for the static set: where a redirect limit counts them, one regex
 * serves better). Null for any other shape.
 */
export function pathDropRule(
  from: string,
  to: string,
  priority: number,
  covered: (host: string) => boolean,
): Planned[] | null {
  const els = topLevelElements(from);
  const last = els?.[els.length - 1];
  if (last?.type !== 'Quantifier' || last.min !== 0 || last.max !== Infinity) return null;
  const cls = last.element;
  if (
    cls.type !== 'CharacterClass' ||
    !cls.negate ||
    cls.elements.length !== 1 ||
    cls.elements[0]!.type !== 'Character' ||
    cls.elements[0].value !== 0x3f
  )
    return null;
  // `$&` would hold the path the run took.
  if (to.includes('$&')) return null;
  const lit = expandLiteralLanguage(from.slice(0, last.start), 32, { digits: true });
  if (!lit || lit.consumesRest || lit.expansions.some((e) => e.exact === true)) return null;
  const captures = captureCount(from);
  const out: Planned[] = [];
  for (const e of lit.expansions) {
    const parts = splitHttpPrefix(e.text);
    if (!parts?.rest.startsWith('/') || /[?#]/.test(e.text) || !urlFilterSafe(e.text)) return null;
    const target = substituteReplacement(to, e.text, e.groups, captures);
    const m = target === null ? null : /^(https?):\/\/([a-z0-9.-]+)(\/.*)$/s.exec(target);
    if (!m || !PLAIN_PATH.test(m[3]!)) return null;
    if (!covered(parts.host)) continue;
    out.push({
      priority,
      action: {
        type: 'redirect',
        redirect: { transform: { scheme: m[1]!, host: m[2]!, path: m[3]! } },
      },
      condition: { urlFilter: prefixFilter(e.text, false), ...caseSensitive, ...ALL_TYPES() },
    });
  }
  return out;
}
