import type { Ruleset } from '../model/ruleset.js';
import { Section } from '../bundle/format.js';
import { StringPool } from './string-pool.js';
import { HostIndex } from './host-index.js';
import { RulesetBit, RulesetState } from './ruleset-state.js';
import { PatternCache, type RegexRefusal, upgradeHttp } from './pattern-cache.js';
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
import { describeRuleset, type Explanation, type ExplainStep } from './explain.js';

/**
 * Compiled regexes kept by default. All 165k oracle URLs need 1,023 distinct regexes. A FIFO
 * smaller than the set a pass cycles through keeps none of it: at 512 every one of the 1,023 was
 * compiled again on each pass over the oracle, and those compiles made the p99 (14.8 µs against
 * 2.7-2.9 µs at 1,024-1,536, same noisy machine). 1,536 holds the public set with half again to
 * spare, for about 1.2 MB more heap after the run (7.2 -> 8.5 MB).
 */
const DEFAULT_REGEX_CACHE_SIZE = 1536;

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

export type { RegexRefusal };

export interface EngineOptions {
  /** Turn on `platform="mixedcontent"` rulesets. */
  mixedContent?: boolean;
  /**
   * Most compiled regexes kept at once (default 1,536; patterns with a finite language need none).
   * Each costs V8 about 2 KB of heap, mostly code; past the cap the oldest is dropped and
   * recompiled if needed again (FIFO, as browsing has locality).
   */
  regexCacheSize?: number;
  /** How much of the bundle to check at load; see BundleVerification. Default `full`. */
  verify?: BundleVerification;
  /**
   * Run patterns on the regex verdicts the bundle carries (compileBundle's `regexVerdicts`)
   * instead of judging them here: no analysis at first use. Only for a bundle this project
   * built and ships, the extension's packaged defaults (background/engine-loader.ts) and the
   * bench standing for them; never for a channel's bundle, a file the user names, an import or
   * anything read back from storage, where whoever wrote the bytes could call any regex safe.
   * Without it a bundle's verdicts are ignored. test/regex-verdicts.test.ts lists who passes it.
   * Default false.
   */
  trustBundledRegexVerdicts?: boolean;
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
  // Its per-ruleset state bytes (RulesetBit, 0 until settled), held here too for the hot path.
  private readonly state: Uint8Array;
  /** Rules, exclusions and securecookies as they run, and the regexes compiled for them. */
  private readonly patterns: PatternCache;
  /** Regexes that failed to compile at run time (a bundle built by another tool), by pattern. */
  readonly regexErrors: Map<string, string>;

  // Scratch state reused by every lookup.
  private readonly norm: NormalizedUrl = newNormalizedUrl();
  private lastRuleset = -1;

  constructor(bundle: Uint8Array, options: EngineOptions = {}) {
    const sections = readBundleSections(bundle, options.verify);
    const { header, u8 } = sections;
    this.header = header;
    this.rulesetCount = header.rulesetCount;
    this.strings = new StringPool(
      u8[Section.StrBytes] as Uint8Array,
      u8[Section.Dictionary] as Uint8Array,
    );
    this.hosts = new HostIndex(sections);
    this.candidates = this.hosts.candidates;
    this.refList = this.hosts.refList;
    this.hostLabels = this.hosts.hostLabels;
    this.rulesets = new RulesetState(sections, this.strings, options.mixedContent === true);
    this.state = this.rulesets.state;
    this.patterns = new PatternCache(
      sections,
      this.strings,
      this.rulesets,
      options.regexCacheSize ?? DEFAULT_REGEX_CACHE_SIZE,
      options.trustBundledRegexVerdicts === true,
    );
    this.regexErrors = this.patterns.regexErrors;
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
    const count = this.collectHost(norm);
    const result = this.applyCandidates(href, count);
    if (result === null) return null;
    return norm.username === '' && norm.password === '' ? result : restoreCredentials(result, norm);
  }

  rewriteWithRuleset(url: string): RewriteOutcome {
    const result = this.rewrite(url);
    if (result !== null) return { rewritten: result, ruleset: this.rulesetName(this.lastRuleset) };
    if (!normalizeUrl(url, this.norm))
      return { rewritten: null, ruleset: null, error: `not a valid URL: ${JSON.stringify(url)}` };
    return { rewritten: null, ruleset: null };
  }

  /**
   * Whether an active ruleset whose targets cover the URL's host has an exclusion matching it:
   * its authors know that URL breaks over HTTPS, so a blanket upgrade (the extension's
   * protection mode) leaves it alone too. Another ruleset may still rewrite it (`rewrite`).
   * Answers that ruleset's name, or null.
   */
  excludedBy(url: string): string | null {
    const norm = this.norm;
    if (!normalizeUrl(url, norm)) return null;
    const href = norm.href;
    const count = this.collectHost(norm);
    for (let c = 0; c < count; c++) {
      for (const id of this.hosts.refRulesets(this.hosts.candidateRefs[c] as number)) {
        if (
          this.rulesets.isActive(id) &&
          !this.rulesets.isTrivialOnly(id) &&
          this.patterns.excluded(id, href)
        )
          return this.rulesetName(id);
      }
    }
    return null;
  }

  /** Whether ruleset `id` has any `<exclusion>` (no pattern is prepared or run). */
  hasExclusions(id: number): boolean {
    return this.patterns.exclusionStart.get(id + 1) > this.patterns.exclusionStart.get(id);
  }

  /** Ids of the rulesets whose targets cover `hostname`, in the order they are tried (repeats removed). */
  candidateRulesets(hostname: string): number[] {
    const count = this.hosts.collect(hostname, 0, hostname.length);
    const ids: number[] = [];
    for (let c = 0; c < count; c++) {
      for (const id of this.hosts.refRulesets(this.hosts.candidateRefs[c] as number))
        if (!ids.includes(id)) ids.push(id);
    }
    return ids;
  }

  explain(url: string): Explanation {
    const norm = newNormalizedUrl();
    if (!normalizeUrl(url, norm))
      return {
        url,
        href: null,
        host: null,
        error: `not a valid URL: ${JSON.stringify(url)}`,
        candidates: [],
        rewritten: null,
        ruleset: null,
      };
    const host = norm.hostOverride ?? norm.href.slice(norm.hostStart, norm.hostEnd);
    const count = this.collectHost(norm);
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
        const step: ExplainStep = {
          ruleset: this.rulesetName(id),
          target,
          active: this.rulesets.isActive(id),
          outcome: 'not-reached',
        };
        if (!step.active) step.inactiveReason = this.rulesets.inactiveReason(id);
        steps.push(step);
        if (winner !== null) continue;
        if (!step.active) {
          step.outcome = 'inactive';
          continue;
        }
        describeRuleset(this.patterns, this.strings, id, norm.href, step);
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
    return this.rulesets.isActive(id);
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
    return this.patterns.takeRefusals();
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
    const rs: Ruleset = {
      name: this.rulesetName(id),
      targets: [],
      rules: [],
      exclusions: [],
      secureCookies: [],
      tests: [],
    };
    const note = this.rulesets.defaultOff(id);
    if (note !== null) rs.defaultOff = note;
    const platform = this.rulesets.platform(id);
    if (platform !== null) rs.platform = platform;
    for (const host of this.targetsOf(id)) rs.targets.push({ host });
    const {
      ruleStart,
      ruleFrom,
      ruleTo,
      exclusionStart,
      exclusionPattern,
      cookieStart,
      cookieHost,
      cookieName,
    } = this.patterns;
    for (let r = ruleStart.get(id); r < ruleStart.get(id + 1); r++)
      rs.rules.push({
        from: this.strings.cached(ruleFrom.get(r)),
        to: this.strings.cached(ruleTo.get(r)),
      });
    for (let e = exclusionStart.get(id); e < exclusionStart.get(id + 1); e++)
      rs.exclusions.push({ pattern: this.strings.cached(exclusionPattern.get(e)) });
    for (let c = cookieStart.get(id); c < cookieStart.get(id + 1); c++)
      rs.secureCookies.push({
        host: this.strings.cached(cookieHost.get(c)),
        name: this.strings.cached(cookieName.get(c)),
      });
    return rs;
  }

  /**
   * Target patterns of a ruleset, in host-index order (the bundle keeps no per-ruleset target
   * list: it is derived from the trie in one pass, the first time any ruleset's targets are asked for).
   */
  targetsOf(id: number): string[] {
    return this.hosts.targetsOf(id);
  }

  /**
   * `targetsOf` of every ruleset (by id), derived in one pass that keeps nothing decoded: for
   * listing all rulesets without leaving their targets in memory.
   */
  allTargets(): string[][] {
    return this.hosts.allTargets();
  }

  /** The ruleset's `default_off` note, or null (without decoding the rest of it). */
  defaultOffNote(id: number): string | null {
    return this.rulesets.defaultOff(id);
  }

  /** The ruleset's `platform` attribute, or null (without decoding the rest of it). */
  platformOf(id: number): string | null {
    return this.rulesets.platform(id);
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
    const ids = this.candidateRulesets(host).filter((id) => this.rulesets.isActive(id));
    if (ids.length === 0) return false;
    const probe = newNormalizedUrl();
    if (!normalizeUrl(`http://${host}${COOKIE_PROBE_PATH}`, probe)) return false;
    if (!ids.some((id) => this.applyRuleset(id, probe.href) !== null)) return false;
    for (const id of ids)
      if (this.patterns.securesCookie(id, cookie.domain, cookie.name)) return true;
    return false;
  }

  // ---- matching ---------------------------------------------------------------------------

  /** Tries the `count` candidate nodes left in `candidates` by collect, in order. */
  private applyCandidates(href: string, count: number): string | null {
    const refs = this.hosts.candidateRefs;
    const n = this.rulesetCount;
    for (let c = 0; c < count; c++) {
      const ref = refs[c] as number;
      if (ref <= n) {
        const out = this.applyIfActive(ref - 1, href);
        if (out !== null) return out;
        continue;
      }
      // A ruleset may come up again through another pattern; applying it again gives the same
      // null, so repeats need no bookkeeping.
      const at = ref - n - 1;
      const end = at + (this.refList[at] as number);
      for (let k = at + 1; k <= end; k++) {
        const out = this.applyIfActive(this.refList[k] as number, href);
        if (out !== null) return out;
      }
    }
    return null;
  }

  /** Ruleset `id`'s result when it is on and changes `href` (remembered as the last ruleset), else null. */
  private applyIfActive(id: number, href: string): string | null {
    if (((this.state[id] || this.rulesets.settle(id)) & RulesetBit.Active) === 0) return null;
    const out = this.applyRuleset(id, href);
    if (out !== null) this.lastRuleset = id;
    return out;
  }

  /** Fills `candidates` for the host of a normalised URL (or its override); returns how many. */
  private collectHost(norm: NormalizedUrl): number {
    return norm.hostOverride === null
      ? this.hosts.collect(norm.href, norm.hostStart, norm.hostEnd)
      : this.hosts.collect(norm.hostOverride, 0, norm.hostOverride.length);
  }

  /** One ruleset's `apply`: exclusions veto, then the first rule that changes the URL wins. */
  private applyRuleset(id: number, href: string): string | null {
    if (((this.state[id] || this.rulesets.settle(id)) & RulesetBit.TrivialOnly) !== 0)
      return upgradeHttp(href);
    return this.patterns.apply(id, href);
  }
}

/** Loads a compiled bundle; throws BundleError when it is truncated, corrupt or of another version. */
export function loadBundle(bytes: Uint8Array, options: EngineOptions = {}): Engine {
  return new Engine(bytes, options);
}
