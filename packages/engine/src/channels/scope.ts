import { compileRulesetRegex } from '../regex/safe-regex.js';

/** What a compiled scope offers: only `test`, so the regex door may hand back its own matcher. */
export interface ScopeMatcher {
  test(url: string): boolean;
}

/** Stands for a scope the regex door refused: the channel applies to no URL. */
const NOTHING: ScopeMatcher = { test: (): boolean => false };

/**
 * The one place a channel's scope regex is compiled (definitions, rewriting, destination
 * checks), through the regex door. `''` is "no restriction" and compiles to null. A scope the
 * door refuses or cannot compile (parseChannelDefinition rejects such definitions; this covers
 * stored ones) admits no URL, so the channel's rulesets never run.
 */
export function compileScope(scope: string): ScopeMatcher | null {
  if (scope === '') return null;
  const compiled = compileRulesetRegex(scope);
  return compiled.ok ? compiled.regex : NOTHING;
}
