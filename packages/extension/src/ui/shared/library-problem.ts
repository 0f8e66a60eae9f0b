/**
 * A library import that was refused, in words: which message (in _locales) says what went wrong
 * and what to do. The refusal's own text (from the archive reader or the background) goes under
 * "Details". Matched by shape, as `channel-problem.ts` does, so the test feeds it the real
 * refusals the reader and the background produce.
 */
const REFUSAL: [RegExp, string][] = [
  [
    /^not a \.zip, \.tar or \.tar\.gz archive$|does not hold a tar archive/,
    'libraryProblemNotArchive',
  ],
  // Checked before "damaged": a zip bomb is also reported as a damaged file.
  [/zip bomb|hostile|expands past/, 'libraryProblemHostile'],
  [/too many for one library/, 'libraryProblemTooMany'],
  [
    /larger than \d+ MB|too large for one library|too large for a ruleset library/,
    'libraryProblemTooLarge',
  ],
  [/damaged|cut short|impossible size/, 'libraryProblemDamaged'],
  [/took longer than/, 'libraryProblemSlow'],
  [/^no ruleset files/, 'libraryProblemNoRulesets'],
  [/^none of its files holds a ruleset/, 'libraryProblemNoUsable'],
  [/interrupted/, 'libraryProblemInterrupted'],
];

export function libraryImportProblem(raw: string): string {
  for (const [re, key] of REFUSAL) if (re.test(raw)) return key;
  return 'libraryProblemFailed';
}
