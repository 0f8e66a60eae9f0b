/**
 * Channel names: what a new channel may be called. A channel's name keys its stored state and its
 * problems, and is how the user tells channels apart in the options page, so two channels must
 * not read the same, and none may take the name of the local library's layer. Every door that
 * adds channels (a definition pasted or fetched, a settings file, stored settings read back)
 * asks `channelNameProblem`.
 */

/** The imported ruleset library's name among the layers (see library/library-store.ts). */
export const LIBRARY_LAYER_NAME = 'Local library';

/**
 * A name as a user reads it: compatibility forms folded (NFKC: "ｌｏｃａｌ" is "local"),
 * invisible characters dropped, runs of spaces made one, surrounding spaces and case ignored.
 */
export function channelNameKey(name: string): string {
  return name
    .normalize('NFKC')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .replace(/\s+/gu, ' ')
    .trim()
    .toLowerCase();
}

/**
 * Why a channel cannot be called `name` beside the channels named `taken`, or null if it can.
 * The reason does not repeat `name`; callers say which channel it is.
 */
export function channelNameProblem(name: string, taken: readonly string[]): string | null {
  const key = channelNameKey(name);
  if (key === channelNameKey(LIBRARY_LAYER_NAME))
    return `the name is taken by your imported ruleset library ("${LIBRARY_LAYER_NAME}")`;
  const other = taken.find((t) => channelNameKey(t) === key);
  if (other === undefined) return null;
  return other === name
    ? `there is already a channel named ${JSON.stringify(other)}`
    : `it reads the same as the channel ${JSON.stringify(other)}`;
}
