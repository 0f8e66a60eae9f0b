/**
 * The target keys a host name is looked up under, in reference candidate order
 * (corpus README, step 2): the exact host; each label replaced by `*` in turn, left to right;
 * then `*.` + the suffix from label 2 to label n-2. Empty, over-long or `..` hosts match nothing.
 */
export function targetKeysFor(host: string): string[] {
  if (host.length === 0 || host.length > 255 || host.includes('..')) return [];
  const labels = host.split('.');
  const keys = [host];
  for (let i = 0; i < labels.length; i++) {
    const copy = labels.slice();
    copy[i] = '*';
    keys.push(copy.join('.'));
  }
  for (let i = 2; i <= labels.length - 2; i++) keys.push(`*.${labels.slice(i).join('.')}`);
  return keys;
}

/** The first of `targets` that makes a ruleset a candidate for `host`, or null. */
export function coveringTarget(host: string, targets: ReadonlySet<string>): string | null {
  for (const key of targetKeysFor(host)) if (targets.has(key)) return key;
  return null;
}
