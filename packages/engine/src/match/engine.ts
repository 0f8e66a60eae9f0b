import type { Ruleset } from '../model/ruleset.js';
import { hashFinish, hashSeed, hashStep, NodeFlag, NONE, REF_LIST_BIT, RuleKind, RulesetFlag, Section } from '../bundle/format.js';
import { readBundleSections, type BundleHeader } from '../bundle/read.js';
import { newNormalizedUrl, normalizeUrl, restoreCredentials, type NormalizedUrl } from '../url/normalize.js';
import type { Explanation, ExplainStep } from './explain.js';

const STAR = 0x2a;
const DOT = 0x2e;
/** 255 characters hold at most 128 labels. */
const MAX_LABELS = 128;
const MAX_HOST_LENGTH = 255;
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

export interface EngineOptions {
  /** Turn on `platform="mixedcontent"` rulesets. */
  mixedContent?: boolean;
}

/**
 * The matcher over a compiled bundle. All state that depends on the rulesets lives in typed
 * arrays viewing the bundle; per-URL work reuses scratch buffers, so a URL that no ruleset
 * covers allocates nothing, and one a trivial ruleset covers allocates only its result.
 */
export class Engine {
  readonly header: BundleHeader;
  readonly rulesetCount: number;

  private readonly strBytes: Uint8Array;
  private readonly strOffsets: Uint32Array;
  private readonly slots: Uint32Array;
  private readonly mask: number;
  private readonly nodeParent: Uint32Array;
  private readonly nodeLabel: Uint32Array;
  private readonly nodeRef: Uint32Array;
  private readonly nodeFlags: Uint8Array;
  private readonly refList: Uint32Array;
  private readonly rsFlags: Uint8Array;
  private readonly rsName: Uint32Array;
  private readonly rsNote: Uint32Array;
  private readonly rsPlatform: Uint32Array;
  private readonly rsRuleStart: Uint32Array;
  private readonly rsExclStart: Uint32Array;
  private readonly rsCookieStart: Uint32Array;
  private readonly rsTargetStart: Uint32Array;
  private readonly ruleFrom: Uint32Array;
  private readonly ruleTo: Uint32Array;
  private readonly ruleKind: Uint8Array;
  private readonly rulePrefix: Uint32Array;
  private readonly exclPattern: Uint32Array;
  private readonly exclPrefix: Uint32Array;
  private readonly cookieHost: Uint32Array;
  private readonly cookieName: Uint32Array;
  private readonly targetNode: Uint32Array;

  /** 1 where the ruleset is active now (defaults, mixed-content switch and user overrides). */
  private readonly active: Uint8Array;
  private readonly overrides = new Map<string, boolean>();
  private mixedContent: boolean;
  private namesToIds: Map<string, number[]> | null = null;

  // Decoded strings and compiled regexes, filled on first use only.
  private readonly strings = new Map<number, string>();
  private readonly regexes = new Map<number, RegExp | null>();
  private readonly decoder = new TextDecoder();
  /** Regexes that failed to compile at run time (a bundle built by another tool), by pattern. */
  readonly regexErrors = new Map<string, string>();

  // Scratch state reused by every lookup.
  private readonly norm: NormalizedUrl = newNormalizedUrl();
  private readonly labelStart = new Int32Array(MAX_LABELS);
  private readonly labelEnd = new Int32Array(MAX_LABELS);
  private readonly suffix = new Int32Array(MAX_LABELS + 1);
  private readonly candidates = new Int32Array(MAX_LABELS * 2 + 1);
  private lastRuleset = -1;

  constructor(bundle: Uint8Array, options: EngineOptions = {}) {
    const { header, u8, u32 } = readBundleSections(bundle);
    this.header = header;
    this.rulesetCount = header.rulesetCount;
    this.strBytes = u8[Section.StrBytes] as Uint8Array;
    this.strOffsets = u32[Section.StrOffsets] as Uint32Array;
    this.slots = u32[Section.Slots] as Uint32Array;
    this.mask = this.slots.length - 1;
    this.nodeParent = u32[Section.NodeParent] as Uint32Array;
    this.nodeLabel = u32[Section.NodeLabel] as Uint32Array;
    this.nodeRef = u32[Section.NodeRef] as Uint32Array;
    this.nodeFlags = u8[Section.NodeFlags] as Uint8Array;
    this.refList = u32[Section.RefList] as Uint32Array;
    this.rsFlags = u8[Section.RsFlags] as Uint8Array;
    this.rsName = u32[Section.RsName] as Uint32Array;
    this.rsNote = u32[Section.RsNote] as Uint32Array;
    this.rsPlatform = u32[Section.RsPlatform] as Uint32Array;
    this.rsRuleStart = u32[Section.RsRuleStart] as Uint32Array;
    this.rsExclStart = u32[Section.RsExclStart] as Uint32Array;
    this.rsCookieStart = u32[Section.RsCookieStart] as Uint32Array;
    this.rsTargetStart = u32[Section.RsTargetStart] as Uint32Array;
    this.ruleFrom = u32[Section.RuleFrom] as Uint32Array;
    this.ruleTo = u32[Section.RuleTo] as Uint32Array;
    this.ruleKind = u8[Section.RuleKind] as Uint8Array;
    this.rulePrefix = u32[Section.RulePrefix] as Uint32Array;
    this.exclPattern = u32[Section.ExclPattern] as Uint32Array;
    this.exclPrefix = u32[Section.ExclPrefix] as Uint32Array;
    this.cookieHost = u32[Section.CookieHost] as Uint32Array;
    this.cookieName = u32[Section.CookieName] as Uint32Array;
    this.targetNode = u32[Section.TargetNode] as Uint32Array;
    this.mixedContent = options.mixedContent === true;
    this.active = new Uint8Array(this.rulesetCount);
    this.recomputeActive();
  }

  // ---- public API -------------------------------------------------------------------------

  /** The rewritten URL, or null when no active ruleset changes it. */
  rewrite(url: string): string | null {
    const norm = this.norm;
    if (!normalizeUrl(url, norm)) return null;
    const result = this.rewriteNormalized(norm.href, norm);
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
    if (!normalizeUrl(url, norm)) return { url, href: null, host: null, error: `not a valid URL: ${JSON.stringify(url)}`, candidates: [], rewritten: null, ruleset: null };
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
    return this.str(this.rsName[id] as number);
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

  /** Whether the ruleset is on before any user override. */
  isDefaultActive(id: number): boolean {
    const flags = this.rsFlags[id] as number;
    return (flags & RulesetFlag.DefaultOn) !== 0 || (this.mixedContent && (flags & RulesetFlag.MixedContent) !== 0);
  }

  /** Overrides a ruleset by name (all rulesets of that name); undefined returns it to its default. */
  setActive(name: string, active: boolean | undefined): void {
    if (active === undefined) this.overrides.delete(name);
    else this.overrides.set(name, active);
    for (const id of this.rulesetIdsByName(name)) this.active[id] = (active ?? this.isDefaultActive(id)) ? 1 : 0;
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
    const note = this.rsNote[id] as number;
    if (note !== NONE) rs.defaultOff = this.str(note);
    const platform = this.rsPlatform[id] as number;
    if (platform !== NONE) rs.platform = this.str(platform);
    for (let t = this.rsTargetStart[id] as number; t < (this.rsTargetStart[id + 1] as number); t++) rs.targets.push({ host: this.nodeHost(this.targetNode[t] as number) });
    for (let r = this.rsRuleStart[id] as number; r < (this.rsRuleStart[id + 1] as number); r++) rs.rules.push({ from: this.str(this.ruleFrom[r] as number), to: this.str(this.ruleTo[r] as number) });
    for (let e = this.rsExclStart[id] as number; e < (this.rsExclStart[id + 1] as number); e++) rs.exclusions.push({ pattern: this.str(this.exclPattern[e] as number) });
    for (let c = this.rsCookieStart[id] as number; c < (this.rsCookieStart[id + 1] as number); c++) rs.secureCookies.push({ host: this.str(this.cookieHost[c] as number), name: this.str(this.cookieName[c] as number) });
    return rs;
  }

  /** Whether the ruleset's only rule is the trivial one with no exclusion. */
  isTrivialOnly(id: number): boolean {
    return ((this.rsFlags[id] as number) & RulesetFlag.TrivialOnly) !== 0;
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
      for (let c = this.rsCookieStart[id] as number; c < (this.rsCookieStart[id + 1] as number); c++) {
        const hostRe = this.regex(this.cookieHost[c] as number);
        const nameRe = this.regex(this.cookieName[c] as number);
        if (hostRe !== null && nameRe !== null && hostRe.test(cookie.domain) && nameRe.test(cookie.name)) return true;
      }
    }
    return false;
  }

  // ---- matching ---------------------------------------------------------------------------

  private rewriteNormalized(href: string, norm: NormalizedUrl): string | null {
    const count = norm.hostOverride === null ? this.collect(href, norm.hostStart, norm.hostEnd) : this.collect(norm.hostOverride, 0, norm.hostOverride.length);
    const candidates = this.candidates;
    const nodeRef = this.nodeRef;
    const active = this.active;
    for (let c = 0; c < count; c++) {
      const ref = nodeRef[candidates[c] as number] as number;
      if ((ref & REF_LIST_BIT) === 0) {
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
      const at = ref & ~REF_LIST_BIT;
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
    if (((this.rsFlags[id] as number) & RulesetFlag.TrivialOnly) !== 0) return upgradeHttp(href);
    for (let e = this.rsExclStart[id] as number; e < (this.rsExclStart[id + 1] as number); e++) {
      const prefix = this.exclPrefix[e] as number;
      if (prefix !== NONE && !this.startsWith(href, prefix)) continue;
      const re = this.regex(this.exclPattern[e] as number);
      if (re !== null && re.test(href)) return null;
    }
    for (let r = this.rsRuleStart[id] as number; r < (this.rsRuleStart[id + 1] as number); r++) {
      const out = this.applyRule(r, href);
      if (out !== null) return out;
    }
    return null;
  }

  /** A rule's result when it changes `href`, else null. */
  private applyRule(r: number, href: string): string | null {
    const kind = this.ruleKind[r] as number;
    if (kind === RuleKind.Trivial) return upgradeHttp(href);
    const prefix = this.rulePrefix[r] as number;
    if (prefix !== NONE && !this.startsWith(href, prefix)) return null;
    let out: string;
    if (kind === RuleKind.Literal) {
      out = this.str(this.ruleTo[r] as number) + href.slice((this.strOffsets[prefix + 1] as number) - (this.strOffsets[prefix] as number));
    } else {
      const re = this.regex(this.ruleFrom[r] as number);
      if (re === null) return null;
      out = href.replace(re, this.str(this.ruleTo[r] as number));
    }
    return out === href ? null : out;
  }

  private describeApply(id: number, href: string, step: ExplainStep): void {
    for (let e = this.rsExclStart[id] as number; e < (this.rsExclStart[id + 1] as number); e++) {
      const re = this.regex(this.exclPattern[e] as number);
      if (re !== null && re.test(href)) {
        step.outcome = 'excluded';
        step.exclusion = this.str(this.exclPattern[e] as number);
        return;
      }
    }
    const start = this.rsRuleStart[id] as number;
    for (let r = start; r < (this.rsRuleStart[id + 1] as number); r++) {
      const out = this.applyRule(r, href);
      if (out !== null) {
        step.outcome = 'rewrote';
        step.rule = { index: r - start, from: this.str(this.ruleFrom[r] as number), to: this.str(this.ruleTo[r] as number) };
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
    const length = end - start;
    if (length === 0 || length > MAX_HOST_LENGTH) return 0;
    const ls = this.labelStart;
    const le = this.labelEnd;
    let n = 0;
    let s = start;
    for (let i = start; i < end; i++) {
      if (src.charCodeAt(i) !== DOT) continue;
      if (i > start && src.charCodeAt(i - 1) === DOT) return 0; // ".." matches nothing
      ls[n] = s;
      le[n] = i;
      n++;
      s = i + 1;
    }
    ls[n] = s;
    le[n] = end;
    n++;

    // suffix[i]: node of labels i..n-1, or -1; suffix[n] is the root.
    const suffix = this.suffix;
    suffix[n] = 0;
    let node = 0;
    for (let i = n - 1; i >= 0; i--) {
      if (node >= 0) node = this.child(node, src, ls[i] as number, le[i] as number);
      suffix[i] = node;
    }
    const nodeRef = this.nodeRef;
    const nodeFlags = this.nodeFlags;
    const out = this.candidates;
    let count = 0;
    const exact = suffix[0] as number;
    if (exact > 0 && nodeRef[exact] !== 0) out[count++] = exact;
    for (let k = 0; k < n; k++) {
      const base = suffix[k + 1] as number;
      if (base < 0 || ((nodeFlags[base] as number) & NodeFlag.HasStarChild) === 0) continue;
      let at = this.starChild(base);
      for (let j = k - 1; j >= 0 && at >= 0; j--) at = this.child(at, src, ls[j] as number, le[j] as number);
      if (at > 0 && nodeRef[at] !== 0) out[count++] = at;
    }
    for (let i = 2; i <= n - 2; i++) {
      const base = suffix[i] as number;
      if (base < 0 || ((nodeFlags[base] as number) & NodeFlag.HasStarChild) === 0) continue;
      const at = this.starChild(base);
      if (at > 0 && nodeRef[at] !== 0) out[count++] = at;
    }
    return count;
  }

  /** The child of `parent` labelled `src[start,end)`, or -1. */
  private child(parent: number, src: string, start: number, end: number): number {
    let h = hashSeed(parent);
    for (let i = start; i < end; i++) h = hashStep(h, src.charCodeAt(i));
    const slots = this.slots;
    const mask = this.mask;
    let slot = hashFinish(h) & mask;
    const length = end - start;
    for (;;) {
      const node = slots[slot] as number;
      if (node === 0) return -1;
      if (this.nodeParent[node] === parent) {
        const label = this.nodeLabel[node] as number;
        const from = this.strOffsets[label] as number;
        if ((this.strOffsets[label + 1] as number) - from === length) {
          const bytes = this.strBytes;
          let i = 0;
          while (i < length && bytes[from + i] === src.charCodeAt(start + i)) i++;
          if (i === length) return node;
        }
      }
      slot = (slot + 1) & mask;
    }
  }

  private starChild(parent: number): number {
    const slots = this.slots;
    const mask = this.mask;
    let slot = hashFinish(hashStep(hashSeed(parent), STAR)) & mask;
    for (;;) {
      const node = slots[slot] as number;
      if (node === 0) return -1;
      if (this.nodeParent[node] === parent) {
        const label = this.nodeLabel[node] as number;
        const from = this.strOffsets[label] as number;
        if ((this.strOffsets[label + 1] as number) - from === 1 && this.strBytes[from] === STAR) return node;
      }
      slot = (slot + 1) & mask;
    }
  }

  private nodeRulesets(node: number): number[] {
    const ref = this.nodeRef[node] as number;
    if (ref === 0) return [];
    if ((ref & REF_LIST_BIT) === 0) return [ref - 1];
    const at = ref & ~REF_LIST_BIT;
    return Array.from(this.refList.subarray(at + 1, at + 1 + (this.refList[at] as number)));
  }

  /** The target pattern a trie node stands for, e.g. `*.example.com`. */
  private nodeHost(node: number): string {
    const labels: string[] = [];
    for (let at = node; at > 0; at = this.nodeParent[at] as number) labels.push(this.str(this.nodeLabel[at] as number));
    return labels.join('.');
  }

  private inactiveReason(id: number): string {
    const name = this.rulesetName(id);
    const override = this.overrides.get(name);
    if (override === false) return 'disabled by the user';
    const note = this.rsNote[id] as number;
    if (note !== NONE) return `default_off: ${this.str(note)}`;
    const platform = this.rsPlatform[id] as number;
    if (platform !== NONE) return `platform="${this.str(platform)}"${this.str(platform) === 'mixedcontent' ? ' (mixed-content rulesets are off)' : ''}`;
    return 'off';
  }

  private recomputeActive(): void {
    for (let id = 0; id < this.rulesetCount; id++) this.active[id] = this.isDefaultActive(id) ? 1 : 0;
    for (const [name, on] of this.overrides) for (const id of this.rulesetIdsByName(name)) this.active[id] = on ? 1 : 0;
  }

  // ---- strings and regexes ----------------------------------------------------------------

  private str(id: number): string {
    let s = this.strings.get(id);
    if (s === undefined) {
      s = this.decoder.decode(this.strBytes.subarray(this.strOffsets[id], this.strOffsets[id + 1]));
      this.strings.set(id, s);
    }
    return s;
  }

  /** Compiled on first use; a pattern that does not compile is remembered as failing, once. */
  private regex(id: number): RegExp | null {
    let re = this.regexes.get(id);
    if (re === undefined) {
      const source = this.str(id);
      try {
        re = new RegExp(source);
      } catch (err) {
        re = null;
        this.regexErrors.set(source, err instanceof Error ? err.message : String(err));
      }
      this.regexes.set(id, re);
    }
    return re;
  }

  /** `href.startsWith(string id)`, comparing the pool's ASCII bytes without decoding. */
  private startsWith(href: string, id: number): boolean {
    const from = this.strOffsets[id] as number;
    const length = (this.strOffsets[id + 1] as number) - from;
    if (href.length < length) return false;
    const bytes = this.strBytes;
    for (let i = 0; i < length; i++) if (bytes[from + i] !== href.charCodeAt(i)) return false;
    return true;
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
