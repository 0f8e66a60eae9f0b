/**
 * The one place a channel's scope regex is compiled (definitions, rewriting, destination
 * checks), so a guard on what patterns may run applies everywhere. `''` is "no restriction"
 * and compiles to null; anything else is compiled without flags, so `test` is stateless.
 */
export function compileScope(scope: string): RegExp | null {
  return scope === '' ? null : new RegExp(scope);
}
