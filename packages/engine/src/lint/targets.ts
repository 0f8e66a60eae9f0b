import type { Diagnostic, Ruleset, Target } from '../model/ruleset.js';
import { bareSuffixSection, publicSuffix } from '../psl/public-suffix.js';
import { targetKeysFor } from './target-match.js';
import { diagnosticAt } from './diagnostic.js';

const LABEL = /^[a-z0-9_-]+$/;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/**
 * Public suffixes that are also real web sites, so a target may name them (not `*.` them):
 * `gov.uk` (GOV.UK), `nhs.uk` (the NHS), `police.uk` (police.uk). Listed in
 * docs/writing-rulesets.md; add a suffix here only when its own host serves a site.
 */
export const PUBLIC_SUFFIX_SITES: ReadonlySet<string> = new Set(['gov.uk', 'nhs.uk', 'police.uk']);
const PUNYCODE_LABEL = /^xn--[a-z0-9-]+$/;
/**
 * Special-use top-level names (RFC 6761, RFC 7686) that no public suffix list carries but that
 * are not private-network names: reserved for tests and examples, or Tor's onion services.
 */
const SPECIAL_USE_TLDS: ReadonlySet<string> = new Set([
  'test',
  'example',
  'invalid',
  'localhost',
  'onion',
]);

/** The ASCII (punycode) form of a host written in Unicode, when WHATWG URL accepts it. */
function asciiForm(host: string): string | null {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return null;
  }
}

/** Problems with one `<target host>` value; each message says what to write instead. */
function lintTarget(target: Target, ruleset: Ruleset): Diagnostic[] {
  const out: Diagnostic[] = [];
  const add = (severity: Diagnostic['severity'], code: string, message: string): void => {
    out.push(diagnosticAt(target.loc ?? ruleset.loc, severity, code, message));
  };
  const host = target.host;
  if (host === '') {
    add('error', 'target-empty', 'target host is empty');
    return out;
  }
  if (/:\d*$/.test(host)) {
    add(
      'error',
      'target-port',
      `target "${host}" has a port; targets are host names only (rules see every port)`,
    );
    return out;
  }
  if (host.includes('/')) {
    add('error', 'target-not-host', `target "${host}" is a URL or path; write only the host name`);
    return out;
  }
  if (host.endsWith('.')) {
    add(
      'error',
      'target-trailing-dot',
      `target "${host}" ends with a dot; write "${host.replace(/\.+$/, '')}"`,
    );
    return out;
  }
  if (host !== host.toLowerCase()) {
    add(
      'error',
      'target-case',
      `target "${host}" has upper-case letters; host names are matched lower-case: "${host.toLowerCase()}"`,
    );
    return out;
  }
  // eslint-disable-next-line no-control-regex -- the ASCII range, NUL included
  if (/[^\x00-\x7f]/.test(host)) {
    const ascii = asciiForm(host);
    add(
      'error',
      'target-non-ascii',
      `target "${host}" is not ASCII; write it in punycode${ascii !== null ? `: "${ascii}"` : ''}`,
    );
    return out;
  }
  const labels = host.split('.');
  const stars = labels.filter((l) => l === '*').length;
  for (const label of labels) {
    if (label === '') {
      add(
        'error',
        'target-empty-label',
        `target "${host}" has an empty label (two dots in a row or a leading dot)`,
      );
      return out;
    }
    if (label !== '*' && label.includes('*')) {
      add(
        'error',
        'target-wildcard',
        `target "${host}": "*" must be a whole label, as in "*.example.com" (here "${label}")`,
      );
      return out;
    }
    if (label !== '*' && !LABEL.test(label)) {
      add(
        'error',
        'target-chars',
        `target "${host}": label "${label}" may only hold a-z, 0-9, "_" and "-"`,
      );
      return out;
    }
    if (label.startsWith('xn--') && !PUNYCODE_LABEL.test(label)) {
      add('error', 'target-chars', `target "${host}": label "${label}" is not valid punycode`);
      return out;
    }
  }
  if (stars > 1) {
    add(
      'error',
      'target-wildcard',
      `target "${host}" has ${stars} wildcards; a target may hold at most one "*"`,
    );
    return out;
  }
  if (stars === 1 && labels.length === 1) {
    add(
      'error',
      'target-wildcard',
      'target "*" would match every single-label host; name a domain',
    );
    return out;
  }
  const leftWildcard = labels[0] === '*';
  const rightWildcard = labels[labels.length - 1] === '*';
  if (stars === 1 && !leftWildcard && !rightWildcard) {
    add(
      'warning',
      'target-middle-wildcard',
      `target "${host}" has a wildcard in the middle; it matches exactly one label there, which is rarely what is meant`,
    );
  }
  if (rightWildcard) return out;
  const named = leftWildcard ? labels.slice(1).join('.') : host;
  if (
    !IPV4.test(host) &&
    !SPECIAL_USE_TLDS.has(labels[labels.length - 1] as string) &&
    publicSuffix(named).section === null
  ) {
    add(
      'error',
      'target-no-public-suffix',
      `target "${host}" does not end in a public suffix (a top-level domain such as .com or .de); a name like that only resolves inside private networks`,
    );
    return out;
  }
  const section = bareSuffixSection(named);
  if (section === 'icann' && !(PUBLIC_SUFFIX_SITES.has(named) && !leftWildcard)) {
    add(
      'error',
      'target-public-suffix',
      leftWildcard
        ? `target "${host}" covers every site under the public suffix "${named}"; target the sites themselves`
        : `target "${host}" is a public suffix, not a site; target the registrable domain below it`,
    );
  }
  return out;
}

/**
 * A wildcard target of the same ruleset that already makes it a candidate for `target`'s hosts
 * (EFF's "also covers"): for `www.d.example.com` beside `*.d.example.com`, or `*.a.example.com`
 * beside `*.example.com`. Null when there is none.
 */
function coveredBy(target: string, wildcards: ReadonlySet<string>): string | null {
  if (wildcards.size === 0 || target.endsWith('.*')) return null;
  // A left wildcard stands for its hosts one label deeper (a deeper host gives the same answer).
  const host = target.startsWith('*.') ? `x.${target.slice(2)}` : target;
  for (const key of targetKeysFor(host)) if (key !== target && wildcards.has(key)) return key;
  return null;
}

/** Per-ruleset target checks, including a host listed twice in one file. */
export function lintTargets(ruleset: Ruleset): Diagnostic[] {
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  const wildcards = new Set(ruleset.targets.map((t) => t.host).filter((h) => h.includes('*')));
  for (const target of ruleset.targets) {
    out.push(...lintTarget(target, ruleset));
    const by = coveredBy(target.host, wildcards);
    if (by !== null) {
      out.push(
        diagnosticAt(
          target.loc ?? ruleset.loc,
          'warning',
          'target-covered',
          `target "${target.host}" is already covered by target "${by}"; drop it${target.host.includes('*') ? '' : `, or keep its test as <test url="http://${target.host}/" />`}`,
        ),
      );
    }
    if (seen.has(target.host)) {
      out.push(
        diagnosticAt(
          target.loc ?? ruleset.loc,
          'warning',
          'target-repeated',
          `target "${target.host}" is listed twice in this ruleset`,
        ),
      );
    }
    seen.add(target.host);
  }
  return out;
}
