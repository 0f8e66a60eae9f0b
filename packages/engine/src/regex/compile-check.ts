/** Returns null when `source` compiles as a flag-less JavaScript RegExp, else the engine's message. */
export function regexSyntaxError(source: string): string | null {
  try {
    new RegExp(source);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
