import {
  caseMatchEnd,
  Form,
  greatestAtMost,
  type PreparedPattern,
} from '../regex/prepared-pattern.js';

/**
 * All the exclusions of one ruleset as one sorted list of their literal strings, for rulesets
 * with many exclusions (JS.org has 428, one per project): a URL costs a binary search instead
 * of one compare per exclusion.
 *
 * Why one search is enough: if a string t is a prefix of the URL and t <= s <= URL in code-unit
 * order, then s starts with t too. So every string that starts the URL is the greatest string
 * not above the URL or one of its ancestors, where a string's parent is the longest other
 * string it starts with. Exclusions that are not finite languages stay regexes, tried in turn.
 */
export class ExclusionIndex {
  private readonly texts: string[] = [];
  private readonly patterns: PreparedPattern[] = [];
  /** Index of the pattern's own text (for caseMatchEnd). */
  private readonly cases: number[] = [];
  private readonly parent: Int32Array;
  /** Exclusions left as regexes, in ruleset order. */
  readonly others: PreparedPattern[] = [];

  constructor(exclusions: readonly PreparedPattern[]) {
    const entries: { text: string; pattern: PreparedPattern; k: number }[] = [];
    for (const p of exclusions) {
      if (p.form !== Form.Cases) {
        this.others.push(p);
        continue;
      }
      (p.texts as string[]).forEach((text, k) => entries.push({ text, pattern: p, k }));
    }
    entries.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
    this.parent = new Int32Array(entries.length);
    // Strings that start the current one, shortest first: sorted order visits a string's
    // prefixes before it, and a string that is not a prefix of the next is not of any later one.
    const chain: number[] = [];
    entries.forEach((entry, i) => {
      while (
        chain.length > 0 &&
        !entry.text.startsWith(this.texts[chain[chain.length - 1] as number] as string)
      )
        chain.pop();
      this.parent[i] = chain.length > 0 ? (chain[chain.length - 1] as number) : -1;
      chain.push(i);
      this.texts.push(entry.text);
      this.patterns.push(entry.pattern);
      this.cases.push(entry.k);
    });
  }

  /** Whether a finite exclusion matches `href` (the caller tries `others`). */
  literalMatch(href: string): boolean {
    for (let at = greatestAtMost(this.texts, href); at >= 0; at = this.parent[at] as number) {
      if (caseMatchEnd(this.patterns[at] as PreparedPattern, this.cases[at] as number, href) >= 0)
        return true;
    }
    return false;
  }
}
