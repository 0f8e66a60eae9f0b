/**
 * Hosts written with a trailing dot (`http://example.com./`): the reference strips the dots
 * before it applies any rule, so `example.com.` is rewritten exactly as `example.com` is.
 * Chromium matches `requestDomains` ignoring those dots, but the compiled filters spell hosts
 * without them (`|http://example.com/`, a host-group regex ending at `[:/?#]`), so none fires.
 * Regex rules take the dots off, scheme and all else kept; Chromium evaluates the rules again
 * for the redirected request, so the compiled rules apply to the same URL as the reference's.
 *
 * A dotless host is another origin (cookies, storage), so the dots come off only where the
 * dotless URL is then surely rewritten to https: hosts that one ruleset alone covers, compiled
 * whole, with no exclusion that may match them, whose rules send every port-less URL of the
 * host to https (a trivial rule, a scheme-only host list or a literal swap of the host's root,
 * after rules that all lead to https). Each host
 * shape (exactly n labels; at least n for `*.` targets) is one rule, as `requestDomains` also
 * admits subdomains. Main frames are left to the handoff page.
 */
import type { AST } from '@eslint-community/regexpp';
import type { Ruleset } from '../model/ruleset.js';
import { expandLiteralLanguage, literalPrefixes } from '../regex/literal-language.js';
import { anchoredElements } from '../regex/pattern-ast.js';
import { mayMatchChar } from './host-labels.js';
import { splitHttpPrefix, type ClassifiedTarget } from './hosts.js';
import type { Planned, RulesetPlan } from './plan.js';
import { ALL_RESOURCE_TYPES } from './types.js';

const LABEL = '[^./?#:@]+';

/**
 * A host of exactly (`atLeast`: at least) `labels` labels, ending in dots, then the path (or a
 * port, with `port`) or the end; no credentials. `\1` is the host without its dots, `\2` what
 * follows.
 */
export function trailingDotRegex(labels: number, atLeast: boolean, port = false): string {
  const rest = labels - 1;
  const count = atLeast ? `{${rest},}` : rest === 1 ? '' : `{${rest}}`;
  const host = rest === 0 ? LABEL : `(?:${LABEL}\\.)${count}${LABEL}`;
  return `^http://(${host})\\.+(${port ? '[:/]' : '/'}|$)`;
}

/** One shape of dotted hosts: the regex and the domains it is limited to. */
export interface DottedGroup {
  labels: number;
  atLeast: boolean;
  /** With a port too: a trivial rule takes every URL of these hosts. */
  port: boolean;
  domains: string[];
}

export function shapeKey(g: DottedGroup): string {
  return `${g.labels}${g.atLeast ? '+' : ''}${g.port ? ':' : ''}`;
}

/** The rule that drops the trailing dots of one group's hosts. */
export function trailingDotRule(group: DottedGroup, priority: number): Planned {
  return {
    priority,
    action: { type: 'redirect', redirect: { regexSubstitution: 'http://\\1\\2' } },
    condition: {
      regexFilter: trailingDotRegex(group.labels, group.atLeast, group.port),
      requestDomains: [...group.domains],
      resourceTypes: ALL_RESOURCE_TYPES.filter((t) => t !== 'main_frame'),
      isUrlFilterCaseSensitive: false,
    },
  };
}

/** Where each active ruleset's targets sit, to find hosts that more than one ruleset covers. */
class TargetIndex {
  private readonly exact = new Map<string, Set<Ruleset>>();
  private readonly left = new Map<string, Set<Ruleset>>();
  /** Every proper suffix of an exact or `*.` target, with the rulesets below it. */
  private readonly below = new Map<string, Set<Ruleset>>();
  private readonly patterns: { labels: string[]; ruleset: Ruleset }[] = [];

  constructor(entries: Iterable<{ ruleset: Ruleset; targets: readonly ClassifiedTarget[] }>) {
    for (const { ruleset, targets } of entries) {
      for (const t of targets) {
        if (t.kind === 'pattern') {
          this.patterns.push({ labels: t.host.split('.'), ruleset });
          continue;
        }
        const host = t.kind === 'exact' ? t.host : t.suffix;
        if (t.kind === 'exact') add(this.exact, host, ruleset);
        else {
          add(this.left, host, ruleset);
          add(this.below, host, ruleset);
        }
        for (let at = host.indexOf('.'); at >= 0; at = host.indexOf('.', at + 1))
          add(this.below, host.slice(at + 1), ruleset);
      }
    }
  }

  /**
   * Whether a ruleset other than `own` may be offered for `host`, or may fence it off: any
   * other exact or `*.` target at the host or above it (their `allow` fences reach below).
   */
  othersAt(host: string, own: Ruleset): boolean {
    if (others(this.exact.get(host), own)) return true;
    for (let at = host.indexOf('.'); at >= 0; at = host.indexOf('.', at + 1)) {
      const up = host.slice(at + 1);
      if (others(this.exact.get(up), own) || others(this.left.get(up), own)) return true;
    }
    const labels = host.split('.');
    return this.patterns.some(
      (p) =>
        p.ruleset !== own &&
        p.labels.length === labels.length &&
        p.labels.every((l, i) => l === '*' || l === labels[i]),
    );
  }

  /** The same for every host below `suffix` (conservative). */
  othersBelow(suffix: string, own: Ruleset): boolean {
    if (others(this.below.get(suffix), own) || this.othersAt(suffix, own)) return true;
    const labels = suffix.split('.');
    return this.patterns.some((p) => {
      if (p.ruleset === own || p.labels.length <= labels.length) return false;
      const tail = p.labels.slice(p.labels.length - labels.length);
      return tail.every((l, i) => l === '*' || l === labels[i]);
    });
  }
}

function add(map: Map<string, Set<Ruleset>>, key: string, ruleset: Ruleset): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(ruleset);
}

function others(set: Set<Ruleset> | undefined, own: Ruleset): boolean {
  return set !== undefined && (set.size > 1 || !set.has(own));
}

/**
 * The hosts whose dotted form may lose its dots (see above), grouped by shape. `active` lists
 * every active ruleset's targets (compiled or not); `complete(plan)` says whether a plan is
 * compiled with nothing left out.
 */
export function dottedGroups(
  plans: readonly RulesetPlan[],
  active: Iterable<{ ruleset: Ruleset; targets: readonly ClassifiedTarget[] }>,
  complete: (plan: RulesetPlan) => boolean,
): DottedGroup[] {
  const index = new TargetIndex(active);
  const groups = new Map<string, DottedGroup>();
  const put = (labels: number, atLeast: boolean, port: boolean, domain: string): void => {
    const key = shapeKey({ labels, atLeast, port, domains: [] });
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { labels, atLeast, port, domains: [] }));
    g.domains.push(domain);
  };
  for (const plan of plans) {
    const { ruleset } = plan;
    if (plan.rules.length === 0 || !complete(plan)) continue;
    for (const t of plan.targets) {
      if (t.kind === 'pattern') continue;
      const host = t.kind === 'exact' ? t.host : t.suffix;
      const covering = ruleset.exclusions.some((x) => mayExclude(x.pattern, t))
        ? null
        : coveringRule(plan, t);
      if (covering === null) continue;
      if (t.kind === 'exact') {
        if (!index.othersAt(host, ruleset)) put(t.labels, false, covering === 'any', host);
      } else if (!index.othersBelow(host, ruleset)) {
        // `*.x` with a one-label x covers exactly one more label; otherwise any depth.
        put(t.labels + 1, t.labels >= 2, covering === 'any', host);
      }
    }
  }
  const out = [...groups.values()];
  for (const g of out) g.domains = [...new Set(g.domains)].sort();
  return out.sort(
    (a, b) =>
      a.labels - b.labels ||
      Number(a.atLeast) - Number(b.atLeast) ||
      Number(a.port) - Number(b.port),
  );
}

/**
 * Whether one of the plan's rules takes every port-less URL of the target's hosts (`path`: a
 * scheme-only list holding the target, a literal swap of the host's root) or every URL (`any`:
 * a trivial rule), after rules that all lead to https, none of them compiled with an `allow`
 * that may leave some of the hosts' URLs alone (`//` paths). Null when none does.
 */
function coveringRule(plan: RulesetPlan, t: ClassifiedTarget): 'any' | 'path' | null {
  for (let j = 0; j < plan.rules.length; j++) {
    const r = plan.rules[j]!;
    if (!/^https:/i.test(plan.ruleset.rules[j]!.to)) return null;
    if (r.rules.some((x) => x.action.type === 'allow' && mayAllow(x, t))) return null;
    if (r.trivial) return 'any';
    if (t.kind === 'exact' && r.upgradeHosts?.includes(t.host)) return 'path';
    if (t.kind === 'left' && r.upgradeSuffixes?.includes(t.suffix)) return 'path';
    // A literal prefix swap of the host's whole root (`^http://(www\.)?a\.com/`).
    if (
      t.kind === 'exact' &&
      expandLiteralLanguage(plan.ruleset.rules[j]!.from)?.expansions.some(
        (e) => !e.exact && e.text === `http://${t.host}/`,
      )
    )
      return 'path';
  }
  return null;
}

/** Whether an exclusion may match a URL of the target's hosts: unless each of its prefixes names another host. */
function mayExclude(pattern: string, t: ClassifiedTarget): boolean {
  const prefixes = literalPrefixes(pattern);
  if (prefixes === null || prefixes.length === 0) return true;
  return prefixes.some((p) => {
    const split = splitHttpPrefix(p);
    if (split === null || split.rest === '' || !/^[:/?#]/.test(split.rest)) return true;
    return coversHost(t, split.host.toLowerCase());
  });
}

/** Whether an `allow` may match a URL of the target's hosts: unless its filter names another host. */
function mayAllow(rule: Planned, t: ClassifiedTarget): boolean {
  const m = /^\|https?:\/\/([a-z0-9.-]+)[/:?^]/.exec(rule.condition.urlFilter ?? '');
  if (!m || rule.condition.regexFilter !== undefined) return true;
  return coversHost(t, m[1]!);
}

/** Whether `host` is the target's host, or lies below its `*.` suffix (patterns: assume so). */
function coversHost(t: ClassifiedTarget, host: string): boolean {
  if (t.kind === 'exact') return host === t.host;
  if (t.kind === 'left') return host === t.suffix || host.endsWith(`.${t.suffix}`);
  return true;
}

/**
 * A `^http://` regex whose host ends in a run of a class that takes dots (`([^/]+)/`,
 * `([\w.]+)/`) would match a dotted host (`http://a.b./`) and carry the dot into the result
 * (`https://www.a.b./`), where the reference, which strips the dots before any rule, gives
 * `https://www.a.b/`. As a DNR filter the run is spelled so that it cannot end with a dot
 * (`[^/]*[^/.]`): undotted URLs match exactly as before, with the same captures (the run is
 * the whole host either way), and a dotted one is left to the trailing-dot rule or missed,
 * never sent elsewhere. Returns the source unchanged for any other shape.
 */
export function hostRunWithoutTrailingDot(source: string): string {
  const elements = anchoredElements(source);
  if (elements === null) return source;
  // `http`, an optional `s`, `://`; then the first top-level `/` or `:` ends the host.
  const isChar = (el: AST.Element | undefined, c: string): boolean =>
    el?.type === 'Character' && el.value === c.charCodeAt(0);
  let i = 0;
  for (const c of 'http') if (!isChar(elements[i++], c)) return source;
  const s = elements[i];
  if (
    s?.type === 'Quantifier' &&
    s.min === 0 &&
    s.max === 1 &&
    isChar(s.element as AST.Element, 's')
  )
    i++;
  for (const c of '://') if (!isChar(elements[i++], c)) return source;
  // Nothing before the first top-level `/` may read a `/`: then the run ends at the first `/`
  // of the URL, which in a canonical http URL follows the host (or its port) directly.
  let delimiter = i;
  while (delimiter < elements.length && !isChar(elements[delimiter], '/')) delimiter++;
  if (delimiter >= elements.length || delimiter === i) return source;
  const before = elements.slice(i, delimiter - 1);
  let last: AST.Element | undefined = elements[delimiter - 1];
  // The run may close a group of one alternative (`(www\.)?([^/]+)/`).
  while (
    (last?.type === 'CapturingGroup' || last?.type === 'Group') &&
    last.alternatives.length === 1
  ) {
    const inner: AST.Element[] = last.alternatives[0]!.elements;
    before.push(...inner.slice(0, -1));
    last = inner[inner.length - 1];
  }
  if (last?.type !== 'Quantifier' || last.min !== 1 || last.max !== Infinity || !last.greedy)
    return source;
  const cls = last.element;
  if (
    cls.type !== 'CharacterClass' ||
    cls.unicodeSets ||
    mayMatchChar(cls, '/') ||
    before.some((el) => mayMatchChar(el, '/'))
  )
    return source;
  const noDot = classWithoutDot(cls);
  if (noDot === null) return source;
  return `${source.slice(0, last.start)}${cls.raw}*${noDot}${source.slice(last.end)}`;
}

/** The class without `.`, spelled from its parts; null when it has no dot or a part that is unclear. */
function classWithoutDot(cls: AST.CharacterClass): string | null {
  if (cls.negate) return cls.raw.includes('.') ? null : `${cls.raw.slice(0, -1)}\\.]`;
  let hasDot = false;
  const parts: string[] = [];
  for (const el of cls.elements) {
    if (el.type === 'Character') {
      if (el.value === 0x2e) hasDot = true;
      else parts.push(el.raw);
    } else if (el.type === 'CharacterClassRange') {
      if (el.min.value <= 0x2e && el.max.value >= 0x2e) return null;
      parts.push(el.raw);
    } else if (
      el.type === 'CharacterSet' &&
      (el.kind === 'digit' || el.kind === 'word' || el.kind === 'space') &&
      !el.negate
    ) {
      parts.push(el.raw);
    } else return null;
  }
  return hasDot && parts.length > 0 ? `[${parts.join('')}]` : null;
}
