import type { AST } from '@eslint-community/regexpp';
import {
  isTrivialRule,
  TRIVIAL_FROM,
  type Diagnostic,
  type Rule,
  type Ruleset,
} from '../model/ruleset.js';
import { registrableDomain } from '../psl/public-suffix.js';
import { diagnosticAt } from './diagnostic.js';
import {
  countCapturingGroups,
  hostPartOf,
  parsePattern,
  samplesOf,
  unescapedDots,
  type HostPart,
} from './regex-ast.js';
import { fragmentDependentGroups } from '../regex/fragment-groups.js';
import { dollarUses } from '../regex/replacement.js';
import { coveringTarget } from './target-match.js';
import { hostReach } from './host-language.js';
import { rulesetRegexOrNull, type RulesetRegex } from '../regex/safe-regex.js';

/** Through the regex door: a refused pattern is not run (lintRegexSafety reports it). */
function compile(source: string): RulesetRegex | null {
  return rulesetRegexOrNull(source);
}

const WILDCARD_FILLERS = ['www', 'a', 'x', 'cdn', 'static', '0', 'a.a', 'www.a'];

/** Host names (without port) that a host part may match and that the ruleset's targets reach. */
function reachableHosts(
  host: HostPart,
  ruleset: Ruleset,
  targetSet: ReadonlySet<string>,
): string[] {
  if (host.source === '' || /\\[1-9]|\\k</.test(host.source)) return [];
  const hostRe = compile(`^(?:${host.source})${host.closed ? '$' : ''}`);
  if (hostRe === null) return [];
  const hosts = new Set<string>();
  for (const t of ruleset.targets) {
    if (!t.host.includes('*')) {
      if (hostRe.test(t.host)) hosts.add(t.host);
      continue;
    }
    // A wildcard target stands for many hosts; try a few typical fillers for its `*`.
    for (const filler of WILDCARD_FILLERS) {
      const name = t.host.replace('*', filler);
      // `*.com` covers one label only: the candidate lookup, not the filler, decides.
      if (hostRe.test(name) && coveringTarget(name, targetSet) !== null) {
        hosts.add(name);
        break;
      }
    }
  }
  for (const sample of samplesOf(host.elements)) {
    if (!hostRe.test(sample)) continue;
    const name = sample.replace(/:\d*$/, '').toLowerCase();
    if (coveringTarget(name, targetSet) !== null) hosts.add(name);
  }
  return [...hosts];
}

/**
 * Hosts the host part reaches: the quick samples first, then, when they find none, the exact
 * decision of host-language.ts. Null when no verdict is possible (too complex, lookarounds).
 */
function reachOf(
  host: HostPart,
  ruleset: Ruleset,
  targetSet: ReadonlySet<string>,
): string[] | null {
  const quick = reachableHosts(host, ruleset, targetSet);
  if (quick.length > 0) return quick;
  const hostRe = compile(`^(?:${host.source})$`);
  if (hostRe === null) return null;
  const reach = hostReach(host.elements, hostRe, [...targetSet]);
  return reach.kind === 'reachable' ? [reach.host] : reach.kind === 'unreachable' ? [] : null;
}

/** Whether the host part could be analysed at all (otherwise reachability is not judged). */
function analysable(host: HostPart | null): host is HostPart {
  // An open host part (`^http://blog\.` with no `/`) only constrains a prefix of the host.
  return (
    host !== null &&
    host.closed &&
    host.source !== '' &&
    !/\\[1-9]|\\k</.test(host.source) &&
    compile(`^(?:${host.source})`) !== null
  );
}

function pathSamples(pattern: AST.Pattern, host: HostPart): string[] {
  const elements = (pattern.alternatives[0] as AST.Alternative).elements;
  const rest = elements.filter((e) => e.start >= host.start + host.source.length);
  return samplesOf(rest).slice(0, 8);
}

interface PatternFacts {
  pattern: AST.Pattern | null;
  host: HostPart | null;
}

function factsOf(source: string): PatternFacts {
  const pattern = parsePattern(source);
  return { pattern, host: pattern === null ? null : hostPartOf(source, pattern) };
}

function lintDots(
  source: string,
  facts: PatternFacts,
  what: string,
  at: Rule['loc'],
  out: Diagnostic[],
): void {
  if (facts.host === null) return;
  const dots = unescapedDots(facts.host.elements);
  if (dots.length === 0) return;
  out.push(
    diagnosticAt(
      at,
      'warning',
      'unescaped-dot',
      `${what} "${source}" has an unescaped "." in its host part (column ${(dots[0] as number) + 1} of the pattern); it matches any character, write "\\."`,
    ),
  );
}

function lintFrom(rule: Rule, out: Diagnostic[]): void {
  if (rule.from === TRIVIAL_FROM) return;
  if (!rule.from.startsWith('^http://')) {
    const hint = /^\^(?:\(\?:)?https/.test(rule.from)
      ? '; rules must not touch https URLs, which are already secure'
      : rule.from.startsWith('http')
        ? '; it lacks the leading "^"'
        : '';
    out.push(
      diagnosticAt(
        rule.loc,
        'error',
        'from-prefix',
        `from "${rule.from}" must be "^http:" or start with "^http://"${hint}`,
      ),
    );
    return;
  }
  if (!rule.from.slice('^http://'.length).includes('/')) {
    out.push(
      diagnosticAt(
        rule.loc,
        'error',
        'from-prefix',
        `from "${rule.from}" must end its host part with "/" (e.g. "^http://example\\.com/")`,
      ),
    );
  }
}

function lintTo(rule: Rule, groupCount: number | null, out: Diagnostic[]): void {
  if (rule.to === 'https:') {
    if (rule.from !== TRIVIAL_FROM) {
      out.push(
        diagnosticAt(
          rule.loc,
          'error',
          'to-https-colon',
          `to="https:" only works with from="^http:"; with from "${rule.from}" it drops the host, write to="https://host/"`,
        ),
      );
    }
  } else if (!/^https:\/\/[^/\s\\]*\/[^\s\\]*$/.test(rule.to)) {
    const why = !rule.to.startsWith('https://')
      ? 'must be "https:" or start with "https://"'
      : 'must contain a host and a "/" and no spaces or backslashes';
    out.push(diagnosticAt(rule.loc, 'error', 'to-prefix', `to "${rule.to}" ${why}`));
  }
  if (groupCount === null) return;
  const fragmentGroups = fragmentDependentGroups(rule.from, rule.to);
  if (fragmentGroups.length > 0) {
    const names = fragmentGroups.map((g) => `$${g}`).join(', ');
    out.push(
      diagnosticAt(
        rule.loc,
        'warning',
        'to-copies-fragment',
        `to "${rule.to}" copies ${names}, which can run to the end of the URL, #fragment included, ` +
          `more than once or before other text: a URL with a #fragment gets it in the middle of the new address, ` +
          `and Chromium, which never sees fragments, rewrites it differently; stop the group at "#" (e.g. [^#]*)`,
      ),
    );
  }
  for (const use of dollarUses(rule.to, groupCount)) {
    if (use.kind === 'missing-group') {
      out.push(
        diagnosticAt(
          rule.loc,
          'error',
          'to-missing-group',
          `to "${rule.to}" uses ${use.text} but from has ${groupCount} capturing group${groupCount === 1 ? '' : 's'}; JavaScript inserts "${use.text}" literally`,
        ),
      );
    } else if (use.kind === 'literal' && use.text !== '$$') {
      out.push(
        diagnosticAt(
          rule.loc,
          'warning',
          'to-literal-dollar',
          `to "${rule.to}" has "${use.text}", which is not a group reference; "$" is inserted literally`,
        ),
      );
    } else if (use.kind === 'special') {
      out.push(
        diagnosticAt(
          rule.loc,
          'warning',
          'to-literal-dollar',
          `to "${rule.to}" has "${use.text}", a special replacement pattern that inserts part of the original URL`,
        ),
      );
    }
  }
}

/**
 * Notes (as info: nearly always intended, e.g. a CDN or a `www` move across domains) when a rule
 * sends a host to a different registrable domain, naming the new one for the reviewers.
 */
function lintDomainChange(
  rule: Rule,
  re: RulesetRegex,
  facts: PatternFacts,
  hosts: string[],
  out: Diagnostic[],
): void {
  if (facts.pattern === null || facts.host === null || rule.to === 'https:') return;
  const paths = pathSamples(facts.pattern, facts.host);
  for (const host of hosts) {
    const from = registrableDomain(host);
    for (const path of paths) {
      const url = `http://${host}${path}`;
      if (!re.test(url)) continue;
      const rewritten = re.replace(url, rule.to);
      if (rewritten === url) continue;
      let newHost: string;
      try {
        newHost = new URL(rewritten).hostname;
      } catch {
        out.push(
          diagnosticAt(
            rule.loc,
            'error',
            'to-invalid-url',
            `rule rewrites ${url} to "${rewritten}", which is not a valid URL`,
          ),
        );
        return;
      }
      const to = registrableDomain(newHost);
      if (to !== from) {
        out.push(
          diagnosticAt(
            rule.loc,
            'info',
            'changes-domain',
            `rule sends ${host} to ${newHost}: registrable domain changes from ${from ?? host} to ${to ?? newHost}`,
          ),
        );
        return;
      }
      break;
    }
  }
}

/** Rules, exclusions, secure cookies and tests of one parsed ruleset. */
export function lintRulesAndPatterns(ruleset: Ruleset): Diagnostic[] {
  const out: Diagnostic[] = [];
  const targetSet = new Set(ruleset.targets.map((t) => t.host));
  let trivialAt: Rule | null = null;
  const seenFrom = new Map<string, Rule>();

  for (const rule of ruleset.rules) {
    if (trivialAt !== null) {
      out.push(
        diagnosticAt(
          rule.loc,
          'warning',
          'dead-rule',
          `rule from "${rule.from}" never applies: the trivial rule at line ${trivialAt.loc?.line ?? '?'} rewrites every http URL first`,
        ),
      );
    } else if (seenFrom.has(rule.from)) {
      out.push(
        diagnosticAt(
          rule.loc,
          'warning',
          'dead-rule',
          `rule from "${rule.from}" never applies: the rule at line ${seenFrom.get(rule.from)?.loc?.line ?? '?'} has the same from`,
        ),
      );
    }
    if (isTrivialRule(rule) && trivialAt === null) trivialAt = rule;
    if (!seenFrom.has(rule.from)) seenFrom.set(rule.from, rule);

    lintFrom(rule, out);
    const re = compile(rule.from);
    const facts = factsOf(rule.from);
    lintTo(rule, facts.pattern === null ? null : countCapturingGroups(facts.pattern), out);
    if (re === null || rule.from === TRIVIAL_FROM) continue;
    lintDots(rule.from, facts, 'from', rule.loc, out);
    if (!analysable(facts.host)) continue;
    const hosts = reachOf(facts.host, ruleset, targetSet);
    if (hosts === null) continue;
    if (hosts.length === 0) {
      out.push(
        diagnosticAt(
          rule.loc,
          'warning',
          'unreachable-rule',
          `rule from "${rule.from}" never applies: no target of this ruleset matches its host part "${facts.host.source}"`,
        ),
      );
      continue;
    }
    lintDomainChange(rule, re, facts, hosts, out);
  }

  for (const exclusion of ruleset.exclusions) {
    const facts = factsOf(exclusion.pattern);
    if (!exclusion.pattern.startsWith('^http')) {
      out.push(
        diagnosticAt(
          exclusion.loc,
          'warning',
          'exclusion-unanchored',
          `exclusion "${exclusion.pattern}" does not start with "^http"; it can match anywhere in a URL, e.g. in a query string`,
        ),
      );
    }
    lintDots(exclusion.pattern, facts, 'exclusion', exclusion.loc, out);
    if (analysable(facts.host) && reachOf(facts.host, ruleset, targetSet)?.length === 0) {
      out.push(
        diagnosticAt(
          exclusion.loc,
          'warning',
          'unreachable-exclusion',
          `exclusion "${exclusion.pattern}" never applies: no target of this ruleset matches its host part "${facts.host.source}"`,
        ),
      );
    }
  }

  for (const cookie of ruleset.secureCookies) {
    for (const [attr, value] of [
      ['host', cookie.host],
      ['name', cookie.name],
    ] as const) {
      if (value === '.' || value === '.*') {
        out.push(
          diagnosticAt(
            cookie.loc,
            'warning',
            'securecookie-wildcard',
            `securecookie ${attr}="${value}" should be written ${attr}=".+" (the normal form for "any")`,
          ),
        );
      }
    }
  }

  for (const test of ruleset.tests) {
    let url: URL | null;
    try {
      url = new URL(test.url);
    } catch {
      url = null;
    }
    if (
      url === null ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      test.url.includes('\\')
    ) {
      out.push(
        diagnosticAt(
          test.loc,
          'error',
          'test-url',
          `test url "${test.url}" is not an absolute http URL`,
        ),
      );
    } else if (url.protocol === 'https:') {
      out.push(
        diagnosticAt(
          test.loc,
          'warning',
          'test-url',
          `test url "${test.url}" is https; rules only rewrite http URLs, so it tests nothing`,
        ),
      );
    } else if (/^http:\/\/[^/?#]*(?:[?#]|$)/i.test(test.url)) {
      // Browsers add the "/" (so the test still works), but the file should say what is tested.
      out.push(
        diagnosticAt(
          test.loc,
          'warning',
          'test-url-slash',
          `test url "${test.url}" has no "/" after the host; write "${url.href}"`,
        ),
      );
    }
  }
  return out;
}
