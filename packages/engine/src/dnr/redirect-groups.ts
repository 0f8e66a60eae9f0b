/**
 * Host-swap redirects of many rulesets under one shared `regexSubstitution`, as DuckDuckGo's
 * ddg2dnr groups its rules. Chromium allows 5,000 dynamic redirects ("unsafe" rules); the 2018
 * library compiles to about 7,000, most of them `http://www.x.y/` -> `https://x.y/` or the
 * reverse. Those with the same priority, the same swapped label, path prefix and resource types,
 * and hosts of the same number of labels, become one rule: `requestDomains` lists the hosts and
 * a regex of exactly that many labels keeps their subdomains out (a subdomain has more labels),
 * so the group fires on exactly the URLs its members did and sends each where its member did.
 * Each group costs one regex of the budget, so only as many as needed are made, largest first.
 */
import type { Planned } from './plan.js';

/** A host label in a URL, as the other host-shape regexes spell it (hosts.ts). */
const LABEL = '[^./?#:@]+';
const HOST = /^[a-z0-9-]+(?:\.[a-z0-9-]+)+$/;
/** What a literal `|http://host/path` filter may hold after the host: urlFilter's own characters excluded. */
const PATH = /^\/[\x21-\x7e]*$/;
/** Condition keys a member may have (anything else would have to be kept per member). */
const KEYS = new Set(['urlFilter', 'isUrlFilterCaseSensitive', 'resourceTypes']);

/** A redirect to the same URL on https with one leading label taken off or put on the host. */
interface Swap {
  host: string;
  /** `drop`: the member's host is `label.` + its destination; `add`: the destination is `label.` + the host. */
  way: 'drop' | 'add';
  label: string;
  path: string;
}

function swapOf(r: Planned): Swap | null {
  const a = r.action;
  if (
    a.type !== 'redirect' ||
    a.redirect.transform === undefined ||
    Object.keys(a.redirect).length !== 1
  )
    return null;
  const { scheme, host: to, ...other } = a.redirect.transform;
  if (scheme !== 'https' || to === undefined || Object.keys(other).length > 0) return null;
  const c = r.condition;
  if (c.urlFilter === undefined || Object.keys(c).some((k) => !KEYS.has(k))) return null;
  const m = /^\|http:\/\/([^/]+)(.*)$/.exec(c.urlFilter);
  if (m === null) return null;
  const [, host, path] = m as unknown as [string, string, string];
  if (!HOST.test(host) || !HOST.test(to) || !PATH.test(path) || /[*^|]/.test(path)) return null;
  if (host.endsWith(`.${to}`) && !host.slice(0, -to.length - 1).includes('.'))
    return { host, way: 'drop', label: host.slice(0, -to.length - 1), path };
  if (to.endsWith(`.${host}`) && !to.slice(0, -host.length - 1).includes('.'))
    return { host, way: 'add', label: to.slice(0, -host.length - 1), path };
  return null;
}

const escapeRegex = (text: string): string => text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** `^http://` + a host of exactly `labels` labels, the first one `first` when given. */
function hostOf(labels: number, first: string | null): string {
  const rest = first === null ? labels - 1 : labels - 2;
  const head = first === null ? LABEL : `${escapeRegex(first)}\\.${LABEL}`;
  return rest === 0 ? head : `${head}(?:\\.${LABEL})${rest === 1 ? '' : `{${rest}}`}`;
}

interface Group {
  members: number[];
  hosts: string[];
  make(hosts: string[]): Planned;
}

/**
 * `planned` with host-swap redirects grouped until at most `redirectLimit` redirects remain (or
 * no group of two or more is left); the groups' rules take the place of their first member.
 */
export function groupHostRedirects(planned: readonly Planned[], redirectLimit: number): Planned[] {
  let redirects = planned.filter((r) => r.action.type === 'redirect').length;
  if (redirects <= redirectLimit) return [...planned];
  const groups = new Map<string, Group>();
  planned.forEach((r, i) => {
    const s = swapOf(r);
    if (s === null) return;
    const labels = s.host.split('.').length;
    const types =
      r.condition.resourceTypes === undefined
        ? ''
        : [...r.condition.resourceTypes].sort().join(',');
    const caseSensitive = r.condition.isUrlFilterCaseSensitive === true;
    const key = `${r.priority}|${s.way}|${s.label}|${labels}|${s.path}|${types}|${caseSensitive}`;
    let g = groups.get(key);
    if (g === undefined) {
      // The captured part is the destination's host and the rest of the URL.
      const regexFilter =
        s.way === 'drop'
          ? `^http://${escapeRegex(s.label)}\\.(${hostOf(labels - 1, null)}${escapeRegex(s.path)}.*)`
          : `^http://(${hostOf(labels, null)}${escapeRegex(s.path)}.*)`;
      const regexSubstitution = s.way === 'drop' ? 'https://\\1' : `https://${s.label}.\\1`;
      const { urlFilter: _u, ...rest } = r.condition;
      g = {
        members: [],
        hosts: [],
        make: (hosts) => ({
          priority: r.priority,
          action: { type: 'redirect', redirect: { regexSubstitution } },
          condition: {
            ...rest,
            isUrlFilterCaseSensitive: caseSensitive,
            regexFilter,
            requestDomains: hosts,
          },
        }),
      };
      groups.set(key, g);
    }
    g.members.push(i);
    g.hosts.push(s.host);
  });
  const replaced = new Map<number, Planned | null>();
  const bySize = [...groups.values()]
    .filter((g) => g.members.length >= 2)
    .sort((a, b) => b.members.length - a.members.length);
  for (const g of bySize) {
    if (redirects <= redirectLimit) break;
    g.members.forEach((i, k) => replaced.set(i, k === 0 ? g.make([...g.hosts].sort()) : null));
    redirects -= g.members.length - 1;
  }
  const out: Planned[] = [];
  planned.forEach((r, i) => {
    const x = replaced.has(i) ? replaced.get(i) : r;
    if (x) out.push(x);
  });
  return out;
}

/** How many regexes grouping `planned` down to `redirectLimit` redirects takes. */
export function redirectGroupsNeeded(planned: readonly Planned[], redirectLimit: number): number {
  const regexes = (rules: readonly Planned[]) =>
    rules.filter((r) => r.condition.regexFilter !== undefined).length;
  return regexes(groupHostRedirects(planned, redirectLimit)) - regexes(planned);
}
