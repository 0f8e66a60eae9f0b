import type { Ruleset } from '@httpsify/engine';
import { compileScope } from '@httpsify/engine/channels';

/** The start of a rule's `from` that is plain text (`^http://www\.example\.com/docs/` -> its URL). */
function literalStart(pattern: string): string {
  let out = '';
  for (let i = pattern.startsWith('^') ? 1 : 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\' && i + 1 < pattern.length && /[^A-Za-z0-9]/.test(pattern[i + 1] as string)) {
      out += pattern[++i];
      continue;
    }
    if (/[.*+?()[\]{}|^$\\]/.test(c)) break;
    out += c;
  }
  // Only a question mark after a character makes it optional: drop that character too.
  return pattern[pattern.indexOf(out) + out.length] === '?' ? out.slice(0, -1) : out;
}

/** URLs a ruleset can act on, as samples: its targets (wildcards filled in), its tests, its rules' plain starts. */
function sampleUrls(ruleset: Ruleset): string[] {
  const hosts = new Set<string>();
  for (const { host } of ruleset.targets) {
    const fills = host.startsWith('*.')
      ? ['www', 'a']
      : host.endsWith('.*')
        ? ['com', 'org']
        : [''];
    for (const f of fills)
      hosts.add(
        host.startsWith('*.')
          ? `${f}${host.slice(1)}`
          : host.endsWith('.*')
            ? `${host.slice(0, -1)}${f}`
            : host,
      );
  }
  const urls = [...hosts].flatMap((h) => [`http://${h}/`, `https://${h}/`]);
  for (const t of ruleset.tests) urls.push(t.url, t.url.replace(/^http:/i, 'https:'));
  for (const rule of ruleset.rules) {
    const start = literalStart(rule.from);
    if (/^https?:\/\/[^/]+\//i.test(start)) urls.push(start);
  }
  return urls;
}

/**
 * Rulesets of a channel release that can never act within the channel's scope: no URL they
 * target, test or match by a plain prefix is one the scope admits, so clients would carry them
 * and never run them. An empty scope admits every URL.
 */
export function rulesetsOutsideScope(rulesets: readonly Ruleset[], scope: string): Ruleset[] {
  const matcher = compileScope(scope);
  if (matcher === null) return [];
  return rulesets.filter((rs) => !sampleUrls(rs).some((url) => matcher.test(url)));
}
