import type { Ruleset } from '../model/ruleset.js';
import { RuleKind, Section } from '../bundle/format.js';
import type { PackedArray } from '../bundle/packed-array.js';
import { StringPool } from './string-pool.js';
import { HostIndex } from './host-index.js';
import { RulesetState } from './ruleset-state.js';
import { literalPrefix } from '../regex/literal-prefix.js';
import { ExclusionIndex } from './exclusion-index.js';
import { casesMatch, Form, type PreparedPattern, prepareLiteralRule, prepareRule, prepareTest, rewriteLiteral } from './prepared-pattern.js';
import { readBundleSections, type BundleHeader, type BundleVerification } from '../bundle/read.js';
import {
  canonicalAuthority,
  canonicalTail,
  type HostLabels,
  newNormalizedUrl,
  normalizeUrl,
  normalizeWithParser,
  restoreCredentials,
  type NormalizedUrl,
} from '../url/normalize.js';
import type { Explanation, ExplainStep } from './explain.js';
import { compileRulesetRegex, type RulesetRegex } from '../regex/safe-regex.js';

/** From this many exclusions on, a ruleset's exclusions are searched as one index (see ExclusionIndex). */
const EXCLUSION_INDEX_MIN = 8;
/** Path used to ask "would this ruleset upgrade the host at all?" for cookies. */
const COOKIE_PROBE_PATH = '/httpsify-cookie-probe/';

export interface RewriteOutcome {
  /** The rewritten URL, or null when nothing rewrote (or the input is not a URL). */
  rewritten: string | null;
  /** Name of the ruleset that rewrote it. */
  ruleset: string | null;
  /** Set when the input could not be parsed as a URL. */
  error?: string;
}

/** A ruleset the engine stopped using because the regex door refused one of its patterns. */
export interface RegexRefusal {
  ruleset: string;
  pattern: string;
  reason: string;
}

export interface EngineOptions {
  /** Turn on `platform="mixedcontent"` rulesets. */
  mixedContent?: boolean;
  /**
   * Most compiled regexes kept at once (default 2048; patterns with a finite language need none).
   * Each costs V8 about 2 KB of heap, mostly code; past the cap the oldest is dropped and
   * recompiled if needed again (FIFO, as browsing has locality).
   */
  regexCacheSize?: number;
  /** How much of the bundle to check at load; see BundleVerification. Default `full`. */
  verify?: BundleVerification;
}

/**
 * The matcher over a compiled bundle. All state that depends on the rulesets lives in typed
 * arrays viewing the bundle; per-URL work reuses scratch buffers, so a URL that no ruleset
 * covers allocates nothing, and one a trivial ruleset covers allocates only its result.
 */
export class Engine {
  readonly header: BundleHeader;
  readonly rulesetCount: number;

  /** The bundle's coded strings (names, notes, patterns), decoded on demand. */
  private readonly strings: StringPool;
  /** Targets, as a trie of labels; fills its `candidates` for a hostname. */
  private readonly hosts: HostIndex;
  // The index's candidate and ruleset-list arrays, held here too: the hot path reads no other object.
  private readonly candidates: Int32Array;
  private readonly refList: Uint32Array;
  private readonly hostLabels: HostLabels;
  /** Names, flags, notes of the rulesets, and which are on. */
  private readonly rulesets: RulesetState;
  // Its per-ruleset on/trivial bytes (updated in place), held here too for the hot path.
  private readonly active: Uint8Array;
  private readonly trivialOnly: Uint8Array;
  private readonly rsRuleStart: PackedArray;
  private readonly rsExclStart: PackedArray;
  private readonly rsCookieStart: PackedArray;
  private readonly ruleFrom: PackedArray;
  private readonly ruleTo: PackedArray;
  private readonly ruleKind: PackedArray;
  private readonly exclPattern: PackedArray;
  private readonly cookieHost: PackedArray;
  private readonly cookieName: PackedArray;

  /** Rules, exclusions and cookie patterns as they run, by their index in their column; built on first use. */
  private rulePatterns: (PreparedPattern | undefined)[] | null = null;
  private exclusionPatterns: (PreparedPattern | undefined)[] | null = null;
  private cookiePatterns: (PreparedPattern | undefined)[] | null = null;
  /** Rulesets with at least EXCLUSION_INDEX_MIN exclusions: their exclusions as one sorted index. */
  private readonly exclusionIndexes = new Map<number, ExclusionIndex>();
  /** Patterns holding a compiled regex, oldest first at `regexNext` once the ring is full. */
  private readonly regexRing: (PreparedPattern | undefined)[];
  private regexNext = 0;
  /** Regexes that failed to compile at run time (a bundle built by another tool), by pattern. */
  readonly regexErrors = new Map<string, string>();
  /** 1 where a pattern of the ruleset was refused by the regex door: the ruleset no longer applies. */
  private readonly refused: Uint8Array;
  /** Refusals not yet taken by takeRegexRefusals. */
  private refusals: RegexRefusal[] = [];
  /** The ruleset whose patterns are being run (for refusals). */
  private applying = -1;

  // Scratch state reused by every lookup.
  private readonly norm: NormalizedUrl = newNormalizedUrl();
  private lastRuleset = -1;

  constructor(bundle: Uint8Array, options: EngineOptions = {}) {
    const sections = readBundleSections(bundle, options.verify);
    const { header, u8, packed } = sections;
    this.header = header;
    this.rulesetCount = header.rulesetCount;
    this.strings = new StringPool(u8[Section.StrBytes] as Uint8Array, u8[Section.Dictionary] as Uint8Array);
    this.hosts = new HostIndex(sections);
    this.candidates = this.hosts.candidates;
    this.refList = this.hosts.refList;
    this.hostLabels = this.hosts.hostLabels;
    this.rulesets = new RulesetState(sections, this.strings, options.mixedContent === true);
    this.active = this.rulesets.active;
    this.trivialOnly = this.rulesets.trivialOnly;
    this.rsRuleStart = packed[Section.RsRuleStart] as PackedArray;
    this.rsExclStart = packed[Section.RsExclStart] as PackedArray;
    this.rsCookieStart = packed[Section.RsCookieStart] as PackedArray;
    this.ruleFrom = packed[Section.RuleFrom] as PackedArray;
    this.ruleTo = packed[Section.RuleTo] as PackedArray;
    this.ruleKind = packed[Section.RuleKind] as PackedArray;
    this.exclPattern = packed[Section.ExclPattern] as PackedArray;
    this.cookieHost = packed[Section.CookieHost] as PackedArray;
    this.cookieName = packed[Section.CookieName] as PackedArray;
    this.regexRing = new Array<PreparedPattern | undefined>(Math.max(1, options.regexCacheSize ?? 2048)).fill(undefined);
    this.refused = new Uint8Array(this.rulesetCount);
  }

  // ---- public API -------------------------------------------------------------------------

  /** The rewritten URL, or null when no active ruleset changes it. */
  rewrite(url: string): string | null {
    const norm = this.norm;
    const pathStart = canonicalAuthority(url, norm, this.hostLabels);
    if (pathStart >= 0) {
      // Host and port are proven canonical: look the host up before reading the rest of the
      // URL, so the common case (no ruleset covers the host) never scans the path.
      const count = this.hosts.lookup(url, this.hostLabels, norm.hostEnd - norm.hostStart);
      if (count === 0) return null;
      if (canonicalTail(url, pathStart)) return this.applyCandidates(url, count);
    }
    if (!normalizeWithParser(url, norm)) return null;
    const href = norm.href;
    const count =
      norm.hostOverride === null ? this.hosts.collect(href, norm.hostStart, norm.hostEnd) : this.hosts.collect(norm.hostOverride, 0, norm.hostOverride.length);
    const result = this.applyCandidates(href, count);
    if (result === null) return null;
    return norm.username === '' && norm.password === '' ? result : restoreCredentials(result, norm);
  }

  rewriteWithRuleset(url: string): RewriteOutcome {
    const result = this.rewrite(url);
    if (result !== null) return { rewritten: result, ruleset: this.rulesetName(this.lastRuleset) };
    if (!normalizeUrl(url, this.norm)) return { rewritten: null, ruleset: null, error: `not a valid URL: ${JSON.stringify(url)}` };
    return { rewritten: null, ruleset: null };
  }

  /** Ids of the rulesets whose targets cover `hostname`, in the order they are tried (repeats removed). */
  candidateRulesets(hostname: string): number[] {
    const count = this.hosts.collect(hostname, 0, hostname.length);
    const ids: number[] = [];
    for (let c = 0; c < count; c++) {
      for (const id of this.hosts.nodeRulesets(this.candidates[c] as number)) if (!ids.includes(id)) ids.push(id);
    }
    return ids;
  }

  explain(url: string): Explanation {
    const norm = newNormalizedUrl();
    if (!normalizeUrl(url, norm))
      return { url, href: null, host: null, error: `not a valid URL: ${JSON.stringify(url)}`, candidates: [], rewritten: null, ruleset: null };
    const host = norm.hostOverride ?? norm.href.slice(norm.hostStart, norm.hostEnd);
    const count = norm.hostOverride === null ? this.hosts.collect(norm.href, norm.hostStart, norm.hostEnd) : this.hosts.collect(host, 0, host.length);
    const nodes = Array.from(this.candidates.subarray(0, count));
    const steps: ExplainStep[] = [];
    const seen = new Set<number>();
    let rewritten: string | null = null;
    let winner: string | null = null;
    for (const node of nodes) {
      const target = this.hosts.nodeHost(node);
      for (const id of this.hosts.nodeRulesets(node)) {
        if (seen.has(id)) continue;
        seen.add(id);
        const step: ExplainStep = { ruleset: this.rulesetName(id), target, active: this.active[id] === 1, outcome: 'not-reached' };
        if (!step.active) step.inactiveReason = this.rulesets.inactiveReason(id);
        steps.push(step);
        if (winner !== null) continue;
        if (!step.active) {
          step.outcome = 'inactive';
          continue;
        }
        this.describeApply(id, norm.href, step);
        if (step.outcome === 'rewrote') {
          winner = step.ruleset;
          rewritten = restoreCredentials(step.result as string, norm);
        }
      }
    }
    return { url, href: norm.href, host, candidates: steps, rewritten, ruleset: winner };
  }

  rulesetName(id: number): string {
    return this.rulesets.name(id);
  }

  rulesetIdsByName(name: string): number[] {
    return this.rulesets.idsByName(name);
  }

  isActive(id: number): boolean {
    return this.active[id] === 1;
  }

  /** Whether the ruleset is on before any user override (with the mixed-content switch as set, or as given). */
  isDefaultActive(id: number, mixedContent?: boolean): boolean {
    return this.rulesets.isDefaultActive(id, mixedContent);
  }

  /** Overrides a ruleset by name (all rulesets of that name); undefined returns it to its default. */
  setActive(name: string, active: boolean | undefined): void {
    this.rulesets.setActive(name, active);
  }

  /**
   * Patterns the regex door refused since the last call, each with its ruleset (now disabled)
   * and the reason. Patterns are judged when first used, so this grows as URLs are rewritten.
   */
  takeRegexRefusals(): RegexRefusal[] {
    const taken = this.refusals;
    this.refusals = [];
    return taken;
  }

  /** Current user overrides (name → on/off); only what differs from the defaults is kept. */
  activeOverrides(): ReadonlyMap<string, boolean> {
    return this.rulesets.activeOverrides();
  }

  setMixedContent(on: boolean): void {
    this.rulesets.setMixedContent(on);
  }

  /** Decodes one ruleset back into the model (tests are not stored in bundles). */
  ruleset(id: number): Ruleset {
    const rs: Ruleset = { name: this.rulesetName(id), targets: [], rules: [], exclusions: [], secureCookies: [], tests: [] };
    const note = this.rulesets.defaultOff(id);
    if (note !== null) rs.defaultOff = note;
    const platform = this.rulesets.platform(id);
    if (platform !== null) rs.platform = platform;
    for (const host of this.targetsOf(id)) rs.targets.push({ host });
    for (let r = this.rsRuleStart.get(id); r < this.rsRuleStart.get(id + 1); r++)
      rs.rules.push({ from: this.strings.cached(this.ruleFrom.get(r)), to: this.strings.cached(this.ruleTo.get(r)) });
    for (let e = this.rsExclStart.get(id); e < this.rsExclStart.get(id + 1); e++) rs.exclusions.push({ pattern: this.strings.cached(this.exclPattern.get(e)) });
    for (let c = this.rsCookieStart.get(id); c < this.rsCookieStart.get(id + 1); c++)
      rs.secureCookies.push({ host: this.strings.cached(this.cookieHost.get(c)), name: this.strings.cached(this.cookieName.get(c)) });
    return rs;
  }

  /**
   * Target patterns of a ruleset, in host-index order (the bundle keeps no per-ruleset target
   * list: it is derived from the trie in one pass, the first time any ruleset's targets are asked for).
   */
  targetsOf(id: number): string[] {
    return this.hosts.targetsOf(id);
  }

  /** Whether the ruleset's only rule is the trivial one with no exclusion. */
  isTrivialOnly(id: number): boolean {
    return this.rulesets.isTrivialOnly(id);
  }

  /**
   * Reference secure-cookie decision: the cookie's host (leading dots removed) must be one an
   * active ruleset upgrades, and an active candidate ruleset must have a <securecookie> whose
   * host pattern matches the raw cookie domain and whose name pattern matches the cookie name.
   */
  shouldSecureCookie(cookie: { domain: string; name: string }): boolean {
    let host = cookie.domain;
    while (host.startsWith('.')) host = host.slice(1);
    const ids = this.candidateRulesets(host).filter((id) => this.active[id] === 1);
    if (ids.length === 0) return false;
    const probe = newNormalizedUrl();
    if (!normalizeUrl(`http://${host}${COOKIE_PROBE_PATH}`, probe)) return false;
    if (!ids.some((id) => this.applyRuleset(id, probe.href) !== null)) return false;
    for (const id of ids) {
      this.applying = id;
      for (let c = this.rsCookieStart.get(id); c < this.rsCookieStart.get(id + 1) && this.refused[id] === 0; c++) {
        // Host and name patterns share one lazily built array: hosts at 2c, names at 2c + 1.
        if (
          this.testCookie(2 * c, this.cookieHost.get(c), cookie.domain) &&
          this.testCookie(2 * c + 1, this.cookieName.get(c), cookie.name) &&
          this.refused[id] === 0
        )
          return true;
      }
    }
    return false;
  }

  // ---- matching ---------------------------------------------------------------------------

  /** Tries the `count` candidate nodes left in `candidates` by collect, in order. */
  private applyCandidates(href: string, count: number): string | null {
    const candidates = this.candidates;
    const active = this.active;
    const n = this.rulesetCount;
    for (let c = 0; c < count; c++) {
      const ref = this.hosts.ref(candidates[c] as number);
      if (ref <= n) {
        const id = ref - 1;
        if (active[id] === 1) {
          const out = this.applyRuleset(id, href);
          if (out !== null) {
            this.lastRuleset = id;
            return out;
          }
        }
        continue;
      }
      // A ruleset may come up again through another pattern; applying it again gives the same
      // null, so repeats need no bookkeeping.
      const at = ref - n - 1;
      const end = at + (this.refList[at] as number);
      for (let k = at + 1; k <= end; k++) {
        const id = this.refList[k] as number;
        if (active[id] !== 1) continue;
        const out = this.applyRuleset(id, href);
        if (out !== null) {
          this.lastRuleset = id;
          return out;
        }
      }
    }
    return null;
  }

  /** One ruleset's `apply`: exclusions veto, then the first rule that changes the URL wins. */
  private applyRuleset(id: number, href: string): string | null {
    if (this.trivialOnly[id] === 1) return upgradeHttp(href);
    if (this.refused[id] === 1) return null;
    this.applying = id;
    const out = this.applyPatterns(id, href);
    // A pattern refused on the way disables the whole ruleset, this URL included.
    return this.refused[id] === 1 ? null : out;
  }

  private applyPatterns(id: number, href: string): string | null {
    const exclusionsStart = this.rsExclStart.get(id);
    const exclusionsEnd = this.rsExclStart.get(id + 1);
    if (exclusionsEnd - exclusionsStart >= EXCLUSION_INDEX_MIN) {
      if (this.excludedByIndex(id, exclusionsStart, exclusionsEnd, href)) return null;
    } else {
      for (let e = exclusionsStart; e < exclusionsEnd; e++) if (this.excludes(e, href)) return null;
    }
    for (let r = this.rsRuleStart.get(id), end = this.rsRuleStart.get(id + 1); r < end; r++) {
      const out = this.applyRule(r, href);
      if (out !== null) return out;
    }
    return null;
  }

  /** A rule's result when it changes `href`, else null. */
  private applyRule(r: number, href: string): string | null {
    const patterns = this.rulePatterns ?? (this.rulePatterns = new Array<PreparedPattern | undefined>(this.ruleKind.length).fill(undefined));
    let p = patterns[r];
    if (p === undefined) {
      const kind = this.ruleKind.get(r);
      if (kind === RuleKind.Trivial) return upgradeHttp(href);
      const from = this.strings.decode(this.ruleFrom.get(r));
      const to = this.strings.decode(this.ruleTo.get(r));
      p = kind === RuleKind.Literal ? prepareLiteralRule(literalPrefix(from)?.prefix ?? '', to) : prepareRule(from, to);
      patterns[r] = p;
    }
    if (!href.startsWith(p.prefix)) return null;
    if (p.form !== Form.Regex) return rewriteLiteral(p, href);
    const re = p.regex !== undefined ? p.regex : this.compile(p);
    if (re === null) return null;
    const out = re.replace(href, p.to);
    return out === href ? null : out;
  }

  /** Whether exclusion `e` matches `href`. */
  private excludes(e: number, href: string): boolean {
    return this.matches(this.exclusion(e), href);
  }

  private exclusion(e: number): PreparedPattern {
    const patterns = this.exclusionPatterns ?? (this.exclusionPatterns = new Array<PreparedPattern | undefined>(this.exclPattern.length).fill(undefined));
    return patterns[e] ?? (patterns[e] = prepareTest(this.strings.decode(this.exclPattern.get(e))));
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
    const patterns = this.cookiePatterns ?? (this.cookiePatterns = new Array<PreparedPattern | undefined>(2 * this.cookieHost.length).fill(undefined));
    return this.matches(patterns[k] ?? (patterns[k] = prepareTest(this.strings.decode(source))), input);
  }

  /** Whether a test pattern (exclusion or securecookie) matches `input`. */
  private matches(p: PreparedPattern, input: string): boolean {
    if (!input.startsWith(p.prefix)) return false;
    if (p.form === Form.Cases) return casesMatch(p, input);
    const re = p.regex !== undefined ? p.regex : this.compile(p);
    return re !== null && re.test(input);
  }

  private describeApply(id: number, href: string, step: ExplainStep): void {
    this.applying = id;
    this.describePatterns(id, href, step);
    if (this.refused[id] === 1) {
      step.outcome = 'refused';
      delete step.result;
      delete step.rule;
      delete step.exclusion;
    }
  }

  private describePatterns(id: number, href: string, step: ExplainStep): void {
    if (this.refused[id] === 1) return;
    for (let e = this.rsExclStart.get(id); e < this.rsExclStart.get(id + 1); e++) {
      if (this.excludes(e, href)) {
        step.outcome = 'excluded';
        step.exclusion = this.strings.cached(this.exclPattern.get(e));
        return;
      }
    }
    const start = this.rsRuleStart.get(id);
    for (let r = start; r < this.rsRuleStart.get(id + 1); r++) {
      const out = this.applyRule(r, href);
      if (out !== null) {
        step.outcome = 'rewrote';
        step.rule = { index: r - start, from: this.strings.cached(this.ruleFrom.get(r)), to: this.strings.cached(this.ruleTo.get(r)) };
        step.result = out;
        return;
      }
    }
    step.outcome = 'no-rule-matched';
  }

  // ---- strings and regexes ----------------------------------------------------------------

  /**
   * Compiles the regex of `pattern` through the regex door (regex/safe-regex.ts); a pattern
   * that does not compile is remembered as failing, once, and one the door refuses disables the
   * ruleset being applied. Past the cache size the oldest compiled regex is dropped (FIFO:
   * browsing has locality) and compiled again if needed (the door's verdict is cached).
   */
  private compile(pattern: PreparedPattern): RulesetRegex | null {
    const compiled = compileRulesetRegex(pattern.source, pattern.isRule ? { use: 'replace', to: pattern.to } : { use: 'test' });
    let re: RulesetRegex | null = null;
    if (compiled.ok) re = compiled.regex;
    else if (!compiled.refused) this.regexErrors.set(pattern.source, compiled.reason);
    else {
      const id = this.applying;
      if (id >= 0 && this.refused[id] === 0) {
        this.refused[id] = 1;
        this.refusals.push({ ruleset: this.rulesetName(id), pattern: pattern.source, reason: compiled.reason });
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
}

/** `href.replace(/^http:/, 'https:')` when it changes anything, else null. */
function upgradeHttp(href: string): string | null {
  if (href.charCodeAt(0) === 0x68 && href.charCodeAt(1) === 0x74 && href.charCodeAt(2) === 0x74 && href.charCodeAt(3) === 0x70 && href.charCodeAt(4) === 0x3a) {
    return 'https:' + href.slice(5);
  }
  return null;
}

/** Loads a compiled bundle; throws BundleError when it is truncated, corrupt or of another version. */
export function loadBundle(bytes: Uint8Array, options: EngineOptions = {}): Engine {
  return new Engine(bytes, options);
}
