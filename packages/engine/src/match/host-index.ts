import {
  ghostBase,
  INHERIT_REF,
  NODE_BLOCK,
  NODE_BLOCK_SHIFT,
  NODE_STAR,
  NodeIndexField,
  readVarint,
  ROOT_NODE,
  Section,
} from '../bundle/format.js';
import type { PackedArray } from '../bundle/packed-array.js';
import { readLength } from '../bundle/pool.js';
import type { BundleSections } from '../bundle/read.js';
import { ESCAPE } from '../bundle/string-dictionary.js';
import { type HostLabels, MAX_LABELS, newHostLabels } from '../url/normalize.js';
import { dictionaryTable } from './string-pool.js';

const DOT = 0x2e;
const MAX_HOST_LENGTH = 255;
/** Flips the top bit of a label key: unsigned byte order becomes signed Int32 order. */
const KEY_FLIP = -0x80000000;
/** The root in the suffix ranks (its record is never a candidate). */
const ROOT = ROOT_NODE;

/**
 * The bundle's host index: a trie of target labels, node records in breadth-first order
 * (Section.Nodes; refs in Section.NodeRef); the children of each node are binary-searched by
 * label. Nothing is decoded at load: a lookup decodes the child ranges (Section.ChildCounts) and
 * labels of the NodeIndex blocks it reaches, once each, so the first lookups pay a little and a
 * load pays nothing. `collect` and
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
  /** Section.ChildCounts, Section.Nodes (flags bytes, then label varints) and Section.NodeIndex. */
  private readonly counts: Uint8Array;
  private readonly nodeBytes: Uint8Array;
  private readonly nodeIndex: Uint32Array;
  /**
   * Node i's children are nodes childStart[i]..childEnd[i] - 1; 0 in childStart (no node's
   * children start at the root) until its NodeIndex block is read (spanChildren).
   */
  private readonly childStart: Int32Array;
  private readonly childEnd: Int32Array;
  /** Whether every node is decoded (decodeAll), for the walks over the whole trie. */
  private allDecoded = false;
  /** Each node's parent (the root's: -1), derived from `first` when first needed. */
  private parents: Int32Array | null = null;
  /**
   * Each node's first four label bytes as one order-preserving signed key (see prefixKey), so
   * the binary search of siblings compares integers and expands a label only on equal keys.
   */
  private readonly keys: Int32Array;
  /**
   * One word per node, in breadth-first order (label id, star bit, length: NodeLayout), expanded
   * from Section.Nodes by decodeBlock; 0 until then (every node but the root has a length).
   */
  private readonly nodes: Uint32Array;
  /** The ruleset ref of each record (Section.NodeRef), and where its ghost refs start. */
  private readonly refs: PackedArray;
  private readonly ghostBase: number;
  private readonly nodeCount: number;
  // Node field positions (see NodeLayout), copied to fields so the hot path reads no object.
  private readonly labelMask: number;
  private readonly starBit: number;
  private readonly lengthShift: number;
  private readonly lengthMask: number;
  private readonly lengthUnit: number;

  /** The node for labels i..n-1 (-1: none, ROOT: the root). */
  private readonly suffixRank = new Int32Array(MAX_LABELS + 1);
  /** The `*` child of suffix node i (-1: none). */
  private readonly starRank = new Int32Array(MAX_LABELS + 1);

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
      this.labelEntryAt[b] =
        ((entry.byteOffset - this.labelDictionary.byteOffset) << 8) | entry.length;
    });
    this.refs = packed[Section.NodeRef] as PackedArray;
    this.nodeCount = layout.nodeCount;
    // Checked when the bundle was verified; trusted bytes are only clamped into range.
    this.counts = u8[Section.ChildCounts] as Uint8Array;
    this.nodeBytes = u8[Section.Nodes] as Uint8Array;
    this.nodeIndex = u32[Section.NodeIndex] as Uint32Array;
    // Zeroed arrays, filled as lookups reach their blocks.
    this.childStart = new Int32Array(this.nodeCount);
    this.childEnd = new Int32Array(this.nodeCount);
    this.nodes = new Uint32Array(this.nodeCount);
    this.keys = new Int32Array(this.nodeCount);
    this.labelMask = layout.labelMask;
    this.starBit = layout.starBit;
    this.lengthShift = layout.lengthShift;
    this.lengthMask = layout.lengthMask;
    this.lengthUnit = 2 ** layout.lengthShift;
    this.refList = u32[Section.RefList] as Uint32Array;
    this.ghostBase = ghostBase(this.rulesetCount, this.refList.length);
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
    for (let i = start; i < end; i++) {
      if (src.charCodeAt(i) !== DOT) continue;
      if (i === s && i > start) return 0; // ".." matches nothing
      labels.start[n] = s;
      labels.end[n] = i;
      n++;
      s = i + 1;
    }
    labels.start[n] = s;
    labels.end[n] = end;
    labels.count = n + 1;
    return this.lookup(src, labels, end - start);
  }

  /** collect, for a hostname of `length` characters already split into `labels`. */
  lookup(src: string, labels: HostLabels, length: number): number {
    if (length === 0 || length > MAX_HOST_LENGTH) return 0;
    const n = labels.count;
    const ls = labels.start;
    const le = labels.end;

    // suffixRank[i]: the node of labels i..n-1 (-1: none); [n] is the root.
    const suffix = this.suffixRank;
    suffix[n] = ROOT;
    let node: number = ROOT;
    for (let i = n - 1; i >= 0; i--) {
      if (node !== -1) node = this.child(node, src, ls[i] as number, le[i] as number);
      suffix[i] = node;
    }
    // starRank[i]: the `*` child of the suffix node i (-1: none), its first child when present.
    // Both candidate families below start from these.
    const star = this.starRank;
    for (let i = n; i >= 1; i--) {
      const base = suffix[i] as number;
      star[i] = base === -1 || !this.hasStarChild(base) ? -1 : this.starChild(base);
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
      let depth = 0;
      for (let j = k - 1; j >= 0 && at >= 0; j--) {
        walk[depth++] = at;
        at = this.child(at, src, ls[j] as number, le[j] as number);
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
    return stored <= INHERIT_REF
      ? 0
      : stored <= this.ghostBase
        ? stored - 1
        : stored - this.ghostBase;
  }

  /**
   * The ruleset ref of a record, resolved: 0 none, 1..n id + 1, above n a RefList index + n + 1.
   * A record that inherits is resolved by walking its parents (at most MAX_LABELS steps).
   */
  ref(rank: number): number {
    const parents = this.parentNodes();
    let at = rank;
    for (let steps = 0; at >= 0 && at < this.nodeCount && steps <= MAX_LABELS; steps++) {
      const stored = this.refs.get(at);
      if (stored !== INHERIT_REF) return steps === 0 ? this.own(stored) : this.handed(stored);
      at = parents[at] as number;
    }
    return 0;
  }

  /** Each node's parent, derived from the child ranges on first use (explain, targets). */
  private parentNodes(): Int32Array {
    if (this.parents === null) {
      this.decodeAll();
      const parents = new Int32Array(this.nodeCount).fill(-1);
      const { childStart, childEnd } = this;
      for (let p = 0; p < this.nodeCount; p++)
        for (let c = childStart[p] as number; c < (childEnd[p] as number); c++) parents[c] = p;
      this.parents = parents;
    }
    return this.parents;
  }

  /** Decodes every node's children and label: the whole-trie walks need them all. */
  private decodeAll(): void {
    if (this.allDecoded) return;
    for (let p = 0; p < this.nodeCount; p++) {
      if (this.childStart[p] === 0) this.spanChildren(p >>> NODE_BLOCK_SHIFT);
      const lo = this.childStart[p] as number;
      const hi = (this.childEnd[p] as number) - 1;
      for (let i = lo; i <= hi; i++) if (this.nodes[i] === 0) this.decodeBlock(i, lo, hi);
    }
    this.allDecoded = true;
  }

  /** Fills childStart and childEnd of the nodes of NodeIndex block `block`, from its entry. */
  private spanChildren(block: number): void {
    const counts = this.counts;
    const length = counts.length;
    const n = this.nodeCount;
    const entry = block * NodeIndexField.Count;
    let at = this.nodeIndex[entry + NodeIndexField.CountsAt] ?? length;
    let next = this.nodeIndex[entry + NodeIndexField.FirstChild] ?? n;
    for (let q = block << NODE_BLOCK_SHIFT, last = Math.min(q + NODE_BLOCK, n); q < last; q++) {
      // Trusted bytes are only clamped: a broken count is 0 and ends the stream, and a range
      // never leaves the nodes.
      const read = readVarint(counts, at);
      const count = read < 0 ? 0 : Math.floor(read / 8);
      at = read < 0 ? length : at + (read & 7);
      this.childStart[q] = Math.min(next, n);
      next = Math.min(next + count, n);
      this.childEnd[q] = next;
    }
  }

  /**
   * Decodes the words and keys of the nodes of `node`'s NodeIndex block that lie in its sibling
   * group lo..hi: a first child's label is whole, a later sibling's a rise over the one before,
   * and the block's first node's label is in the index.
   */
  private decodeBlock(node: number, lo: number, hi: number): void {
    const block = node >>> NODE_BLOCK_SHIFT;
    const entry = block * NodeIndexField.Count;
    const blockStart = block << NODE_BLOCK_SHIFT;
    const from = Math.max(blockStart, lo);
    const to = Math.min(blockStart + NODE_BLOCK, hi + 1, this.nodeCount);
    const bytes = this.nodeBytes;
    const length = bytes.length;
    let at = this.nodeIndex[entry + NodeIndexField.LabelAt] ?? length;
    // A group starting inside the block: skip the labels of the nodes before it.
    for (let i = blockStart; i < from; i++) {
      const read = readVarint(bytes, at);
      at = read < 0 ? length : at + (read & 7);
    }
    let label = this.nodeIndex[entry + NodeIndexField.Label] ?? 0;
    for (let i = from; i < to; i++) {
      // As in spanChildren, a broken varint (trusted bytes) reads as 0 and ends the stream.
      const read = readVarint(bytes, at);
      const value = read < 0 ? 0 : Math.floor(read / 8);
      at = read < 0 ? length : at + (read & 7);
      if (i === lo) label = value;
      else if (i !== blockStart) label += value;
      const flags = (bytes[i] ?? 0) as number;
      this.nodes[i] =
        ((label & this.labelMask) +
          ((flags & NODE_STAR) !== 0 ? this.starBit : 0) +
          (flags & 0x7f & this.lengthMask) * this.lengthUnit) >>>
        0;
    }
    this.fillKeys(from, to);
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
  nodeHost(node: number, label = (word: number) => this.label(word)): string {
    const labels: string[] = [];
    const parents = this.parentNodes();
    // A hostname has at most MAX_LABELS labels; the bound also stops a looping trusted bundle.
    for (
      let at = node;
      at > ROOT && at < this.nodeCount && labels.length < MAX_LABELS;
      at = parents[at] as number
    ) {
      labels.push(label(this.nodes[at] as number));
    }
    return labels.join('.');
  }

  /**
   * Target patterns of a ruleset, in host-index order (the bundle keeps no per-ruleset target
   * list: it is derived from the trie in one pass, the first time any ruleset's targets are asked for).
   */
  targetsOf(id: number): string[] {
    if (this.nodesByRuleset === null) {
      const index: number[][] = Array.from({ length: this.rulesetCount }, () => []);
      for (let node = 0; node < this.nodeCount; node++)
        for (const r of this.nodeRulesets(node)) index[r]?.push(node);
      this.nodesByRuleset = index;
    }
    return (this.nodesByRuleset[id] ?? []).map((node) => this.nodeHost(node));
  }

  /**
   * Every ruleset's target patterns, as `targetsOf` gives them, in one pass that keeps nothing:
   * a list of all rulesets (the options page) would otherwise leave every label decoded and a
   * per-ruleset node list behind, about 7 MB for the 24k rulesets of the 2018 library.
   */
  allTargets(): string[][] {
    const out: string[][] = Array.from({ length: this.rulesetCount }, () => []);
    const labels = new Map<number, string>();
    const label = (word: number) => {
      const id = word & this.labelMask;
      let s = this.labelTexts.get(id) ?? labels.get(id);
      if (s === undefined) {
        s = this.decodeLabel(word);
        labels.set(id, s);
      }
      return s;
    };
    for (let node = 0; node < this.nodeCount; node++) {
      const rulesets = this.nodeRulesets(node);
      if (rulesets.length === 0) continue;
      const host = this.nodeHost(node, label);
      for (const r of rulesets) out[r]?.push(host);
    }
    return out;
  }

  /**
   * The child of node `parent` labelled `src[start,end)`, or -1: a binary search of its children,
   * which ascend by label (label ids are offsets into the sorted pool).
   */
  private child(parent: number, src: string, start: number, end: number): number {
    const keys = this.keys;
    const nodes = this.nodes;
    if (this.childStart[parent] === 0) this.spanChildren(parent >>> NODE_BLOCK_SHIFT);
    const first = this.childStart[parent] as number;
    const last = (this.childEnd[parent] as number) - 1;
    let lo = first;
    let hi = last;
    // The host label's key: its first four characters (0 past its end), as labelKeys builds them.
    let key = 0;
    for (let k = 0; k < 4; k++)
      key = (key << 8) | (start + k < end ? Math.min(src.charCodeAt(start + k), 0xff) : 0);
    key ^= KEY_FLIP;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      // Words and keys are decoded a block at a time, as searches reach them.
      if (nodes[mid] === 0) this.decodeBlock(mid, first, last);
      const at = keys[mid] as number;
      if (at < key) {
        lo = mid + 1;
        continue;
      }
      if (at > key) {
        hi = mid - 1;
        continue;
      }
      const order = this.compareLabel(nodes[mid] as number, src, start, end);
      if (order === 0) return mid;
      if (order < 0) hi = mid - 1;
      else lo = mid + 1;
    }
    return -1;
  }

  /**
   * The key of every node's label: its first four expanded bytes, big-endian (0 past the end),
   * top bit flipped so that signed order is byte order. A key orders labels as far as it goes,
   * so the sibling search may decide on keys alone until two are equal.
   */
  private fillKeys(from: number, to: number): void {
    const keys = this.keys;
    const bytes = this.labelPool;
    const limit = bytes.length;
    const entries = this.labelEntryAt;
    const dictionary = this.labelDictionary;
    const nodes = this.nodes;
    for (let node = from; node < to; node++) {
      const word = nodes[node] as number;
      const recorded = (word >>> this.lengthShift) & this.lengthMask;
      let i = word & this.labelMask;
      let remaining = recorded;
      let stop = limit;
      if (recorded === this.lengthMask) {
        const meta = readLength(bytes, i);
        i += meta & 7;
        stop = Math.min(limit, i + (meta >>> 3));
        remaining = 4;
      }
      let key = 0;
      let taken = 0;
      while (taken < 4 && remaining > 0 && i < stop) {
        let b = bytes[i++] as number;
        const entry = entries[b] as number;
        if (entry === 0) {
          if (b === ESCAPE) b = i < stop ? (bytes[i++] as number) : 0;
          key = (key << 8) | b;
          taken++;
          remaining--;
          continue;
        }
        for (let k = entry >>> 8, last = k + (entry & 0xff); k < last && taken < 4; k++, taken++)
          key = (key << 8) | (dictionary[k] as number);
        remaining -= entry & 0xff;
      }
      for (; taken < 4; taken++) key <<= 8;
      keys[node] = key ^ KEY_FLIP;
    }
  }

  /**
   * Compares `src[start,end)` with the label of record `word`, expanding the coded bytes as it
   * goes: negative when the host label sorts first, 0 when equal, positive after. Never reads past
   * the pool (a corrupt trusted label only compares wrong).
   */
  private compareLabel(word: number, src: string, start: number, end: number): number {
    const bytes = this.labelPool;
    const entries = this.labelEntryAt;
    const dictionary = this.labelDictionary;
    const recorded = (word >>> this.lengthShift) & this.lengthMask;
    let i = word & this.labelMask;
    let stop = bytes.length;
    let remaining = recorded;
    if (recorded === this.lengthMask) {
      // A long label carries its byte length.
      const meta = readLength(bytes, i);
      i += meta & 7;
      stop = Math.min(stop, i + (meta >>> 3));
      remaining = Infinity;
    }
    let p = start;
    while (remaining > 0 && i < stop) {
      let b = bytes[i++] as number;
      const entry = entries[b] as number;
      if (entry === 0) {
        if (b === ESCAPE) {
          if (i >= stop) break;
          b = bytes[i++] as number;
        }
        if (p === end) return -1;
        const c = src.charCodeAt(p++);
        if (c !== b) return c - b;
        remaining--;
        continue;
      }
      const length = entry & 0xff;
      for (let k = entry >>> 8, last = k + length; k < last; k++) {
        if (p === end) return -1;
        const c = src.charCodeAt(p++);
        const d = dictionary[k] as number;
        if (c !== d) return c - d;
      }
      remaining -= length;
    }
    return p === end ? 0 : 1;
  }

  /** The `*` child of a node with the star bit: its first child, as `*` sorts before any host character. */
  private starChild(node: number): number {
    if (this.childStart[node] === 0) this.spanChildren(node >>> NODE_BLOCK_SHIFT);
    const at = this.childStart[node] as number;
    const last = (this.childEnd[node] as number) - 1;
    if (at <= last) {
      if (this.nodes[at] === 0) this.decodeBlock(at, at, last);
      if (this.compareLabel(this.nodes[at] as number, '*', 0, 1) === 0) return at;
    }
    // Only a label sorting before `*` (none in a real corpus) gets here.
    return this.child(node, '*', 0, 1);
  }

  /** Read from the node's flags byte, which needs no decoding. */
  private hasStarChild(rank: number): boolean {
    return ((this.nodeBytes[rank] as number) & NODE_STAR) !== 0;
  }

  /** The host label of record word 1 `word`, cached by label id. */
  private label(word: number): string {
    const id = word & this.labelMask;
    let s = this.labelTexts.get(id);
    if (s === undefined) {
      s = this.decodeLabel(word);
      this.labelTexts.set(id, s);
    }
    return s;
  }

  /** The host label of record word 1 `word`, decoded from the label pool. */
  private decodeLabel(word: number): string {
    const id = word & this.labelMask;
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
    return this.decoder.decode(Uint8Array.from(out));
  }
}
