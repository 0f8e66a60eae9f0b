import type { RE2JS } from 're2js';
import { re2js } from './re2js-module.js';
import type { AST } from '@eslint-community/regexpp';
import { proveBacktrackingBounded } from './backtracking-proof.js';
import { re2Syntax } from './re2-syntax.js';
import { countCapturingGroups, parsePattern } from './pattern-ast.js';
import { dollarUses, insertedGroups } from './replacement.js';

/**
 * The one door through which a pattern from a ruleset, a bundle, a channel or a user becomes
 * something that runs (docs/regex-guard.md). Nothing else in the engine, the CLI or the
 * extension compiles such a pattern; test/regex-door.test.ts keeps it that way.
 *
 * Verdicts, decided by analysis of the pattern (never by timing it):
 * - `proven`: backtracking-proof.ts proves V8's own RegExp linear on it, or quadratic (then it
 *   runs natively on input up to QUADRATIC_INPUT_LIMIT, and on re2js beyond when it can);
 * - `linear`: no proof, but it has no lookaround or backreference: it runs on re2js, a
 *   linear-time matcher, spelled so that it matches exactly what RegExp would;
 * - `refused`: neither; it never runs, and the reason says why;
 * - `invalid`: not a JavaScript regex at all.
 */
export type RegexVerdict =
  | { kind: 'proven'; quadratic: false }
  /** `re2`: the linear-time spelling for input beyond QUADRATIC_INPUT_LIMIT, when there is one. */
  | { kind: 'proven'; quadratic: true; re2: string | null }
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
  return use.use === 'test'
    ? `t\u0000${source}`
    : `r\u0000${use.to.includes('$') ? use.to : ''}\u0000${source}`;
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
  const proof = proveBacktrackingBounded(pattern);
  if (proof.proven && !proof.quadratic) return { kind: 'proven', quadratic: false };
  const linear = linearSpelling(pattern, use);
  if (proof.proven) return { kind: 'proven', quadratic: true, re2: linear.ok ? linear.re2 : null };
  if (!linear.ok) return refuse(proof.reason, linear.reason);
  return { kind: 'linear', re2: linear.re2, whyNotProven: proof.reason };
}

/** The pattern in RE2 syntax, checked to compile on re2js, or why it has none. */
function linearSpelling(
  pattern: AST.Pattern,
  use: PatternUse,
): { ok: true; re2: string } | { ok: false; reason: string } {
  const forReplace = use.use === 'replace';
  if (forReplace && hasNamedGroups(pattern) && use.to.includes('$<')) {
    return {
      ok: false,
      reason: "its replacement refers to a named group, which only JavaScript's own matcher fills",
    };
  }
  const replaceGroups = forReplace
    ? insertedGroups(use.to, countCapturingGroups(pattern))
    : undefined;
  const syntax = re2Syntax(pattern, { input: 'utf16', replaceGroups });
  if (!syntax.ok) return syntax;
  try {
    const RE2JS = re2js();
    RE2JS.compile(syntax.re2);
  } catch (err) {
    return {
      ok: false,
      reason: `the linear-time matcher cannot hold it (${(err as { error?: string }).error ?? (err as Error).message})`,
    };
  }
  return syntax;
}

function refuse(notProven: string, notLinear: string): RegexVerdict {
  return {
    kind: 'refused',
    reason: `it may take exponential or polynomial time: ${notProven}; and it cannot run in linear time: ${notLinear}`,
  };
}

function hasNamedGroups(pattern: AST.Pattern): boolean {
  return /\(\?<[^=!]/.test(pattern.raw);
}

/** Result of compileRulesetRegex: the regex, or why it will not run. */
export type CompiledRegex =
  { ok: true; regex: RulesetRegex } | { ok: false; refused: boolean; reason: string };

/** The door: a runnable pattern when the verdict allows it. */
export function compileRulesetRegex(source: string, use: PatternUse = TEST): CompiledRegex {
  const verdict = judgeRegex(source, use);
  switch (verdict.kind) {
    case 'proven': {
      const re = new RegExp(source);
      return {
        ok: true,
        regex: verdict.quadratic ? new BoundedRegex(re, verdict.re2) : new NativeRegex(re),
      };
    }
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

/**
 * A pattern our own build of a bundle proved (linear, or quadratic), run with no analysis: the
 * door's verdict reached when the bundle was compiled (match/pattern-cache.ts, only for a bundle
 * the loader trusts as ours). A quadratic one judges itself for its RE2 spelling only if input
 * beyond QUADRATIC_INPUT_LIMIT comes.
 */
export function compileProven(
  source: string,
  quadratic: boolean,
  use: PatternUse = TEST,
): RulesetRegex {
  const re = new RegExp(source);
  if (!quadratic) return new NativeRegex(re);
  return new BoundedRegex(re, () => {
    const verdict = judgeRegex(source, use);
    return verdict.kind === 'proven' && verdict.quadratic ? verdict.re2 : null;
  });
}

/** compileRulesetRegex for callers that only need "runs or not" (authoring tools). */
export function rulesetRegexOrNull(source: string, use: PatternUse = TEST): RulesetRegex | null {
  const compiled = compileRulesetRegex(source, use);
  return compiled.ok ? compiled.regex : null;
}

/**
 * Longest input given to RegExp for a pattern proven quadratic (an unbounded lookahead met at
 * every index of a run, `/+(?!.+\.css)`, or an unanchored `.*\.x\.com$`): 4,096 characters
 * bound it to about 16 million steps, tens of milliseconds at worst. Longer input goes to re2js
 * when the pattern has a linear-time spelling (no lookaround), which matches exactly the same;
 * otherwise it is treated as not matching (an exclusion does not veto, a rule does not rewrite).
 * Real URLs are shorter: no oracle URL is longer than this.
 */
export const QUADRATIC_INPUT_LIMIT = 4096;

class NativeRegex implements RulesetRegex {
  readonly verdict = 'proven';
  constructor(private readonly re: RegExp) {}
  test(input: string): boolean {
    return this.re.test(input);
  }
  replace(input: string, to: string): string {
    return input.replace(this.re, to);
  }
}

/** A quadratic pattern: RegExp up to QUADRATIC_INPUT_LIMIT, re2js (made on first need) beyond. */
class BoundedRegex implements RulesetRegex {
  readonly verdict = 'proven';
  private long: LinearRegex | null = null;
  /** `re2`: the spelling, or how to work it out on first need. */
  constructor(
    private readonly re: RegExp,
    private re2: string | null | (() => string | null),
  ) {}
  private beyond(): LinearRegex | null {
    if (typeof this.re2 === 'function') this.re2 = this.re2();
    if (this.re2 !== null && this.long === null)
      this.long = new LinearRegex(re2js().compile(this.re2));
    return this.long;
  }
  test(input: string): boolean {
    if (input.length <= QUADRATIC_INPUT_LIMIT) return this.re.test(input);
    return this.beyond()?.test(input) ?? false;
  }
  replace(input: string, to: string): string {
    if (input.length <= QUADRATIC_INPUT_LIMIT) return input.replace(this.re, to);
    return this.beyond()?.replace(input, to) ?? input;
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
