import type { Ruleset } from '../../src/model/ruleset.js';

/**
 * A deliberately plain, line-by-line transcription of the reference semantics in
 * ../shared/corpus/README.md (Map of targets, `new URL`, a Set of candidates, RegExp per rule).
 * It shares no code with the engine, so the differential tests compare two independent readings.
 */
export class ReferenceModel {
  private readonly targets = new Map<string, Ruleset[]>();
  private readonly compiled = new Map<
    Ruleset,
    { exclusions: RegExp[]; rules: { from: RegExp; to: string }[] }
  >();

  constructor(rulesets: readonly Ruleset[]) {
    for (const rs of rulesets) {
      for (const t of rs.targets) {
        const list = this.targets.get(t.host) ?? [];
        list.push(rs);
        this.targets.set(t.host, list);
      }
      this.compiled.set(rs, {
        exclusions: rs.exclusions.map((e) => new RegExp(e.pattern)),
        rules: rs.rules.map((r) => ({ from: new RegExp(r.from), to: r.to })),
      });
    }
  }

  candidates(host: string): Ruleset[] {
    const out = new Set<Ruleset>();
    const add = (pattern: string) => this.targets.get(pattern)?.forEach((rs) => out.add(rs));
    if (host.length === 0 || host.length > 255 || host.includes('..')) return [];
    add(host);
    const labels = host.split('.');
    for (let i = 0; i < labels.length; i++) {
      const copy = labels.slice();
      copy[i] = '*';
      add(copy.join('.'));
    }
    for (let i = 2; i <= labels.length - 2; i++) add(`*.${labels.slice(i).join('.')}`);
    return [...out];
  }

  apply(rs: Ruleset, href: string): string | null {
    const c = this.compiled.get(rs)!;
    if (c.exclusions.some((e) => e.test(href))) return null;
    for (const rule of c.rules) {
      const out = href.replace(rule.from, rule.to);
      if (out !== href) return out;
    }
    return null;
  }

  rewrite(input: string, isActive: (rs: Ruleset) => boolean): string | null {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      return null;
    }
    let host = url.hostname;
    // Trailing dots go, down to one: a host of dots only is `.` (the reference's own loop stops there).
    while (host.length > 1 && host.endsWith('.')) host = host.slice(0, -1);
    if (host !== url.hostname) url.hostname = host;
    const user = url.username;
    const pass = url.password;
    url.username = '';
    url.password = '';
    for (const rs of this.candidates(host)) {
      if (!isActive(rs)) continue;
      const out = this.apply(rs, url.href);
      if (out === null) continue;
      if (user === '' && pass === '') return out;
      const back = new URL(out);
      back.username = user;
      back.password = pass;
      return back.href;
    }
    return null;
  }
}
