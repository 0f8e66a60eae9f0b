/** `1 ruleset`, `2 rulesets`, `0 rulesets`; `plural` for words that do not just add an s. */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
