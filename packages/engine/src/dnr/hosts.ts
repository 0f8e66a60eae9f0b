/**
 * Ruleset targets as DNR sees hosts. DNR `requestDomains` always covers subdomains, while a
 * ruleset target is exact (`a.b`), covers any depth on the left (`*.b`, one extra label only
 * when `b` is a single label), or one label on the right or in the middle (`a.*`, `a.*.c`).
 */
export type ClassifiedTarget =
  | { kind: 'exact'; host: string; labels: number }
  | { kind: 'left'; suffix: string; labels: number }
  | { kind: 'pattern'; host: string };

/** Lowercase ASCII, trailing dots dropped, non-ASCII labels in punycode (DNR wants that form). */
export function normalizeHost(host: string): string | null {
  let h = host.toLowerCase().replace(/\.+$/, '');
  if (h === '') return null;
  if (/[^\x21-\x7e]/.test(h)) {
    try {
      h = h
        .split('.')
        .map((label) =>
          label === '*' || /^[\x21-\x7e]*$/.test(label)
            ? label
            : new URL(`http://${label}/`).hostname,
        )
        .join('.');
    } catch {
      return null;
    }
  }
  if (/[/:?#@\s]/.test(h)) return null;
  return h;
}

export function classifyTarget(raw: string): ClassifiedTarget | null {
  const host = normalizeHost(raw);
  if (host === null) return null;
  if (!host.includes('*')) return { kind: 'exact', host, labels: host.split('.').length };
  if (host.startsWith('*.') && !host.slice(2).includes('*')) {
    const suffix = host.slice(2);
    return { kind: 'left', suffix, labels: suffix.split('.').length };
  }
  return { kind: 'pattern', host };
}

/** Whether the reference candidate lookup would offer this target's ruleset for `host`. */
export function targetCovers(target: ClassifiedTarget, host: string): boolean {
  switch (target.kind) {
    case 'exact':
      return host === target.host;
    case 'left': {
      if (!host.endsWith(`.${target.suffix}`)) return false;
      const extra = host.split('.').length - target.labels;
      return extra === 1 || (extra > 1 && target.labels >= 2);
    }
    case 'pattern': {
      const want = target.host.split('.');
      const have = host.split('.');
      return (
        want.length === have.length && want.every((label, i) => label === '*' || label === have[i])
      );
    }
  }
}

/** A host label in a URL: what may stand between dots before the port or path. */
const LABEL = '[^./?#:@]+';
const AFTER_HOST = '(?:[:/?#]|$)';
/** The same, after a host written with trailing dots (`bank.test.`), which Chromium sends as is. */
export const AFTER_HOST_DOTS = '\\.*(?:[:/?#]|$)';

/** `^http://` + a host of exactly (or at least) `labels` labels, in RE2 and JS syntax alike. */
export function labelCountRegex(labels: number, atLeast: boolean, afterHost = AFTER_HOST): string {
  const rest = labels - 1;
  const count = atLeast ? `{${rest},}` : rest === 1 ? '' : `{${rest}}`;
  return rest === 0
    ? `^http://${LABEL}${afterHost}`
    : `^http://${LABEL}(?:\\.${LABEL})${count}${afterHost}`;
}

/**
 * `^http://` + one label of the class `label` (RE2) + `labels` more, then the path: with the
 * domain list of the `labels`-label domains, exactly their hosts one label below.
 */
export function oneBelowRegex(labels: number, label: string): string {
  return `^http://${label}+(?:\\.${LABEL})${labels === 1 ? '' : `{${labels}}`}/`;
}

/** `^http://` + any of the given right/middle wildcard hosts (`*` = one label). */
export function patternHostsRegex(hosts: string[], afterHost = AFTER_HOST): string {
  const alts = hosts.map((h) =>
    h
      .split('.')
      .map((label) => (label === '*' ? LABEL : label.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')))
      .join('\\.'),
  );
  return `^http://(?:${alts.join('|')})${afterHost}`;
}

/** The host part of an `http://` URL prefix, and what follows it (empty if the prefix ends inside the host). */
export function splitHttpPrefix(prefix: string): { host: string; rest: string } | null {
  const m = /^http:\/\/([^/?#:@]*)(.*)$/s.exec(prefix);
  if (!m || m[1] === '') return null;
  return { host: m[1]!, rest: m[2]! };
}
