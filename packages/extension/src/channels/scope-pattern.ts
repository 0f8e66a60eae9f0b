/**
 * Recognises channel scopes that only constrain the host (and scheme and port), the only kind
 * Chromium's declarativeNetRequest can enforce for a whole channel. The recogniser is a small
 * grammar rather than a general regex analysis: anything it does not understand is refused
 * with the reason, never approximated.
 */

/** A host the scope admits; with `subdomains`, every host below it too. */
export interface ScopeHost {
  host: string;
  subdomains: boolean;
}

export interface HostScope {
  /** Whether `https:` URLs are in scope (`http:` always is; a scope without it is refused). */
  https: boolean;
  hosts: ScopeHost[];
  /** False when the host must be followed by `/` directly (URLs with an explicit port are out). */
  anyPort: boolean;
}

export type HostScopeResult = { ok: true; scope: HostScope } | { ok: false; reason: string };

const SCHEMES: [string, { http: boolean; https: boolean }][] = [
  ['https?://', { http: true, https: true }],
  ['(https?)://', { http: true, https: true }],
  ['(?:https?)://', { http: true, https: true }],
  ['(http|https)://', { http: true, https: true }],
  ['(?:http|https)://', { http: true, https: true }],
  ['(https|http)://', { http: true, https: true }],
  ['(?:https|http)://', { http: true, https: true }],
  ['http://', { http: true, https: false }],
  ['https://', { http: false, https: true }],
];

/** "This label and any labels before it", written so that nothing past the host can match. */
const SUBDOMAIN_PREFIXES = [
  '([^/]*\\.)?',
  '(?:[^/]*\\.)?',
  '([^/]+\\.)?',
  '(?:[^/]+\\.)?',
  '([^/.]+\\.)*',
  '(?:[^/.]+\\.)*',
  '([^./]+\\.)*',
  '(?:[^./]+\\.)*',
];

/** What may follow the host: a port or not. */
const NO_PORT = ['/'];
const ANY_PORT = [
  '[:/]',
  '[/:]',
  '(:|/)',
  '(/|:)',
  '(?::|/)',
  '(?:/|:)',
  '(:[0-9]+)?/',
  '(?::[0-9]+)?/',
  '(:\\d+)?/',
  '(?::\\d+)?/',
  '(:[0-9]*)?/',
  '(?::[0-9]*)?/',
];
/** A tail that constrains nothing more. */
const FREE_TAILS = ['', '.*', '.*$'];

const MAX_HOSTS = 256;

export function parseHostScope(scope: string): HostScopeResult {
  const refuse = (reason: string): HostScopeResult => ({ ok: false, reason });
  // `\/` and `/` are the same in a RegExp source.
  const source = scope.replace(/\\\//g, '/');
  if (!source.startsWith('^')) return refuse('it is not anchored with ^ at the start of the URL');
  let rest = source.slice(1);
  const scheme = SCHEMES.find(([prefix]) => rest.startsWith(prefix));
  if (scheme === undefined)
    return refuse('it does not start with a scheme (http, https or https?) followed by ://');
  if (!scheme[1].http)
    return refuse('it excludes http:// URLs, so none of its rules could upgrade anything');
  rest = rest.slice(scheme[0].length);

  let subdomains = false;
  const prefix = SUBDOMAIN_PREFIXES.find((p) => rest.startsWith(p));
  if (prefix !== undefined) {
    subdomains = true;
    rest = rest.slice(prefix.length);
  } else if (/^\(\??:?\[[^\]]*\][+*]\\\.\)[*?]/.test(rest)) {
    return refuse(
      'its subdomain part uses a character class such as [a-z0-9-], which leaves out host names (with "_", for instance) that Chromium cannot leave out; write ([^/]*\\.)? instead',
    );
  }

  const parsed = parseHostLanguage(rest);
  if ('reason' in parsed) return refuse(parsed.reason);
  rest = rest.slice(parsed.consumed);
  const hosts = parsed.hosts;
  if (hosts.length > MAX_HOSTS) return refuse(`it spells out more than ${MAX_HOSTS} host names`);
  for (const host of hosts) {
    if (host === '' || host.startsWith('.') || host.endsWith('.') || host.includes('..'))
      return refuse(`"${host}" is not a host name`);
  }

  let anyPort: boolean;
  const noPort = NO_PORT.find(
    (t) => rest.startsWith(t) && FREE_TAILS.includes(rest.slice(t.length)),
  );
  const withPort = ANY_PORT.find(
    (t) => rest.startsWith(t) && FREE_TAILS.includes(rest.slice(t.length)),
  );
  if (withPort !== undefined) anyPort = true;
  else if (noPort !== undefined) anyPort = false;
  else if (rest === '' || FREE_TAILS.includes(rest))
    return refuse(
      'the host is not followed by / or [:/], so the scope also matches longer host names (example.org.evil.test)',
    );
  else
    return refuse(
      `after the host it continues with ${JSON.stringify(rest)}; only the host, scheme and port can be enforced on Chromium (not paths)`,
    );

  return {
    ok: true,
    scope: {
      https: scheme[1].https,
      hosts: [...new Set(hosts)].map((host) => ({ host, subdomains })),
      anyPort,
    },
  };
}

type Language = { hosts: string[]; consumed: number } | { reason: string };

/** `(:…)`, `(?::…)`, `(/…)`: the port/path group after the host, not host text. */
const TERMINATOR_GROUP = /^\((\?:)?[:/]/;

/**
 * A finite language of host names: literal characters (`\.`, `\-`, a-z, 0-9, `-`) and groups
 * `(a|b)` / `(?:a|b)`, optionally followed by `?`. At the top level it stops at the first thing
 * that is neither (the port or path part); inside a group anything else is refused.
 */
function parseHostLanguage(text: string): Language {
  let at = 0;
  const sequence = (inGroup: boolean): string[] | string => {
    let words = [''];
    while (at < text.length) {
      const ch = text[at]!;
      let piece: string[];
      if (inGroup && (ch === '|' || ch === ')')) break;
      if (ch === '\\' && (text[at + 1] === '.' || text[at + 1] === '-')) {
        piece = [text[at + 1]!];
        at += 2;
      } else if (/[a-z0-9-]/.test(ch)) {
        piece = [ch];
        at += 1;
      } else if (/[A-Z]/.test(ch)) {
        return `the host contains the upper-case "${ch}", which never matches a URL (hosts are lower case)`;
      } else if (ch === '.' && /^\.[a-z0-9(]/.test(text.slice(at))) {
        return 'an unescaped "." in the host matches any character; write \\.';
      } else if (ch === '(' && !TERMINATOR_GROUP.test(text.slice(at))) {
        at += text.startsWith('(?:', at) ? 3 : 1;
        const alternatives: string[] = [];
        for (;;) {
          const alt = sequence(true);
          if (typeof alt === 'string') return alt;
          alternatives.push(...alt);
          if (text[at] === '|') {
            at += 1;
            continue;
          }
          if (text[at] === ')') {
            at += 1;
            break;
          }
          return 'a group in the host is not closed';
        }
        piece = alternatives;
        if (text[at] === '?') {
          piece = [...alternatives, ''];
          at += 1;
        }
      } else if (inGroup) {
        return `the host uses ${JSON.stringify(text.slice(at, at + 12))}, which is not a spelled-out host name`;
      } else {
        break;
      }
      words = words.flatMap((w) => piece.map((p) => w + p));
      if (words.length > MAX_HOSTS) return `it spells out more than ${MAX_HOSTS} host names`;
    }
    return words;
  };
  const hosts = sequence(false);
  if (typeof hosts === 'string') return { reason: hosts };
  if (at === 0) return { reason: 'it names no host' };
  return { hosts, consumed: at };
}
