/**
 * Handles the test suite reaches the worker by (its message API, the settings controller, the
 * handoff). Only builds made for the tests carry them: the build replaces HTTPSIFY_TEST_HOOKS
 * with `true` there and `false` for the stores (packaging/build.ts), so a published package
 * holds none of them, nor the code that installs them.
 */
declare const HTTPSIFY_TEST_HOOKS: boolean | undefined;

/** Whether this build carries the test handles (false when run unbundled, as in unit tests). */
export const TEST_HOOKS: boolean =
  typeof HTTPSIFY_TEST_HOOKS !== 'undefined' && HTTPSIFY_TEST_HOOKS;

/** Sets `globalThis[name]` in test builds only. */
export function exposeForTests(name: string, value: unknown): void {
  if (TEST_HOOKS) (globalThis as Record<string, unknown>)[name] = value;
}
