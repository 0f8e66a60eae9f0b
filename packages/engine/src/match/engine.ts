import type { Ruleset } from '../model/ruleset.js';
import { hashStep, LABEL_HASH_SEED, NODE_STRIDE, NONE, popcount, readLength, RuleKind, RulesetFlag, Section, slotHash } from '../bundle/format.js';
import type { PackedArray } from '../bundle/packed-array.js';
import { ESCAPE } from '../bundle/string-dictionary.js';
import { dictionaryTable, StringPool } from './string-pool.js';
import { literalPrefix } from '../regex/literal-prefix.js';
import { ExclusionIndex } from './exclusion-index.js';
import { casesMatch, Form, type PreparedPattern, prepareLiteralRule, prepareRule, prepareTest, rewriteLiteral } from './prepared-pattern.js';
import { readBundleSections, type BundleHeader, type BundleVerification } from '../bundle/read.js';
import {
  canonicalAuthority,
  canonicalTail,
  type HostLabels,
  MAX_LABELS,
  newHostLabels,
  newNormalizedUrl,
  normalizeUrl,
  normalizeWithParser,
  restoreCredentials,
  type NormalizedUrl,
} from '../url/normalize.js';
import type { Explanation, ExplainStep } from './explain.js';
import { compileRulesetRegex, type RulesetRegex } from '../regex/safe-regex.js';

const STAR = 0x2a;
const DOT = 0x2e;
const STAR_LABEL_HASH = hashStep(LABEL_HASH_SEED, STAR);
const MAX_HOST_LENGTH = 255;
/** Stands for the root in collect's suffix ranks (the root has no record). */
const ROOT = -2;
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
  private readonly labels: Uint8Array;
  /** The label dictionary section, and where each byte's entry lies in it (length 0: a literal). */
  private readonly labelDictionary: Uint8Array;
  /** Per byte: its entry's offset << 8 | its length (1..255); 0 for a literal byte. */
  private readonly labelEntry = new Int32Array(256);
  private readonly labelEntries: (Uint8Array | undefined)[];
  /** Per 32 host-table slots: occupied slots before the block, occupancy bits. */
  private readonly occupancy: Uint32Array;
  private readonly slotMask: number;
  /** NODE_STRIDE words per occupied slot, in slot order (see Section.Nodes). */
  private readonly nodes: Uint32Array;
  private readonly nodeCount: number;
  // Node field positions (see NodeLayout), copied to fields so the hot path reads no object.
  private readonly rootParent: number;
  private readonly rootStar: boolean;
  private readonly parentMask: number;
  private readonly parentBits: number;
  private readonly refHighMask: number;
  private readonly labelShift: number;
  private readonly labelMask: number;
  private readonly starBit: number;
  private readonly lengthShift: number;
  private readonly lengthMask: number;
  private readonly refList: Uint32Array;
  private readonly rsFlags: PackedArray;
  private readonly rsName: PackedArray;
  private readonly noteOwner: PackedArray;
  private readonly note: PackedArray;
  private readonly platformOwner: PackedArray;
  private readonly platform: PackedArray;
  private readonly rsRuleStart: PackedArray;
  private readonly rsExclStart: PackedArray;
  private readonly rsCookieStart: PackedArray;
  private readonly ruleFrom: PackedArray;
  private readonly ruleTo: PackedArray;
  private readonly ruleKind: PackedArray;
  private readonly exclPattern: PackedArray;
  private readonly cookieHost: PackedArray;
  private readonly cookieName: PackedArray;

  /** 1 where the ruleset is active now (defaults, mixed-content switch and user overrides). */
  private readonly active: Uint8Array;
  /** 1 where RulesetFlag.TrivialOnly is set. */
  private readonly trivialOnly: Uint8Array;
  private readonly overrides = new Map<string, boolean>();
  private mixedContent: boolean;
  private namesToIds: Map<string, number[]> | null = null;
  private targetIndex: number[][] | null = null;

  // Decoded labels and compiled regexes, filled on first use only.
  private readonly labelStrings = new Map<number, string>();
  /** Rules, exclusions and cookie patterns as they run, by their index in their column; built on first use. */
  private rulePatterns: (PreparedPattern | undefined)[] | null = null;
  private exclusionPatterns: (PreparedPattern | undefined)[] | null = null;
  private cookiePatterns: (PreparedPattern | undefined)[] | null = null;
  /** Rulesets with at least EXCLUSION_INDEX_MIN exclusions: their exclusions as one sorted index. */
  private readonly exclusionIndexes = new Map<number, ExclusionIndex>();
  /** Patterns holding a compiled regex, oldest first at `regexNext` once the ring is full. */
  private readonly regexRing: (PreparedPattern | undefined)[];
  private regexNext = 0;
  private readonly decoder = new TextDecoder();
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
  private readonly hostLabels: HostLabels = newHostLabels();
  /** Record rank and slot of the node for labels i..n-1 (-1: none, ROOT: the root). */
  private readonly suffix = new Int32Array(MAX_LABELS + 1);
  private readonly suffixSlot = new Int32Array(MAX_LABELS + 1);
  private readonly star = new Int32Array(MAX_LABELS + 1);
  private readonly starSlot = new Int32Array(MAX_LABELS + 1);
  /** The root's `*` child (right-wildcard targets hang below it): rank (-1: none) and slot. */
  private readonly rootStarRank: number;
  private readonly rootStarSlot: number;
  /** Slot of the node the last successful `child` call found. */
  private foundSlot = 0;
  private readonly candidates = new Int32Array(MAX_LABELS * 2 + 1);
  private lastRuleset = -1;

  constructor(bundle: Uint8Array, options: EngineOptions = {}) {
    const { header, layout, u8, u32, packed } = readBundleSections(bundle, options.verify);
    this.header = header;
    this.rulesetCount = header.rulesetCount;
    this.strings = new StringPool(u8[Section.StrBytes] as Uint8Array, u8[Section.Dictionary] as Uint8Array);
    this.labels = u8[Section.Labels] as Uint8Array;
    this.labelDictionary = u8[Section.LabelDictionary] as Uint8Array;
    // At most 255 entries: O(1) even for trusted loads.
    this.labelEntries = dictionaryTable(this.labelDictionary);
    this.labelEntries.forEach((entry, b) => {
      if (entry === undefined) return;
      this.labelEntry[b] = ((entry.byteOffset - this.labelDictionary.byteOffset) << 8) | entry.length;
    });
    this.occupancy = u32[Section.Occupancy] as Uint32Array;
    this.slotMask = 2 ** layout.slotBits - 1;
    this.nodes = u32[Section.Nodes] as Uint32Array;
    this.nodeCount = layout.nodeCount;
    this.rootParent = layout.rootParent;
    this.rootStar = layout.rootStar;
    this.parentMask = layout.parentMask;
    this.parentBits = layout.parentBits;
    this.refHighMask = layout.refHighMask;
    this.labelShift = layout.labelShift;
    this.labelMask = layout.labelMask;
    this.starBit = layout.starBit;
    this.lengthShift = layout.lengthShift;
    this.lengthMask = layout.lengthMask;
    // One probe at load instead of one per URL (a trusted bundle with no such child gives -1).
    this.rootStarRank = this.rootStar ? this.child(this.rootParent, STAR_LABEL_HASH, '*', 0, 1) : -1;
    this.rootStarSlot = this.foundSlot;
    this.refList = u32[Section.RefList] as Uint32Array;
    this.rsFlags = packed[Section.RsFlags] as PackedArray;
    this.rsName = packed[Section.RsName] as PackedArray;
    this.noteOwner = packed[Section.NoteOwner] as PackedArray;
    this.note = packed[Section.Note] as PackedArray;
    this.platformOwner = packed[Section.PlatformOwner] as PackedArray;
    this.platform = packed[Section.Platform] as PackedArray;
    this.rsRuleStart = packed[Section.RsRuleStart] as PackedArray;
    this.rsExclStart = packed[Section.RsExclStart] as PackedArray;
    this.rsCookieStart = packed[Section.RsCookieStart] as PackedArray;
    this.ruleFrom = packed[Section.RuleFrom] as PackedArray;
    this.ruleTo = packed[Section.RuleTo] as PackedArray;
    this.ruleKind = packed[Section.RuleKind] as PackedArray;
    this.exclPattern = packed[Section.ExclPattern] as PackedArray;
    this.cookieHost = packed[Section.CookieHost] as PackedArray;
    this.cookieName = packed[Section.CookieName] as PackedArray;
    this.mixedContent = options.mixedContent === true;
    this.regexRing = new Array<PreparedPattern | undefined>(Math.max(1, options.regexCacheSize ?? 2048)).fill(undefined);
    this.active = new Uint8Array(this.rulesetCount);
    this.refused = new Uint8Array(this.rulesetCount);
    this.trivialOnly = new Uint8Array(this.rulesetCount);
    this.recomputeActive();
  }

  // ---- public API -------------------------------------------------------------------------

  /** The rewritten URL, or null when no active ruleset changes it. */
  rewrite(url: string): string | null {
    const norm = this.norm;
    const pathStart = canonicalAuthority(url, norm, this.hostLabels);
    if (pathStart >= 0) {
      // Host and port are proven canonical: look the host up before reading the rest of the
      // URL, so the common case (no ruleset covers the host) never scans the path.
      const count = this.lookup(url, this.hostLabels, norm.hostEnd - norm.hostStart);
      if (count === 0) return null;
      if (canonicalTail(url, pathStart)) return this.applyCandidates(url, count);
    }
    if (!normalizeWithParser(url, norm)) return null;
    const href = norm.href;
    const count = norm.hostOverride === null ? this.collect(href, norm.hostStart, norm.hostEnd) : this.collect(norm.hostOverride, 0, norm.hostOverride.length);
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
    const count = this.collect(hostname, 0, hostname.length);
    const ids: number[] = [];
    for (let c = 0; c < count; c++) {
      for (const id of this.nodeRulesets(this.candidates[c] as number)) if (!ids.includes(id)) ids.push(id);
    }
    return ids;
  }

  explain(url: string): Explanation {
    const norm = newNormalizedUrl();
    if (!normalizeUrl(url, norm))
      return { url, href: null, host: null, error: `not a valid URL: ${JSON.stringify(url)}`, candidates: [], rewritten: null, ruleset: null };
    const host = norm.hostOverride ?? norm.href.slice(norm.hostStart, norm.hostEnd);
    const count = norm.hostOverride === null ? this.collect(norm.href, norm.hostStart, norm.hostEnd) : this.collect(host, 0, host.length);
    const nodes = Array.from(this.candidates.subarray(0, count));
    const steps: ExplainStep[] = [];
    const seen = new Set<number>();
    let rewritten: string | null = null;
    let winner: string | null = null;
    for (const node of nodes) {
      const target = this.nodeHost(node);
      for (const id of this.nodeRulesets(node)) {
        if (seen.has(id)) continue;
        seen.add(id);
        const step: ExplainStep = { ruleset: this.rulesetName(id), target, active: this.active[id] === 1, outcome: 'not-reached' };
        if (!step.active) step.inactiveReason = this.inactiveReason(id);
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
    return this.strings.cached(this.rsName.get(id));
  }

  rulesetIdsByName(name: string): number[] {
    if (this.namesToIds === null) {
      this.namesToIds = new Map();
      for (let id = 0; id < this.rulesetCount; id++) {
        const n = this.rulesetName(id);
        const ids = this.namesToIds.get(n);
        if (ids === undefined) this.namesToIds.set(n, [id]);
        else ids.push(id);
      }
    }
    return this.namesToIds.get(name) ?? [];
  }

  isActive(id: number): boolean {
    return this.active[id] === 1;
  }

  /** Whether the ruleset is on before any user override (with the mixed-content switch as set, or as given). */
  isDefaultActive(id: number, mixedContent = this.mixedContent): boolean {
    const flags = this.rsFlags.get(id);
    return (flags & RulesetFlag.DefaultOn) !== 0 || (mixedContent && (flags & RulesetFlag.MixedContent) !== 0);
  }

  /** Overrides a ruleset by name (all rulesets of that name); undefined returns it to its default. */
  setActive(name: string, active: boolean | undefined): void {
    if (active === undefined) this.overrides.delete(name);
    else this.overrides.set(name, active);
    for (const id of this.rulesetIdsByName(name)) this.active[id] = (active ?? this.isDefaultActive(id)) ? 1 : 0;
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
    return this.overrides;
  }

  setMixedContent(on: boolean): void {
    this.mixedContent = on;
    this.recomputeActive();
  }

  /** Decodes one ruleset back into the model (tests are not stored in bundles). */
  ruleset(id: number): Ruleset {
    const rs: Ruleset = { name: this.rulesetName(id), targets: [], rules: [], exclusions: [], secureCookies: [], tests: [] };
    const note = sparseLookup(this.noteOwner, this.note, id);
    if (note !== NONE) rs.defaultOff = this.strings.cached(note);
    const platform = sparseLookup(this.platformOwner, this.platform, id);
    if (platform !== NONE) rs.platform = this.strings.cached(platform);
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
    if (this.targetIndex === null) {
      const index: number[][] = Array.from({ length: this.rulesetCount }, () => []);
      for (let node = 0; node < this.nodeCount; node++) for (const r of this.nodeRulesets(node)) index[r]?.push(node);
      this.targetIndex = index;
    }
    return (this.targetIndex[id] ?? []).map((node) => this.nodeHost(node));
  }

  /** Whether the ruleset's only rule is the trivial one with no exclusion. */
  isTrivialOnly(id: number): boolean {
    return (this.rsFlags.get(id) & RulesetFlag.TrivialOnly) !== 0;
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
      const ref = this.ref(candidates[c] as number);
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

  /**
   * Fills `candidates` with the trie nodes that carry rulesets for the hostname `src[start,end)`,
   * in the reference order: the exact host; each label replaced by `*` from left to right; then
   * `*.` + the suffix from label 2 to label n-2. Returns how many.
   */
  private collect(src: string, start: number, end: number): number {
    const labels = this.hostLabels;
    labels.count = 0;
    if (end - start > MAX_HOST_LENGTH) return 0;
    let n = 0;
    let s = start;
    let h = LABEL_HASH_SEED;
    for (let i = start; i < end; i++) {
      const c = src.charCodeAt(i);
      if (c !== DOT) {
        h = hashStep(h, c);
        continue;
      }
      if (i === s && i > start) return 0; // ".." matches nothing
      labels.start[n] = s;
      labels.end[n] = i;
      labels.hash[n] = h;
      n++;
      s = i + 1;
      h = LABEL_HASH_SEED;
    }
    labels.start[n] = s;
    labels.end[n] = end;
    labels.hash[n] = h;
    labels.count = n + 1;
    return this.lookup(src, labels, end - start);
  }

  /** collect, for a hostname of `length` characters already split into `labels`. */
  private lookup(src: string, labels: HostLabels, length: number): number {
    if (length === 0 || length > MAX_HOST_LENGTH) return 0;
    const n = labels.count;
    const ls = labels.start;
    const le = labels.end;
    const lh = labels.hash;

    // suffix[i]: record of labels i..n-1 (-1: none), suffixSlot[i] its slot; suffix[n] is the root.
    const suffix = this.suffix;
    const suffixSlot = this.suffixSlot;
    suffix[n] = ROOT;
    suffixSlot[n] = this.rootParent;
    let node = ROOT;
    let slot = this.rootParent;
    for (let i = n - 1; i >= 0; i--) {
      if (node !== -1) {
        node = this.child(slot, lh[i] as number, src, ls[i] as number, le[i] as number);
        slot = this.foundSlot;
      }
      suffix[i] = node;
      suffixSlot[i] = slot;
    }
    // star[i]: record of the `*` child of the suffix node i (-1: none), starSlot[i] its slot.
    // Both candidate families below start from these; the root's is found once, at load.
    const star = this.star;
    const starSlot = this.starSlot;
    star[n] = this.rootStarRank;
    starSlot[n] = this.rootStarSlot;
    for (let i = n - 1; i >= 1; i--) {
      const base = suffix[i] as number;
      if (base === -1 || !this.hasStarChild(base)) {
        star[i] = -1;
        continue;
      }
      star[i] = this.child(suffixSlot[i] as number, STAR_LABEL_HASH, '*', 0, 1);
      starSlot[i] = this.foundSlot;
    }
    const out = this.candidates;
    let count = 0;
    const exact = suffix[0] as number;
    if (exact >= 0 && this.ref(exact) !== 0) out[count++] = exact;
    for (let k = 0; k < n; k++) {
      let at = star[k + 1] as number;
      if (at < 0) continue;
      let slotAt = starSlot[k + 1] as number;
      for (let j = k - 1; j >= 0 && at >= 0; j--) {
        at = this.child(slotAt, lh[j] as number, src, ls[j] as number, le[j] as number);
        slotAt = this.foundSlot;
      }
      if (at >= 0 && this.ref(at) !== 0) out[count++] = at;
    }
    for (let i = 2; i <= n - 2; i++) {
      const at = star[i] as number;
      if (at >= 0 && this.ref(at) !== 0) out[count++] = at;
    }
    return count;
  }

  /**
   * The record of the child of the node at slot `parent` labelled `src[start,end)` (whose label
   * hash is `labelHash`), or -1; on success `foundSlot` is its slot.
   */
  private child(parent: number, labelHash: number, src: string, start: number, end: number): number {
    const occupancy = this.occupancy;
    const nodes = this.nodes;
    const mask = this.slotMask;
    const parentMask = this.parentMask;
    let slot = slotHash(labelHash, parent) & mask;
    let bits = occupancy[(slot >>> 5) * 2 + 1] as number;
    if (((bits >>> (slot & 31)) & 1) === 0) return -1;
    // Records are in slot order: the rank of the first probed slot, then one more per step.
    let rank = (occupancy[(slot >>> 5) * 2] as number) + popcount(bits & ~(-1 << (slot & 31)));
    for (;;) {
      const at = rank * NODE_STRIDE;
      if (((nodes[at] as number) & parentMask) === parent && this.labelEquals(nodes[at + 1] as number, src, start, end)) {
        this.foundSlot = slot;
        return rank;
      }
      slot = (slot + 1) & mask;
      if ((slot & 31) === 0) {
        bits = occupancy[(slot >>> 5) * 2 + 1] as number;
        rank = occupancy[(slot >>> 5) * 2] as number;
      } else {
        rank++;
      }
      if (((bits >>> (slot & 31)) & 1) === 0) return -1;
    }
  }

  /** Whether the label in record word 1 `word` is `src[start,end)`. */
  private labelEquals(word: number, src: string, start: number, end: number): boolean {
    // The length kept in the record rejects most mismatches without touching the label pool.
    const recorded = (word >>> this.lengthShift) & this.lengthMask;
    const at = (word >>> this.labelShift) & this.labelMask;
    if (recorded !== this.lengthMask) return recorded === end - start && this.codedMatch(at, src, start, end) >= 0;
    // A long label carries its byte length: it must also end exactly there.
    const meta = readLength(this.labels, at);
    const from = at + (meta & 7);
    return this.codedMatch(from, src, start, end) === from + (meta >>> 3);
  }

  /**
   * Expands the coded label bytes from `i` while comparing them with `src[start,end)`, until the
   * host label is used up. Returns the index after the bytes used, or -1 on a difference (also
   * when the bytes run out: a corrupt trusted bundle cannot make this read past the pool).
   */
  private codedMatch(i: number, src: string, start: number, end: number): number {
    const bytes = this.labels;
    const limit = bytes.length;
    const entries = this.labelEntry;
    const dictionary = this.labelDictionary;
    let p = start;
    while (p < end) {
      if (i >= limit) return -1;
      let b = bytes[i++] as number;
      const entry = entries[b] as number;
      if (entry === 0) {
        if (b === ESCAPE) {
          if (i >= limit) return -1;
          b = bytes[i++] as number;
        }
        if (b !== src.charCodeAt(p)) return -1;
        p++;
        continue;
      }
      const length = entry & 0xff;
      if (p + length > end) return -1;
      for (let k = entry >>> 8, last = k + length; k < last; k++, p++) if (dictionary[k] !== src.charCodeAt(p)) return -1;
    }
    return i;
  }

  /** The ruleset ref of a record: 0 none, 1..n id + 1, above n a RefList index + n + 1. */
  private ref(rank: number): number {
    const at = rank * NODE_STRIDE;
    return ((this.nodes[at] as number) >>> this.parentBits) | (((this.nodes[at + 1] as number) & this.refHighMask) << (32 - this.parentBits));
  }

  private hasStarChild(rank: number): boolean {
    return rank === ROOT ? this.rootStar : ((this.nodes[rank * NODE_STRIDE + 1] as number) & this.starBit) !== 0;
  }

  private nodeRulesets(node: number): number[] {
    const ref = this.ref(node);
    if (ref === 0) return [];
    if (ref <= this.rulesetCount) return [ref - 1];
    const at = ref - this.rulesetCount - 1;
    return Array.from(this.refList.subarray(at + 1, at + 1 + (this.refList[at] as number)));
  }

  /** The target pattern a trie node stands for, e.g. `*.example.com`. */
  private nodeHost(node: number): string {
    const labels: string[] = [];
    // A hostname has at most MAX_LABELS labels; the bound also stops a looping trusted bundle.
    for (let at = node; at >= 0 && labels.length < MAX_LABELS;) {
      const word = this.nodes[at * NODE_STRIDE + 1] as number;
      labels.push(this.label(word));
      const parent = (this.nodes[at * NODE_STRIDE] as number) & this.parentMask;
      at = parent === this.rootParent ? -1 : this.rankOf(parent);
    }
    return labels.join('.');
  }

  /** Record index of an occupied slot. */
  private rankOf(slot: number): number {
    return (this.occupancy[(slot >>> 5) * 2] as number) + popcount((this.occupancy[(slot >>> 5) * 2 + 1] as number) & ~(-1 << (slot & 31)));
  }

  private inactiveReason(id: number): string {
    const name = this.rulesetName(id);
    const override = this.overrides.get(name);
    if (override === false) return 'disabled by the user';
    const note = sparseLookup(this.noteOwner, this.note, id);
    if (note !== NONE) return `default_off: ${this.strings.cached(note)}`;
    const platform = sparseLookup(this.platformOwner, this.platform, id);
    if (platform !== NONE)
      return `platform="${this.strings.cached(platform)}"${this.strings.cached(platform) === 'mixedcontent' ? ' (mixed-content rulesets are off)' : ''}`;
    return 'off';
  }

  private recomputeActive(): void {
    // The flags column unpacked inline (as PackedArray.get does): this loop runs at load over
    // every ruleset before anything is optimised, where a call per field costs a fresh
    // process ~10 ms on the full corpus.
    const { words, bits } = this.rsFlags;
    const mask = 2 ** bits - 1;
    const on = RulesetFlag.DefaultOn | (this.mixedContent ? RulesetFlag.MixedContent : 0);
    for (let id = 0, bit = 0; id < this.rulesetCount; id++, bit += bits) {
      const w = bit >>> 5;
      const shift = bit & 31;
      let flags = (words[w] as number) >>> shift;
      if (shift + bits > 32) flags |= (words[w + 1] as number) << (32 - shift);
      flags &= mask;
      this.active[id] = (flags & on) !== 0 ? 1 : 0;
      // Unpacked in the pass that reads the flags anyway: the hot path tests it per candidate.
      this.trivialOnly[id] = (flags & RulesetFlag.TrivialOnly) !== 0 ? 1 : 0;
    }
    for (const [name, on] of this.overrides) for (const id of this.rulesetIdsByName(name)) this.active[id] = on ? 1 : 0;
  }

  // ---- strings and regexes ----------------------------------------------------------------

  /** The host label of record word 1 `word`, cached by label id. */
  private label(word: number): string {
    const id = (word >>> this.labelShift) & this.labelMask;
    let s = this.labelStrings.get(id);
    if (s === undefined) {
      const bytes = this.labels;
      const recorded = (word >>> this.lengthShift) & this.lengthMask;
      let i = id;
      let stop = Infinity;
      if (recorded === this.lengthMask) {
        const meta = readLength(bytes, i);
        i += meta & 7;
        stop = i + (meta >>> 3);
      }
      const out: number[] = [];
      // Short labels end after `recorded` expanded bytes, long ones at their header's end.
      while (i < Math.min(stop, bytes.length) && (stop !== Infinity || out.length < recorded)) {
        let b = bytes[i++] as number;
        const entry = this.labelEntries[b];
        if (entry !== undefined) {
          for (const e of entry) out.push(e);
          continue;
        }
        if (b === ESCAPE) b = bytes[i++] ?? 0;
        out.push(b);
      }
      s = this.decoder.decode(Uint8Array.from(out));
      this.labelStrings.set(id, s);
    }
    return s;
  }

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

/** The value paired with ruleset `id` in a sparse (ascending owners, values) section, or NONE. */
function sparseLookup(owners: PackedArray, values: PackedArray, id: number): number {
  let lo = 0;
  let hi = owners.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const owner = owners.get(mid);
    if (owner === id) return values.get(mid);
    if (owner < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return NONE;
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
