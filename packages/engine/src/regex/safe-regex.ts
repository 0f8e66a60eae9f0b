import type { RE2JS } from 're2js';
import { re2js } from './re2js-module.js';
import type { AST } from '@eslint-community/regexpp';
import { proveBacktrackingLinear } from './backtracking-proof.js';
import { linearSyntax } from './linear-syntax.js';
import { countCapturingGroups, parsePattern } from './pattern-ast.js';
import { dollarUses } from './replacement.js';

/**
 * The one door through which a pattern from a ruleset, a bundle, a channel or a user becomes
 * something that runs (docs/regex-guard.md). Nothing else in the engine, the CLI or the
 * extension compiles such a pattern; test/regex-door.test.ts keeps it that way.
 *
 * Verdicts, decided by analysis of the pattern (never by timing it):
 * - `proven`: backtracking-proof.ts proves V8's own RegExp linear on it: it runs natively;
 * - `linear`: no proof, but it has no lookaround or backreference: it runs on re2js, a
 *   linear-time matcher, spelled so that it matches exactly what RegExp would;
 * - `refused`: neither; it never runs, and the reason says why;
 * - `invalid`: not a JavaScript regex at all.
 */
export type RegexVerdict =
  | { kind: 'proven'; quadratic: boolean }
  | { kind: 'linear'; re2: string; whyNotProven: string }
  | { kind: 'refused'; reason: string }
  | { kind: 'invalid'; reason: string };

/** A compiled pattern: `test` as RegExp.prototype.test, `replace` as String.prototype.replace. */
export interface RulesetRegex {
  readonly verdict: 'proven' | 'linear';
  test(input: string): boolean;
  replace(input: string, to: string): string;
}

/** What a pattern is used for: `replace` (a rule's `from`, with its `to`) or `test` (everything else). */
export type PatternUse = { use: 'test' } | { use: 'replace'; to: string };

const TEST: PatternUse = { use: 'test' };

/** Verdicts by pattern (and use), so a pattern shared by many rulesets is analysed once. */
const verdicts = new Map<string, RegexVerdict>();
const MAX_CACHED_VERDICTS = 8192;

function cacheKey(source: string, use: PatternUse): string {
  // Only the `$` uses of a replacement change the verdict (which groups it inserts).
  return use.use === 'test' ? `t\u0000${source}` : `r\u0000${use.to.includes('$') ? use.to : ''}\u0000${source}`;
}

/** The verdict on `source`; cheap after the first call for the same pattern. */
export function judgeRegex(source: string, use: PatternUse = TEST): RegexVerdict {
  const key = cacheKey(source, use);
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    verdict = decide(source, use);
    if (verdicts.size >= MAX_CACHED_VERDICTS) verdicts.clear();
    verdicts.set(key, verdict);
  }
  return verdict;
}

function syntaxError(source: string): string {
  try {
    // Compiling runs nothing; only the engine's own message is wanted.
    new RegExp(source);
    return 'it is not a regular expression this analysis can read';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

function decide(source: string, use: PatternUse): RegexVerdict {
  const pattern = parsePattern(source);
  if (pattern === null) return { kind: 'invalid', reason: syntaxError(source) };
  const proof = proveBacktrackingLinear(pattern);
  if (proof.proven) return { kind: 'proven', quadratic: proof.quadratic };
  const forReplace = use.use === 'replace';
  if (forReplace && hasNamedGroups(pattern) && use.to.includes('$<')) {
    return refuse(proof.reason, "its replacement refers to a named group, which only JavaScript's own matcher fills");
  }
  const used = forReplace
    ? new Set(dollarUses(use.to, countCapturingGroups(pattern)).flatMap((u) => (u.kind === 'group' ? [u.group] : [])))
    : new Set<number>();
  const syntax = linearSyntax(pattern, forReplace, used);
  if (!syntax.ok) return refuse(proof.reason, syntax.reason);
  try {
    const RE2JS = re2js();
    RE2JS.compile(syntax.re2);
  } catch (err) {
    return refuse(proof.reason, `the linear-time matcher cannot hold it (${(err as { error?: string }).error ?? (err as Error).message})`);
  }
  return { kind: 'linear', re2: syntax.re2, whyNotProven: proof.reason };
}

function refuse(notProven: string, notLinear: string): RegexVerdict {
  return { kind: 'refused', reason: `it may take exponential or polynomial time: ${notProven}; and it cannot run in linear time: ${notLinear}` };
}

function hasNamedGroups(pattern: AST.Pattern): boolean {
  return /\(\?<[^=!]/.test(pattern.raw);
}

/** Result of compileRulesetRegex: the regex, or why it will not run. */
export type CompiledRegex = { ok: true; regex: RulesetRegex } | { ok: false; refused: boolean; reason: string };

/** The door: a runnable pattern when the verdict allows it. */
export function compileRulesetRegex(source: string, use: PatternUse = TEST): CompiledRegex {
  const verdict = judgeRegex(source, use);
  switch (verdict.kind) {
    case 'proven':
      return { ok: true, regex: new NativeRegex(new RegExp(source), verdict.quadratic ? QUADRATIC_INPUT_LIMIT : Infinity) };
    case 'linear': {
      const RE2JS = re2js();
      return { ok: true, regex: new LinearRegex(RE2JS.compile(verdict.re2)) };
    }
    case 'refused':
      return { ok: false, refused: true, reason: verdict.reason };
    case 'invalid':
      return { ok: false, refused: false, reason: verdict.reason };
  }
}

/** compileRulesetRegex for callers that only need "runs or not" (authoring tools). */
export function rulesetRegexOrNull(source: string, use: PatternUse = TEST): RulesetRegex | null {
  const compiled = compileRulesetRegex(source, use);
  return compiled.ok ? compiled.regex : null;
}

/**
 * Longest input given to a pattern proven quadratic (an unbounded lookahead met at every index
 * of a run, `/+(?!.+\.css)`): 4,096 characters bound it to about 16 million steps, tens of
 * milliseconds at worst. Longer input is treated as not matching; real URLs are shorter.
 */
export const QUADRATIC_INPUT_LIMIT = 4096;

class NativeRegex implements RulesetRegex {
  readonly verdict = 'proven';
  constructor(
    private readonly re: RegExp,
    private readonly inputLimit: number,
  ) {}
  test(input: string): boolean {
    return input.length <= this.inputLimit && this.re.test(input);
  }
  replace(input: string, to: string): string {
    return input.length <= this.inputLimit ? input.replace(this.re, to) : input;
  }
}

/** re2js works on code points: a surrogate would be read as half of a character JavaScript sees whole. */
const SURROGATE = /[\ud800-\udfff]/;

/**
 * A pattern on re2js. Input with surrogates (characters outside the BMP) never matches: URLs
 * never hold them (they are percent-encoded), and cookie names in practice do not.
 */
class LinearRegex implements RulesetRegex {
  readonly verdict = 'linear';
  constructor(private readonly re: RE2JS) {}

  test(input: string): boolean {
    return !SURROGATE.test(input) && this.re.test(input);
  }

  replace(input: string, to: string): string {
    if (SURROGATE.test(input)) return input;
    const m = this.re.matcher(input);
    if (!m.find()) return input;
    const start = m.start(0);
    const end = m.end(0);
    let out = '';
    let at = 0;
    for (const use of dollarUses(to, m.groupCount())) {
      out += to.slice(at, use.offset);
      at = use.offset + use.text.length;
      if (use.kind === 'group') out += m.group(use.group) ?? '';
      else if (use.text === '$&') out += input.slice(start, end);
      else if (use.text === '$`') out += input.slice(0, start);
      else if (use.text === "$'") out += input.slice(end);
      else if (use.text === '$$') out += '$';
      else out += use.text;
    }
    return input.slice(0, start) + out + to.slice(at) + input.slice(end);
  }
}

/** A DNR `regexFilter` as the emulator runs it: `exec` gives the match and its groups. */
export interface FilterRegex {
  test(url: string): boolean;
  exec(url: string): { index: number; [group: number]: string | undefined } | null;
}

/**
 * A DNR `regexFilter` (RE2 syntax, built from ruleset patterns that may be hostile) for the DNR
 * emulator. Chromium runs these with RE2, so they run here on re2js, in linear time, never on
 * RegExp. Throws when RE2 does not accept the filter, as Chromium would refuse the rule.
 */
export function compileDnrRegexFilter(re2: string, caseInsensitive: boolean): FilterRegex {
  const RE2JS = re2js();
  const re = RE2JS.compile(re2, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  return {
    test: (url) => re.test(url),
    exec: (url) => {
      const m = re.matcher(url);
      if (!m.find()) return null;
      const out: { index: number; [group: number]: string | undefined } = { index: m.start(0) };
      for (let g = 0; g <= m.groupCount(); g++) out[g] = m.group(g) ?? undefined;
      return out;
    },
  };
}
