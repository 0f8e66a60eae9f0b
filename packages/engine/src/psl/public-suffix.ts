import { ICANN_RULES, PRIVATE_RULES, PSL_SNAPSHOT } from './list-data.js';

export { PSL_SNAPSHOT };

export type SuffixSection = 'icann' | 'private';

/** One rule of the list, keyed by its labels joined with '.', without `*.`/`!` prefixes. */
interface RuleEntry {
  section: SuffixSection;
  wildcard: boolean;
  exception: boolean;
}

let table: Map<string, RuleEntry[]> | null = null;

/** The list holds IDN rules in Unicode; targets are written in punycode, so compare in ASCII. */
function toAscii(name: string): string {
  if (/^[\x00-\x7f]*$/.test(name)) return name;
  try {
    return new URL(`http://${name}/`).hostname;
  } catch {
    return name;
  }
}

function load(): Map<string, RuleEntry[]> {
  if (table !== null) return table;
  const map = new Map<string, RuleEntry[]>();
  const add = (text: string, section: SuffixSection): void => {
    for (const raw of text.split('\n')) {
      if (raw === '') continue;
      let rule = raw;
      const exception = rule.startsWith('!');
      if (exception) rule = rule.slice(1);
      const wildcard = rule.startsWith('*.');
      if (wildcard) rule = rule.slice(2);
      const key = toAscii(rule);
      const list = map.get(key) ?? [];
      list.push({ section, wildcard, exception });
      map.set(key, list);
    }
  };
  add(ICANN_RULES, 'icann');
  add(PRIVATE_RULES, 'private');
  table = map;
  return map;
}

export interface PublicSuffixMatch {
  /** The public suffix of the host (e.g. `co.uk` for `www.example.co.uk`). */
  suffix: string;
  /** Which section of the list the deciding rule sits in; null when only the implicit `*` rule applied. */
  section: SuffixSection | null;
}

/**
 * The public suffix of a lower-case ASCII host name by the PSL algorithm (exception rules win,
 * then the rule with the most labels, else the implicit `*` rule). With `privateDomains: false`
 * only the ICANN section counts, as registrars see it.
 */
export function publicSuffix(host: string, options: { privateDomains?: boolean } = {}): PublicSuffixMatch {
  const usePrivate = options.privateDomains ?? true;
  const rules = load();
  const labels = host.split('.');
  let best: PublicSuffixMatch | null = null;
  let bestLength = 0;
  for (let i = 0; i < labels.length; i++) {
    const candidate = labels.slice(i).join('.');
    const parentLength = labels.length - i;
    for (const entry of rules.get(candidate) ?? []) {
      if (!usePrivate && entry.section === 'private') continue;
      if (entry.exception) {
        // `!city.kawasaki.jp`: the suffix is the rule minus its leftmost label, and it beats everything.
        return { suffix: labels.slice(i + 1).join('.'), section: entry.section };
      }
      if (entry.wildcard) {
        // `*.ck` covers `x.ck` only when there is a label left of `ck`.
        if (i >= 1 && parentLength + 1 > bestLength) {
          best = { suffix: labels.slice(i - 1).join('.'), section: entry.section };
          bestLength = parentLength + 1;
        }
      } else if (parentLength > bestLength) {
        best = { suffix: candidate, section: entry.section };
        bestLength = parentLength;
      }
    }
  }
  return best ?? { suffix: labels[labels.length - 1] ?? host, section: null };
}

/** The registrable domain (public suffix plus one label), or null when the host is itself a suffix. */
export function registrableDomain(host: string, options: { privateDomains?: boolean } = {}): string | null {
  const { suffix } = publicSuffix(host, options);
  if (suffix === host) return null;
  const rest = host.slice(0, host.length - suffix.length - 1);
  const label = rest.slice(rest.lastIndexOf('.') + 1);
  return `${label}.${suffix}`;
}

/**
 * The section whose rules make `host` a public suffix on its own (e.g. `co.uk`, `github.io`), or
 * null. A single label that only the implicit `*` rule covers is not reported here.
 */
export function bareSuffixSection(host: string): SuffixSection | null {
  const icann = publicSuffix(host, { privateDomains: false });
  if (icann.suffix === host && icann.section !== null) return 'icann';
  const any = publicSuffix(host);
  if (any.suffix === host && any.section !== null) return any.section;
  return null;
}
