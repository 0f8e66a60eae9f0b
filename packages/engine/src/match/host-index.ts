import { codedLabelHash, ghostBase, hashStep, INHERIT_REF, LABEL_HASH_SEED, mixLabel, popcount, readLength, ROOT_SLOT, Section } from '../bundle/format.js';
import type { PackedArray } from '../bundle/packed-array.js';
import type { BundleSections } from '../bundle/read.js';
import { ESCAPE } from '../bundle/string-dictionary.js';
import { type HostLabels, MAX_LABELS, newHostLabels } from '../url/normalize.js';
import { dictionaryTable } from './string-pool.js';

const STAR = 0x2a;
const DOT = 0x2e;
const STAR_LABEL_HASH = hashStep(LABEL_HASH_SEED, STAR);
const MAX_HOST_LENGTH = 255;
/** Stands for the root in the suffix ranks (its record is never a candidate). */
const ROOT = -2;

/**
 * The bundle's host index: a trie of target labels stored as an open-addressed hash table of
 * node records (Section.Nodes, ranked through Section.Occupancy; refs in Section.NodeRef), read
 * in place. A child's home slot is its parent's slot XOR its label's mix (see homeSlot). `collect` and
 * `lookup` fill `candidates` with the nodes that carry rulesets for a hostname, in the reference
 * order; `ref` and `refList` name the rulesets of each. Lookups reuse scratch arrays and
 * allocate nothing.
 */
export class HostIndex {
  readonly rulesetCount: number;
  /** Labels of the hostname being looked up; `canonicalAuthority` may fill it directly. */
  readonly hostLabels: HostLabels = newHostLabels();
  /** The nodes the last lookup found, first `count` entries (see collect). */
  readonly candidates = new Int32Array(MAX_LABELS * 2 + 1);
  /** The resolved ruleset ref of each of `candidates` (as `ref` gives it). */
  readonly candidateRefs = new Int32Array(MAX_LABELS * 2 + 1);
  /** The nodes a star-family walk passed, to resolve an inherited ref. */
  private readonly walk = new Int32Array(MAX_LABELS + 1);
  /** Ruleset lists of nodes carrying more than one ruleset: a length, then the ids. */
  readonly refList: Uint32Array;

  /** Coded label pool (Section.Labels). */
  private readonly labelPool: Uint8Array;
  /** The label dictionary section, and where each byte's entry lies in it (length 0: a literal). */
  private readonly labelDictionary: Uint8Array;
  /** Per byte: its entry's offset << 8 | its length (1..255); 0 for a literal byte. */
  private readonly labelEntryAt = new Int32Array(256);
  private readonly labelEntries: (Uint8Array | undefined)[];
  /** Per 32 host-table slots: occupied slots before the block, occupancy bits. */
  private readonly occupancy: Uint32Array;
  private readonly slotMask: number;
  /** One word per occupied slot, in slot order (see Section.Nodes). */
  private readonly nodes: Uint32Array;
  /** The ruleset ref of each record (Section.NodeRef), and where its ghost refs start. */
  private readonly refs: PackedArray;
  private readonly ghostBase: number;
  private readonly nodeCount: number;
  // Node field positions (see NodeLayout), copied to fields so the hot path reads no object.
  private readonly rootStar: boolean;
  private readonly labelMask: number;
  private readonly starBit: number;
  private readonly lengthShift: number;
  private readonly lengthMask: number;
  private readonly displacementShift: number;
  private readonly displacementMask: number;

  /** Record rank and slot of the node for labels i..n-1 (-1: none, ROOT: the root). */
  private readonly suffixRank = new Int32Array(MAX_LABELS + 1);
  private readonly suffixSlot = new Int32Array(MAX_LABELS + 1);
  /** Rank and slot of the `*` child of suffix node i (-1: none). */
  private readonly starRank = new Int32Array(MAX_LABELS + 1);
  private readonly starSlot = new Int32Array(MAX_LABELS + 1);
  /** The root's `*` child (right-wildcard targets hang below it): rank (-1: none) and slot. */
  private readonly rootStarRank: number;
  private readonly rootStarSlot: number;
  /** Slot of the node the last successful `child` call found. */
  private foundSlot = 0;

  /** Decoded labels by label id, filled on first use (explain, targets). */
  private readonly labelTexts = new Map<number, string>();
  /** Per ruleset, the nodes carrying it; derived from the trie the first time it is asked for. */
  private nodesByRuleset: number[][] | null = null;
  private readonly decoder = new TextDecoder();

  constructor({ header, layout, u8, u32, packed }: BundleSections) {
    this.rulesetCount = header.rulesetCount;
    this.labelPool = u8[Section.Labels] as Uint8Array;
    this.labelDictionary = u8[Section.LabelDictionary] as Uint8Array;
    // At most 255 entries: O(1) even for trusted loads.
    this.labelEntries = dictionaryTable(this.labelDictionary);
    this.labelEntries.forEach((entry, b) => {
      if (entry === undefined) return;
      this.labelEntryAt[b] = ((entry.byteOffset - this.labelDictionary.byteOffset) << 8) | entry.length;
    });
    this.occupancy = u32[Section.Occupancy] as Uint32Array;
    this.slotMask = 2 ** layout.slotBits - 1;
    this.nodes = u32[Section.Nodes] as Uint32Array;
    this.refs = packed[Section.NodeRef] as PackedArray;
    this.nodeCount = layout.nodeCount;
    this.labelMask = layout.labelMask;
    this.starBit = layout.starBit;
    this.lengthShift = layout.lengthShift;
    this.lengthMask = layout.lengthMask;
    this.displacementShift = layout.displacementShift;
    this.displacementMask = layout.displacementMask;
    // The root's record carries its star bit (a trusted bundle without one has no root star).
    this.rootStar = this.occupied(ROOT_SLOT) && ((this.nodes[this.rankOf(ROOT_SLOT)] ?? 0) & this.starBit) !== 0;
    this.refList = u32[Section.RefList] as Uint32Array;
    this.ghostBase = ghostBase(this.rulesetCount, this.refList.length);
    // One probe at load instead of one per URL (a trusted bundle with no such child gives -1).
    this.rootStarRank = this.rootStar ? this.child(ROOT_SLOT, STAR_LABEL_HASH, '*', 0, 1) : -1;
    this.rootStarSlot = this.foundSlot;
  }

  /**
   * Fills `candidates` with the trie nodes that carry rulesets for the hostname `src[start,end)`,
   * in the reference order: the exact host; each label replaced by `*` from left to right; then
   * `*.` + the suffix from label 2 to label n-2. Returns how many.
   */
  collect(src: string, start: number, end: number): number {
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
  lookup(src: string, labels: HostLabels, length: number): number {
    if (length === 0 || length > MAX_HOST_LENGTH) return 0;
    const n = labels.count;
    const ls = labels.start;
    const le = labels.end;
    const lh = labels.hash;

    // suffixRank[i]: record of labels i..n-1 (-1: none), suffixSlot[i] its slot; [n] is the root.
    const suffix = this.suffixRank;
    const suffixSlot = this.suffixSlot;
    suffix[n] = ROOT;
    suffixSlot[n] = ROOT_SLOT;
    let node = ROOT;
    let slot = ROOT_SLOT;
    for (let i = n - 1; i >= 0; i--) {
      if (node !== -1) {
        node = this.child(slot, lh[i] as number, src, ls[i] as number, le[i] as number);
        slot = this.foundSlot;
      }
      suffix[i] = node;
      suffixSlot[i] = slot;
    }
    // starRank[i]: record of the `*` child of the suffix node i (-1: none), starSlot[i] its slot.
    // Both candidate families below start from these; the root's is found once, at load.
    const star = this.starRank;
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
    // A record may say "my parent's rulesets" (INHERIT_REF); each family knows the parents of
    // its nodes, so the ref is resolved here with no walk over the table.
    const refs = this.refs;
    const outRef = this.candidateRefs;
    let count = 0;
    const exact = suffix[0] as number;
    if (exact >= 0) {
      const ref = this.suffixRef(0, n);
      if (ref !== 0) {
        outRef[count] = ref;
        out[count++] = exact;
      }
    }
    const walk = this.walk;
    for (let k = 0; k < n; k++) {
      let at = star[k + 1] as number;
      if (at < 0) continue;
      let slotAt = starSlot[k + 1] as number;
      let depth = 0;
      for (let j = k - 1; j >= 0 && at >= 0; j--) {
        walk[depth++] = at;
        at = this.child(slotAt, lh[j] as number, src, ls[j] as number, le[j] as number);
        slotAt = this.foundSlot;
      }
      if (at < 0) continue;
      let stored = refs.get(at);
      let ref = stored === INHERIT_REF ? -1 : this.own(stored);
      while (ref < 0 && depth > 0) {
        stored = refs.get(walk[--depth] as number);
        if (stored !== INHERIT_REF) ref = this.handed(stored);
      }
      if (ref < 0) ref = this.inheritedFrom(k + 1, n);
      if (ref !== 0) {
        outRef[count] = ref;
        out[count++] = at;
      }
    }
    for (let i = 2; i <= n - 2; i++) {
      const at = star[i] as number;
      if (at < 0) continue;
      const stored = refs.get(at);
      const ref = stored === INHERIT_REF ? this.inheritedFrom(i, n) : this.own(stored);
      if (ref !== 0) {
        outRef[count] = ref;
        out[count++] = at;
      }
    }
    return count;
  }

  /** The resolved ref of the suffix node for labels i..n-1 of the last lookup (found). */
  private suffixRef(i: number, n: number): number {
    const stored = this.refs.get(this.suffixRank[i] as number);
    return stored === INHERIT_REF ? this.inheritedFrom(i + 1, n) : this.own(stored);
  }

  /** The ref the suffix node for labels i..n-1 (or the root, i = n) hands its children. */
  private inheritedFrom(i: number, n: number): number {
    for (; i < n; i++) {
      const stored = this.refs.get(this.suffixRank[i] as number);
      if (stored !== INHERIT_REF) return this.handed(stored);
    }
    return 0;
  }

  /** A stored NodeRef's own ref (0: none, or only a ghost; see Section.NodeRef). */
  private own(stored: number): number {
    return stored > INHERIT_REF && stored <= this.ghostBase ? stored - 1 : 0;
  }

  /** The ref a stored NodeRef hands its children: its own, or its ghost. */
  private handed(stored: number): number {
    return stored <= INHERIT_REF ? 0 : stored <= this.ghostBase ? stored - 1 : stored - this.ghostBase;
  }

  /**
   * The ruleset ref of a record, resolved: 0 none, 1..n id + 1, above n a RefList index + n + 1.
   * A record that inherits is resolved by walking its parents (at most MAX_LABELS steps).
   */
  ref(rank: number): number {
    let slot = this.slotOfRank(rank);
    for (let steps = 0; slot >= 0 && steps < MAX_LABELS; steps++) {
      const at = this.rankOf(slot);
      const stored = this.refs.get(at);
      if (stored !== INHERIT_REF) return steps === 0 ? this.own(stored) : this.handed(stored);
      if (slot === ROOT_SLOT) return 0;
      slot = this.parentSlot(slot, this.nodes[at] as number);
    }
    return 0;
  }

  /** Ids of the rulesets a node carries, in order. */
  nodeRulesets(node: number): number[] {
    return this.refRulesets(this.ref(node));
  }

  /** Ids of the rulesets a resolved ref names (see `ref`, `candidateRefs`), in order. */
  refRulesets(ref: number): number[] {
    if (ref === 0) return [];
    if (ref <= this.rulesetCount) return [ref - 1];
    const at = ref - this.rulesetCount - 1;
    return Array.from(this.refList.subarray(at + 1, at + 1 + (this.refList[at] as number)));
  }

  /** The target pattern a trie node stands for, e.g. `*.example.com`. */
  nodeHost(node: number): string {
    const labels: string[] = [];
    // A hostname has at most MAX_LABELS labels; the bound also stops a looping trusted bundle.
    for (let slot = this.slotOfRank(node); slot !== ROOT_SLOT && slot >= 0 && labels.length < MAX_LABELS;) {
      const word = this.nodes[this.rankOf(slot)] as number;
      labels.push(this.label(word));
      slot = this.parentSlot(slot, word);
    }
    return labels.join('.');
  }

  /** Slot of the parent of the record `word` in `slot`: its home XOR its label's mix. */
  private parentSlot(slot: number, word: number): number {
    const hash = codedLabelHash(this.labelPool, this.labelEntries, word & this.labelMask, (word >>> this.lengthShift) & this.lengthMask, this.lengthMask);
    const home = (slot - ((word >>> this.displacementShift) & this.displacementMask)) & this.slotMask;
    return (mixLabel(hash) ^ home) & this.slotMask;
  }

  /** Slot of record `rank` (-1 when there is none): a binary search of the block ranks. */
  private slotOfRank(rank: number): number {
    const occupancy = this.occupancy;
    let lo = 0;
    let hi = occupancy.length / 2 - 1;
    if (rank < 0 || hi < 0) return -1;
    // The last block whose running count is <= rank.
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((occupancy[mid * 2] as number) <= rank) lo = mid;
      else hi = mid - 1;
    }
    let bits = occupancy[lo * 2 + 1] as number;
    for (let skip = rank - (occupancy[lo * 2] as number); skip > 0 && bits !== 0; skip--) bits &= bits - 1;
    return bits === 0 ? -1 : lo * 32 + 31 - Math.clz32(bits & -bits);
  }

  /**
   * Target patterns of a ruleset, in host-index order (the bundle keeps no per-ruleset target
   * list: it is derived from the trie in one pass, the first time any ruleset's targets are asked for).
   */
  targetsOf(id: number): string[] {
    if (this.nodesByRuleset === null) {
      const index: number[][] = Array.from({ length: this.rulesetCount }, () => []);
      for (let node = 0; node < this.nodeCount; node++) for (const r of this.nodeRulesets(node)) index[r]?.push(node);
      this.nodesByRuleset = index;
    }
    return (this.nodesByRuleset[id] ?? []).map((node) => this.nodeHost(node));
  }

  /**
   * The record of the child of the node at slot `parent` labelled `src[start,end)` (whose label
   * hash is `labelHash`), or -1; on success `foundSlot` is its slot. A record matches when it
   * lies as far from the probe's home as its displacement says and has the label; the probe ends
   * at an empty slot or past the widest displacement, so even a full trusted table cannot loop.
   */
  private child(parent: number, labelHash: number, src: string, start: number, end: number): number {
    const occupancy = this.occupancy;
    const nodes = this.nodes;
    const mask = this.slotMask;
    const shift = this.displacementShift;
    const widest = this.displacementMask;
    let slot = (parent ^ mixLabel(labelHash)) & mask;
    let bits = occupancy[(slot >>> 5) * 2 + 1] as number;
    if (((bits >>> (slot & 31)) & 1) === 0) return -1;
    // Records are in slot order: the rank of the first probed slot, then one more per step.
    let rank = (occupancy[(slot >>> 5) * 2] as number) + popcount(bits & ~(-1 << (slot & 31)));
    for (let distance = 0; ;) {
      const word = nodes[rank] as number;
      // The root's record is nobody's child.
      if (((word >>> shift) & widest) === distance && slot !== ROOT_SLOT && this.labelEquals(word, src, start, end)) {
        this.foundSlot = slot;
        return rank;
      }
      if (++distance > widest) return -1;
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
    const at = word & this.labelMask;
    if (recorded !== this.lengthMask) return recorded === end - start && this.codedMatch(at, src, start, end) >= 0;
    // A long label carries its byte length: it must also end exactly there.
    const meta = readLength(this.labelPool, at);
    const from = at + (meta & 7);
    return this.codedMatch(from, src, start, end) === from + (meta >>> 3);
  }

  /**
   * Expands the coded label bytes from `i` while comparing them with `src[start,end)`, until the
   * host label is used up. Returns the index after the bytes used, or -1 on a difference (also
   * when the bytes run out: a corrupt trusted bundle cannot make this read past the pool).
   */
  private codedMatch(i: number, src: string, start: number, end: number): number {
    const bytes = this.labelPool;
    const limit = bytes.length;
    const entries = this.labelEntryAt;
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

  private hasStarChild(rank: number): boolean {
    return rank === ROOT ? this.rootStar : ((this.nodes[rank] as number) & this.starBit) !== 0;
  }

  private occupied(slot: number): boolean {
    return (((this.occupancy[(slot >>> 5) * 2 + 1] as number) >>> (slot & 31)) & 1) === 1;
  }

  /** Record index of an occupied slot. */
  private rankOf(slot: number): number {
    return (this.occupancy[(slot >>> 5) * 2] as number) + popcount((this.occupancy[(slot >>> 5) * 2 + 1] as number) & ~(-1 << (slot & 31)));
  }

  /** The host label of record word 1 `word`, cached by label id. */
  private label(word: number): string {
    const id = word & this.labelMask;
    let s = this.labelTexts.get(id);
    if (s === undefined) {
      const bytes = this.labelPool;
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
      this.labelTexts.set(id, s);
    }
    return s;
  }
}
