/**
 * Host conditions for compiled rules: DNR domain lists admit every subdomain, the reference only
 * its targets; fences (`allow`) and regex host checks keep rules to the targets.
 */
import { hostPatterns, hostShape, type HostShape } from './host-labels.js';
import { splitHttpPrefix, type ClassifiedTarget } from './hosts.js';
import { literalPrefixes } from '../regex/literal-language.js';
import { translateRegex } from './re2.js';
import { hostRunWithoutTrailingDot } from './trailing-dots.js';
import { captureCount } from '../regex/pattern-ast.js';
import { insertedGroups } from '../regex/replacement.js';
import type { DnrAction, DnrCondition } from './types.js';
import { ALL_TYPES, caseSensitive, type PlanContext, type Planned } from './plan.js';

/**
 * A DNR domain condition admits every subdomain of its entries, while the reference offers a
 * ruleset only for its targets. Where a rewrite could reach past them, `allow` fences (at the
 * ruleset's exclusion priority) take the ruleset off those hosts: below an exact target `a.b`
 * the hosts no other target covers (`|http://*.a.b^`, the covered ones excepted), `b` itself
 * under `*.b`, and more than one extra label under a single-label `*.b`; for https:// URLs too
 * when the rewrite may match them (`^https?://`, or a regex that says nothing). Other rulesets'
 * rules there may be hidden as well: missed, never rewritten differently.
 */
export function fence(
  ctx: PlanContext,
  targets: readonly ClassifiedTarget[],
  https: boolean,
): void {
  const add = (key: string, filter: string, domain: string, below: boolean): void => {
    for (const scheme of https ? ['http', 'https'] : ['http'])
      fenceFor(`${scheme} ${key}`, `|${scheme}://${filter}`, domain, below);
  };
  const fenceFor = (key: string, urlFilter: string, domain: string, below: boolean): void => {
    if (ctx.fences.has(key)) return;
    // Hosts a target covers stay open (their own subtrees are fenced when reachable).
    const inside = below
      ? ctx.targets
          .flatMap((t) => (t.kind === 'exact' ? [t.host] : t.kind === 'left' ? [t.suffix] : []))
          .filter((h) => h.endsWith(`.${domain}`))
      : [];
    ctx.fences.set(key, {
      priority: ctx.allowPriority,
      action: { type: 'allow' },
      condition: {
        urlFilter,
        ...caseSensitive,
        requestDomains: [domain],
        ...(inside.length > 0 ? { excludedRequestDomains: [...new Set(inside)].sort() } : {}),
        ...ALL_TYPES(),
      },
    });
  };
  for (const t of targets) {
    if (t.kind === 'exact') add(`below ${t.host}`, `*.${t.host}^`, t.host, true);
    else if (t.kind === 'left') {
      if (!ctx.covered(t.suffix)) add(`at ${t.suffix}`, `${t.suffix}^`, t.suffix, false);
      if (t.labels === 1) add(`deep ${t.suffix}`, `*.*.${t.suffix}^`, t.suffix, false);
    }
  }
}

export const OVER_BUDGET = 'regex over the 2 KB RE2 budget (estimated)';
export const UNCOVERED_HOSTS =
  'may match hosts no target covers (right or middle wildcard targets have no DNR domain list)';

/**
 * A regex condition, or the reason it cannot be one; null when the regex matches no URL of a
 * host the ruleset targets (the reference never applies it: nothing to compile).
 */
export function regexCondition(
  ctx: PlanContext,
  source: string,
  use: 'allow' | 'upgrade' | { rewriteTo: string },
): { condition: DnrCondition; captures: number } | string | null {
  // Only a substitution needs captures (Chromium compiles the others without them). A rewrite
  // must not take a dotted host the reference would see without its dots (trailing-dots.ts).
  const filter = use === 'allow' ? source : hostRunWithoutTrailingDot(source);
  const tr = translateRegex(
    filter,
    typeof use === 'string' ? undefined : insertedGroups(use.rewriteTo, captureCount(source)),
  );
  if (!tr.ok) return tr.reason;
  if (tr.estimatedInstructions > ctx.maxInstructions) return OVER_BUDGET;
  const prefixes = literalPrefixes(source);
  // An `allow` that reaches too far only leaves URLs alone; a rewrite must stay on the targets.
  const domains =
    use === 'allow' ? hostCondition(ctx, prefixes) : rewriteDomains(ctx, prefixes, source);
  if (domains === null || typeof domains === 'string') return domains;
  return {
    condition: { regexFilter: tr.re2, ...caseSensitive, ...domains, ...ALL_TYPES() },
    captures: tr.captures,
  };
}

/**
 * One rule with `action` per piece of a split regex (splitToFit: every piece gives the same
 * URL), or the reason a piece cannot be one; pieces that match no target URL are left out.
 */
export function regexPieceRules(
  ctx: PlanContext,
  pieces: readonly string[],
  use: 'allow' | 'upgrade',
  action: DnrAction,
  priority: number,
): Planned[] | string {
  const rules: Planned[] = [];
  for (const piece of pieces) {
    const rc = regexCondition(ctx, piece, use);
    if (typeof rc === 'string') return rc;
    if (rc !== null) rules.push({ priority, action, condition: rc.condition });
  }
  return rules;
}

/**
 * The domain condition of a rewrite whose URLs start with one of `prefixes` (null: unknown),
 * by `regex` (null: a URL filter with those prefixes). Where it is the ruleset-wide one, what
 * the rewrite could reach past the targets is fenced off. With no domain list to fence (right
 * or middle wildcard targets) every host pattern the regex spells must be a covered one, or
 * that is the reason it cannot be compiled.
 */
export function rewriteDomains(
  ctx: PlanContext,
  prefixes: readonly string[] | null,
  regex: string | null,
): Partial<DnrCondition> | string | null {
  const domains = hostCondition(ctx, prefixes);
  if (domains !== ctx.domainCondition) return domains;
  if (ctx.domainCondition.requestDomains === undefined) {
    const patterns = regex === null ? null : hostPatterns(regex);
    if (patterns === null || !patterns.every((p) => patternCovered(ctx.targets, p)))
      return UNCOVERED_HOSTS;
    return domains;
  }
  const shape = regex === null ? null : hostShape(regex);
  fence(ctx, uncoveredReach(ctx, shape), shape?.https ?? true);
  return domains;
}

/** Whether one target covers every host of `pattern` (labels, `*` for an unknown one). */
export function patternCovered(targets: readonly ClassifiedTarget[], pattern: string): boolean {
  const labels = pattern.split('.');
  return targets.some((t) => {
    if (t.kind === 'exact') return !labels.includes('*') && pattern === t.host;
    if (t.kind === 'left') {
      const extra = labels.length - t.labels;
      return (
        (extra === 1 || (extra > 1 && t.labels >= 2)) &&
        !labels.slice(extra).includes('*') &&
        labels.slice(extra).join('.') === t.suffix
      );
    }
    const want = t.host.split('.');
    return (
      want.length === labels.length &&
      want.every((label, i) => label === '*' || (labels[i] !== '*' && labels[i] === label))
    );
  });
}

/**
 * The domain condition of a filter whose URLs all start with one of `prefixes`. The
 * ruleset-wide `requestDomains` also admits every subdomain of a target, so a regex naming an
 * untargeted subdomain (`^http://wwwimages\.adobe\.com/` beside the target `adobe.com`) would
 * fire where the reference never offers the ruleset. When each prefix spells out its whole
 * host, the condition lists just the covered ones among them (and excludes uncovered ones
 * beneath them); null when none is covered. Open-ended hosts keep the ruleset-wide condition.
 */
export function hostCondition(
  ctx: PlanContext,
  prefixes: readonly string[] | null,
): Partial<DnrCondition> | null {
  const hosts = prefixes === null ? null : wholeHosts(prefixes);
  if (hosts === null) return ctx.domainCondition;
  const covered = hosts.filter(ctx.covered).sort();
  if (covered.length === 0) return null;
  const excluded = hosts
    .filter((h) => !ctx.covered(h) && covered.some((c) => h.endsWith(`.${c}`)))
    .sort();
  return excluded.length > 0
    ? { requestDomains: covered, excludedRequestDomains: excluded }
    : { requestDomains: covered };
}

/**
 * The targets under which a rewrite of hosts shaped so (null: unknown) may match hosts that the
 * ruleset-wide domain list admits but no target covers. Below an exact target `a.b` the regex
 * must not reach (more labels than the target has, under a suffix compatible with it) unless a
 * `*.` target covers everything there; at `*.b` it must not match `b` itself (unless `b` is a
 * target too), nor more than one extra label when `b` is a single label. (Rulesets with right or
 * middle wildcards have no domain list; their rules are checked by host pattern instead.)
 */
export function uncoveredReach(ctx: PlanContext, shape: HostShape | null): ClassifiedTarget[] {
  // A host nothing is known of may be any host.
  const { min, max, suffix } = shape ?? { min: 0, max: Infinity, suffix: '' };
  // Could a host below `host` match, given the literal suffix the regex's hosts end with?
  const belowMatches = (host: string) => `.${host}`.endsWith(suffix) || suffix.endsWith(`.${host}`);
  // Every host below `*.b` is covered when `b` has two labels or more.
  const subtreeCovered = (host: string) =>
    ctx.targets.some(
      (t) =>
        t.kind === 'left' && t.labels >= 2 && (host === t.suffix || host.endsWith(`.${t.suffix}`)),
    );
  return ctx.targets.filter((t) => {
    if (t.kind === 'exact')
      return !(max <= t.labels || !belowMatches(t.host) || subtreeCovered(t.host));
    if (t.kind === 'left') {
      const selfMatches = min <= t.labels && max >= t.labels && t.suffix.endsWith(suffix);
      return !(
        (!selfMatches || ctx.covered(t.suffix)) &&
        (t.labels >= 2 || max <= t.labels + 1 || !belowMatches(t.suffix))
      );
    }
    return true;
  });
}

/** The hosts of URL prefixes that each name a whole host (`http://host/…`, `http://host:…`), else null. */
export function wholeHosts(prefixes: readonly string[]): string[] | null {
  const hosts = new Set<string>();
  for (const p of prefixes) {
    const parts = splitHttpPrefix(p);
    if (!parts || !/^[/:?#]/.test(parts.rest)) return null;
    hosts.add(parts.host);
  }
  return [...hosts];
}
