/** What a compiled scope offers: only `test`, so a guarded compiler may hand back its own matcher. */
export interface ScopeMatcher {
  test(url: string): boolean;
}

/**
 * The one place a channel's scope regex is compiled (definitions, rewriting, destination
 * checks), so a guard on what patterns may run applies everywhere. `''` is "no restriction"
 * and compiles to null; anything else is compiled without flags, so `test` is stateless.
 * Throws for a pattern that does not compile.
 */
export function compileScope(scope: string): ScopeMatcher | null {
  return scope === '' ? null : new RegExp(scope);
}
