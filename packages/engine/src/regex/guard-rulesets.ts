import type { Diagnostic, Ruleset } from '../model/ruleset.js';
import { guardRegex, type GuardOptions } from './guard.js';

export interface GuardResult {
  /** Rulesets whose every regex passed the guard, in input order. */
  rulesets: Ruleset[];
  diagnostics: Diagnostic[];
}

/** Runs the catastrophic-backtracking guard over every regex; a refused regex refuses its ruleset. */
export function guardRulesets(rulesets: readonly Ruleset[], options: GuardOptions = {}): GuardResult {
  const kept: Ruleset[] = [];
  const diagnostics: Diagnostic[] = [];
  const verdicts = new Map<string, ReturnType<typeof guardRegex>>();
  for (const rs of rulesets) {
    const regexes: { source: string; what: string; maxInput: number; line: number; column: number }[] = [];
    const at = (loc: { line: number; column: number } | undefined) => ({ line: loc?.line ?? 1, column: loc?.column ?? 1 });
    const urlInput = options.maxInput ?? 4096;
    // Cookie patterns only ever see a domain or a cookie name.
    const cookieInput = Math.min(urlInput, 255);
    for (const r of rs.rules) regexes.push({ source: r.from, what: '<rule> from', maxInput: urlInput, ...at(r.loc) });
    for (const e of rs.exclusions) regexes.push({ source: e.pattern, what: '<exclusion> pattern', maxInput: urlInput, ...at(e.loc) });
    for (const c of rs.secureCookies) {
      regexes.push({ source: c.host, what: '<securecookie> host', maxInput: cookieInput, ...at(c.loc) });
      regexes.push({ source: c.name, what: '<securecookie> name', maxInput: cookieInput, ...at(c.loc) });
    }
    let refused = false;
    for (const r of regexes) {
      const key = `${r.maxInput}\u0000${r.source}`;
      let verdict = verdicts.get(key);
      if (verdict === undefined) {
        verdict = guardRegex(r.source, { ...options, maxInput: r.maxInput });
        verdicts.set(key, verdict);
      }
      if (verdict.slow) {
        diagnostics.push({
          severity: 'warning',
          code: 'slow-regex',
          message: `${r.what} ${JSON.stringify(r.source)} is slow on long input: ${verdict.reason}; polynomial, not refused`,
          file: rs.loc?.file ?? '<memory>',
          line: r.line,
          column: r.column,
        });
      }
      if (!verdict.refused) continue;
      refused = true;
      diagnostics.push({
        severity: 'error',
        code: 'slow-regex',
        message: `${r.what} ${JSON.stringify(r.source)} backtracks catastrophically: ${verdict.reason}; ruleset "${rs.name}" not loaded`,
        file: rs.loc?.file ?? '<memory>',
        line: r.line,
        column: r.column,
      });
    }
    if (!refused) kept.push(rs);
  }
  return { rulesets: kept, diagnostics };
}
