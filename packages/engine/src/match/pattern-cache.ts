import { PatternVerdictCode, RuleKind, Section } from '../bundle/format.js';
import type { PackedArray } from '../bundle/packed-array.js';
import type { BundleSections } from '../bundle/read.js';
import { literalPrefix } from '../regex/literal-prefix.js';
import {
  compileProven,
  compileRulesetRegex,
  type CompiledRegex,
  type RulesetRegex,
} from '../regex/safe-regex.js';
import { ExclusionIndex } from './exclusion-index.js';
import {
  casesMatch,
  Form,
  holdsRequired,
  pendingPattern,
  type PreparedPattern,
  prepareLiteralRule,
  prepareRegex,
  prepareRule,
  prepareTest,
  rewriteLiteral,
} from '../regex/prepared-pattern.js';
import type { RulesetState } from './ruleset-state.js';
import type { StringPool } from './string-pool.js';

/** From this many exclusions on, a ruleset's exclusions are searched as one index (see ExclusionIndex). */
const EXCLUSION_INDEX_MIN = 8;

/** A ruleset the engine stopped using because the regex door refused one of its patterns. */
export interface RegexRefusal {
  ruleset: string;
  pattern: string;
  reason: string;
}

/**
 * The rules, exclusions and securecookie patterns of every ruleset, as they run: each is
 * prepared on first use (prepared-pattern.ts), and those that need a regex are compiled through
 * the regex door into a bounded FIFO cache. A pattern the door refuses disables its ruleset
 * (`refused`), reported through `takeRefusals`.
 */
export class PatternCache {
  // Per ruleset, where its rules, exclusions and securecookies start in their columns (n + 1 entries).
  readonly ruleStart: PackedArray;
  readonly exclusionStart: PackedArray;
  readonly cookieStart: PackedArray;
  // The columns, as string ids (ruleKind: RuleKind).
  readonly ruleFrom: PackedArray;
  readonly ruleTo: PackedArray;
  readonly ruleKind: PackedArray;
  readonly exclusionPattern: PackedArray;
  readonly cookieHost: PackedArray;
  readonly cookieName: PackedArray;
  /** Regexes that failed to compile at run time (a bundle built by another tool), by pattern. */
  readonly regexErrors = new Map<string, string>();
  /** 1 where a pattern of the ruleset was refused by the regex door: the ruleset no longer applies. */
  readonly refused: Uint8Array;

  private readonly strings: StringPool;
  private readonly rulesets: RulesetState;
  /**
   * The bundle's own regex verdicts, per pattern (rules, exclusions, then cookie host and name),
   * when the loader said the bundle is our own build; null: every pattern is judged here.
   */
  private readonly verdicts: PackedArray | null;
  /** Rules, exclusions and cookie patterns as they run, by their index in their column; built on first use. */
  private rulePatterns: (PreparedPattern | undefined)[] | null = null;
  private exclusionPatterns: (PreparedPattern | undefined)[] | null = null;
  private cookiePatterns: (PreparedPattern | undefined)[] | null = null;
  /** Rulesets with at least EXCLUSION_INDEX_MIN exclusions: their exclusions as one sorted index. */
  private readonly exclusionIndexes = new Map<number, ExclusionIndex>();
  /** Patterns holding a compiled regex, oldest first at `regexNext` once the ring is full. */
  private readonly regexRing: (PreparedPattern | undefined)[];
  private regexNext = 0;
  /** Refusals not yet taken by takeRefusals. */
  private refusals: RegexRefusal[] = [];
  /** The ruleset whose patterns are being run (a refusal disables it). */
  private applying = -1;

  constructor(
    { header, packed }: BundleSections,
    strings: StringPool,
    rulesets: RulesetState,
    regexCacheSize: number,
    trustVerdicts: boolean,
  ) {
    this.strings = strings;
    this.rulesets = rulesets;
    this.ruleStart = packed[Section.RsRuleStart] as PackedArray;
    this.exclusionStart = packed[Section.RsExclStart] as PackedArray;
    this.cookieStart = packed[Section.RsCookieStart] as PackedArray;
    this.ruleFrom = packed[Section.RuleFrom] as PackedArray;
    this.ruleTo = packed[Section.RuleTo] as PackedArray;
    this.ruleKind = packed[Section.RuleKind] as PackedArray;
    this.exclusionPattern = packed[Section.ExclPattern] as PackedArray;
    this.cookieHost = packed[Section.CookieHost] as PackedArray;
    this.cookieName = packed[Section.CookieName] as PackedArray;
    this.regexRing = new Array<PreparedPattern | undefined>(Math.max(1, regexCacheSize)).fill(
      undefined,
    );
    this.refused = new Uint8Array(header.rulesetCount);
    const verdicts = packed[Section.PatternVerdict] as PackedArray;
    this.verdicts = trustVerdicts && verdicts.length > 0 ? verdicts : null;
  }

  /** One (not trivial-only) ruleset's `apply`: exclusions veto, then the first rule that changes the URL wins. */
  apply(id: number, href: string): string | null {
    if (this.refused[id] === 1) return null;
    this.applying = id;
    const out = this.applyPatterns(id, href);
    // A pattern refused on the way disables the whole ruleset, this URL included.
    return this.refused[id] === 1 ? null : out;
  }

  /** Starts running ruleset `id`'s patterns one by one (explain): a refusal disables it. */
  begin(id: number): void {
    this.applying = id;
  }

  /** A rule's result when it changes `href`, else null. */
  applyRule(r: number, href: string): string | null {
    const patterns =
      this.rulePatterns ??
      (this.rulePatterns = new Array<PreparedPattern | undefined>(this.ruleKind.length).fill(
        undefined,
      ));
    let p = patterns[r];
    if (p === undefined) {
      const kind = this.ruleKind.get(r);
      if (kind === RuleKind.Trivial) return upgradeHttp(href);
      p = patterns[r] =
        kind === RuleKind.Literal || this.hasVerdict(r)
          ? this.prepareRuleAt(r)
          : pendingPattern(this.strings.decode(this.ruleFrom.get(r)));
    }
    if (!href.startsWith(p.prefix)) return null;
    // The first URL with its prefix pays for the analysis; URLs without it never do.
    if (p.form === Form.Pending) p = patterns[r] = this.prepareRuleAt(r);
    if (p.form !== Form.Regex) return rewriteLiteral(p, href);
    if (!holdsRequired(p, href)) return null;
    const re = p.regex !== undefined ? p.regex : this.compile(p);
    if (re === null) return null;
    const out = re.replace(href, p.to);
    return out === href ? null : out;
  }

  private prepareRuleAt(r: number): PreparedPattern {
    const kind = this.ruleKind.get(r);
    const from = this.strings.decode(this.ruleFrom.get(r));
    const to = this.strings.decode(this.ruleTo.get(r));
    if (kind === RuleKind.Literal) return prepareLiteralRule(literalPrefix(from)?.prefix ?? '', to);
    return this.hasVerdict(r) ? prepareRegex(from, to, r) : prepareRule(from, to);
  }

  /** Whether exclusion `e` matches `href`. */
  excludes(e: number, href: string): boolean {
    const patterns =
      this.exclusionPatterns ??
      (this.exclusionPatterns = new Array<PreparedPattern | undefined>(
        this.exclusionPattern.length,
      ).fill(undefined));
    return this.tested(patterns, e, this.exclusionPattern.get(e), this.ruleFrom.length + e, href);
  }

  /**
   * Whether an active ruleset `id` has a <securecookie> whose host pattern matches the raw
   * cookie domain and whose name pattern matches the cookie name.
   */
  securesCookie(id: number, domain: string, name: string): boolean {
    this.applying = id;
    for (
      let c = this.cookieStart.get(id);
      c < this.cookieStart.get(id + 1) && this.refused[id] === 0;
      c++
    ) {
      // Host and name patterns share one lazily built array: hosts at 2c, names at 2c + 1.
      if (
        this.testCookie(2 * c, this.cookieHost.get(c), domain) &&
        this.testCookie(2 * c + 1, this.cookieName.get(c), name) &&
        this.refused[id] === 0
      )
        return true;
    }
    return false;
  }

  /**
   * Patterns the regex door refused since the last call, each with its ruleset (now disabled)
   * and the reason.
   */
  takeRefusals(): RegexRefusal[] {
    const taken = this.refusals;
    this.refusals = [];
    return taken;
  }

  /**
   * Whether an exclusion of ruleset `id` matches `href`. A ruleset the regex door refuses (now
   * or on the way) excludes nothing: it is not used at all.
   */
  excluded(id: number, href: string): boolean {
    if (this.refused[id] === 1) return false;
    this.applying = id;
    return this.exclusionsMatch(id, href) && this.refused[id] === 0;
  }

  private exclusionsMatch(id: number, href: string): boolean {
    const exclusionsStart = this.exclusionStart.get(id);
    const exclusionsEnd = this.exclusionStart.get(id + 1);
    if (exclusionsEnd - exclusionsStart >= EXCLUSION_INDEX_MIN)
      return this.excludedByIndex(id, exclusionsStart, exclusionsEnd, href);
    for (let e = exclusionsStart; e < exclusionsEnd; e++) if (this.excludes(e, href)) return true;
    return false;
  }

  private applyPatterns(id: number, href: string): string | null {
    if (this.exclusionsMatch(id, href)) return null;
    for (let r = this.ruleStart.get(id), end = this.ruleStart.get(id + 1); r < end; r++) {
      const out = this.applyRule(r, href);
      if (out !== null) return out;
    }
    return null;
  }

  /** Exclusion `e`, prepared (the exclusion index needs every one of its ruleset's). */
  private exclusion(e: number): PreparedPattern {
    const patterns =
      this.exclusionPatterns ??
      (this.exclusionPatterns = new Array<PreparedPattern | undefined>(
        this.exclusionPattern.length,
      ).fill(undefined));
    const p = patterns[e];
    if (p !== undefined && p.form !== Form.Pending) return p;
    return (patterns[e] = this.prepareTest(this.exclusionPattern.get(e), this.ruleFrom.length + e));
  }

  /** A tested pattern (string id `source`) with entry `at` in the verdict column. */
  private prepareTest(source: number, at: number): PreparedPattern {
    const text = this.strings.decode(source);
    return this.hasVerdict(at) ? prepareRegex(text, null, at) : prepareTest(text);
  }

  /**
   * Whether tested pattern `k` of `patterns` (string id `source`, verdict entry `at`) matches
   * `input`: prepared only once an input has its prefix (see Form.Pending).
   */
  private tested(
    patterns: (PreparedPattern | undefined)[],
    k: number,
    source: number,
    at: number,
    input: string,
  ): boolean {
    let p = patterns[k];
    if (p === undefined)
      p = patterns[k] = this.hasVerdict(at)
        ? this.prepareTest(source, at)
        : pendingPattern(this.strings.decode(source));
    if (!input.startsWith(p.prefix)) return false;
    if (p.form === Form.Pending) p = patterns[k] = this.prepareTest(source, at);
    return this.matches(p, input);
  }

  /** Whether the trusted bundle has a verdict for pattern `at` (then it needs a regex). */
  private hasVerdict(at: number): boolean {
    return this.verdicts !== null && this.verdicts.get(at) !== PatternVerdictCode.None;
  }

  /** Whether one of the many exclusions [start, end) of ruleset `id` matches `href`, through its index. */
  private excludedByIndex(id: number, start: number, end: number, href: string): boolean {
    let index = this.exclusionIndexes.get(id);
    if (index === undefined) {
      const patterns: PreparedPattern[] = [];
      for (let e = start; e < end; e++) patterns.push(this.exclusion(e));
      index = new ExclusionIndex(patterns);
      this.exclusionIndexes.set(id, index);
    }
    if (index.literalMatch(href)) return true;
    for (const p of index.others) if (this.matches(p, href)) return true;
    return false;
  }

  /** Whether securecookie pattern `k` (2c: host, 2c + 1: name of cookie c), string `source`, matches `input`. */
  private testCookie(k: number, source: number, input: string): boolean {
    const patterns =
      this.cookiePatterns ??
      (this.cookiePatterns = new Array<PreparedPattern | undefined>(
        2 * this.cookieHost.length,
      ).fill(undefined));
    return this.tested(
      patterns,
      k,
      source,
      this.ruleFrom.length + this.exclusionPattern.length + k,
      input,
    );
  }

  /** Whether a test pattern (exclusion or securecookie) matches `input`. */
  private matches(p: PreparedPattern, input: string): boolean {
    if (!input.startsWith(p.prefix)) return false;
    if (p.form === Form.Cases) return casesMatch(p, input);
    if (!holdsRequired(p, input)) return false;
    const re = p.regex !== undefined ? p.regex : this.compile(p);
    return re !== null && re.test(input);
  }

  /**
   * Compiles the regex of `pattern` through the regex door (regex/safe-regex.ts); a pattern
   * that does not compile is remembered as failing, once, and one the door refuses disables the
   * ruleset being applied. Past the cache size the oldest compiled regex is dropped (FIFO:
   * browsing has locality) and compiled again if needed (the door's verdict is cached).
   */
  private compile(pattern: PreparedPattern): RulesetRegex | null {
    const compiled = this.compileThroughDoor(pattern);
    let re: RulesetRegex | null = null;
    if (compiled.ok) re = compiled.regex;
    else if (!compiled.refused) this.regexErrors.set(pattern.source, compiled.reason);
    else {
      const id = this.applying;
      if (id >= 0 && this.refused[id] === 0) {
        this.refused[id] = 1;
        this.refusals.push({
          ruleset: this.rulesets.name(id),
          pattern: pattern.source,
          reason: compiled.reason,
        });
      }
    }
    pattern.regex = re;
    const ring = this.regexRing;
    const evicted = ring[this.regexNext];
    if (evicted !== undefined) evicted.regex = undefined;
    ring[this.regexNext] = pattern;
    this.regexNext = (this.regexNext + 1) % ring.length;
    return re;
  }

  /** The door's answer: on the verdict our own build stored, when trusted; else judged here. */
  private compileThroughDoor(pattern: PreparedPattern): CompiledRegex {
    const use = pattern.isRule
      ? ({ use: 'replace', to: pattern.to } as const)
      : ({ use: 'test' } as const);
    if (this.verdicts !== null && pattern.verdictAt >= 0) {
      const code = this.verdicts.get(pattern.verdictAt);
      if (code === PatternVerdictCode.Proven || code === PatternVerdictCode.Quadratic) {
        return {
          ok: true,
          regex: compileProven(pattern.source, code === PatternVerdictCode.Quadratic, use),
        };
      }
    }
    return compileRulesetRegex(pattern.source, use);
  }
}

/** `href.replace(/^http:/, 'https:')` when it changes anything, else null. */
export function upgradeHttp(href: string): string | null {
  if (
    href.charCodeAt(0) === 0x68 &&
    href.charCodeAt(1) === 0x74 &&
    href.charCodeAt(2) === 0x74 &&
    href.charCodeAt(3) === 0x70 &&
    href.charCodeAt(4) === 0x3a
  ) {
    return 'https:' + href.slice(5);
  }
  return null;
}
