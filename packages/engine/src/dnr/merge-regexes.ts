/**
 * Regex rules of different rules and rulesets merged into one, to free regexes of the budget:
 * `upgradeScheme` and `allow` rules at the same priority whose regex can only match hosts under
 * their own `requestDomains` become one rule with the regexes as alternatives and the domain
 * lists joined. Such a regex matches no URL of another rule's domains, so the merged rule fires
 * exactly where one of them did, with the same action (a substitution is not merged: its group
 * numbers would move).
 */
import { hostShape } from './host-labels.js';
import { re2ProgramSize } from './re2-size.js';
import { parsePattern } from '../regex/pattern-ast.js';
import { literalPrefixes } from '../regex/literal-language.js';
import { wholeHosts } from './fences.js';
import type { Planned } from './plan.js';

const HEAD = '^http://';
/** Condition keys a mergeable rule may have. */
const KEYS = new Set([
  'regexFilter',
  'requestDomains',
  'resourceTypes',
  'isUrlFilterCaseSensitive',
]);

/** Whether every host `re` matches is one of `domains` or below one. */
function pinned(re: string, domains: readonly string[]): boolean {
  const under = (host: string) => domains.some((d) => host === d || host.endsWith(`.${d}`));
  // Each match starts with one of a few whole hosts (`^(?:http://a\.b/|http://c\.b/)…`)...
  const hosts = wholeHosts(literalPrefixes(re) ?? []);
  if (hosts !== null && hosts.length > 0) return hosts.every(under);
  // ...or the host ends in a literal `.d` (or is exactly `d`, spelled out after `^http://`).
  const shape = hostShape(re);
  if (shape === null || !shape.delimited || shape.https) return false;
  const rest = re.startsWith(HEAD) ? re.slice(HEAD.length) : '';
  return domains.some(
    (d) =>
      shape.suffix.endsWith(`.${d}`) ||
      (shape.suffix === d &&
        rest.startsWith(d.replace(/\./g, '\\.')) &&
        /^[/:]/.test(rest.slice(d.length + d.split('.').length - 1))),
  );
}

/** The group key of a mergeable rule, or null. */
function mergeKey(r: Planned): string | null {
  const c = r.condition;
  const re = c.regexFilter;
  if (
    re === undefined ||
    !re.startsWith('^') ||
    (r.action.type !== 'upgradeScheme' && r.action.type !== 'allow')
  )
    return null;
  if (c.requestDomains === undefined || Object.keys(c).some((k) => !KEYS.has(k))) return null;
  // The alternatives are joined after `^`: the regex must be one sequence, anchored.
  const pattern = parsePattern(re);
  if (pattern === null || pattern.alternatives.length !== 1) return null;
  if (!pinned(re, c.requestDomains)) return null;
  return `${r.priority}|${r.action.type}|${c.isUrlFilterCaseSensitive === true}|${[...(c.resourceTypes ?? [])].sort().join(',')}`;
}

/**
 * `planned` with mergeable regex rules merged as far as each merged regex stays within
 * `maxInstructions` and is not one the browser refuses.
 */
export function mergeRegexRules(
  planned: readonly Planned[],
  maxInstructions: number,
  refused: ReadonlySet<string> = new Set(),
): Planned[] {
  const groups = new Map<string, Planned[]>();
  const out: Planned[] = [];
  for (const r of planned) {
    const key = mergeKey(r);
    if (key === null) {
      out.push(r);
      continue;
    }
    const g = groups.get(key);
    if (g) g.push(r);
    else groups.set(key, [r]);
  }
  for (const group of groups.values()) {
    let run: Planned[] = [];
    const flush = () => {
      if (run.length === 1) out.push(run[0]!);
      else if (run.length > 1) out.push(merged(run));
      run = [];
    };
    for (const r of group) {
      const regex = run.length > 0 ? merged([...run, r]).condition.regexFilter! : '';
      if (run.length > 0 && (re2ProgramSize(regex, false) > maxInstructions || refused.has(regex)))
        flush();
      run.push(r);
    }
    flush();
  }
  return out;
}

function merged(rules: readonly Planned[]): Planned {
  if (rules.length === 1) return rules[0]!;
  const first = rules[0]!;
  // `^http://(?:a|b)` when all share that head (RE2 matches it outside the program), else `^(?:a|b)`.
  const head = rules.every((r) => r.condition.regexFilter!.startsWith(HEAD)) ? HEAD : '^';
  const rests = rules.map((r) => r.condition.regexFilter!.slice(head.length));
  const domains = [...new Set(rules.flatMap((r) => r.condition.requestDomains!))].sort();
  return {
    ...first,
    condition: {
      ...first.condition,
      regexFilter: `${head}(?:${rests.join('|')})`,
      requestDomains: domains,
    },
  };
}
