/**
 * The host trie (Section.Labels, LabelDictionary, ChildCounts, Nodes and NodeIndex; the layout is
 * described in format.ts): the writer, and the decoders full verification runs over it (lookups
 * decode lazily, match/host-index.ts). Which rulesets each node carries is ruleset-refs.ts.
 */
import {
  bitsFor,
  MAX_LENGTH_BITS,
  NODE_BLOCK,
  NODE_BLOCK_SHIFT,
  NODE_STAR,
  nodeIndexLength,
  NodeIndexField,
  nodeLayout,
  type NodeLayout,
  readVarint,
  VARINT_CUT,
} from './format.js';
import { varintBytes, writePool } from './pool.js';
import { writeRulesetRefs } from './ruleset-refs.js';
import { codeStrings } from './string-dictionary.js';

interface TrieNode {
  parent: number;
  label: string;
  rulesets: number[];
  hasStarChild: boolean;
}

/** The trie of reversed target labels, built ruleset by ruleset (node 0 is the root). */
export class HostTrie {
  readonly nodes: TrieNode[] = [{ parent: -1, label: '', rulesets: [], hasStarChild: false }];
  private readonly childIndex = new Map<string, number>();

  /** Adds target `host` of ruleset `id`; rulesets come in ascending id order. */
  add(host: string, id: number): void {
    // Reversed labels: www.example.com is com → example → www.
    const labels = host.split('.');
    let node = 0;
    for (let i = labels.length - 1; i >= 0; i--) node = this.child(node, labels[i] as string);
    const list = (this.nodes[node] as TrieNode).rulesets;
    if (list[list.length - 1] !== id) list.push(id);
  }

  private child(parent: number, label: string): number {
    const key = `${parent}\u0000${label}`;
    let id = this.childIndex.get(key);
    if (id === undefined) {
      id = this.nodes.length;
      this.nodes.push({ parent, label, rulesets: [], hasStarChild: false });
      this.childIndex.set(key, id);
      if (label === '*') (this.nodes[parent] as TrieNode).hasStarChild = true;
    }
    return id;
  }
}

/** The host trie's sections, its NodeRef column (record order) and its Layout words. */
export interface HostTrieSections {
  labels: Uint8Array;
  labelDictionary: Uint8Array;
  childCounts: Uint8Array;
  nodes: Uint8Array;
  nodeIndex: Uint32Array;
  refList: Uint32Array;
  nodeRef: Uint32Array;
  /** The host-index words of the Layout section (LayoutField order). */
  layoutWords: number[];
}

/** Writes `trie` for a bundle of `rulesetCount` rulesets. */
export function writeHostTrie(trie: HostTrie, rulesetCount: number): HostTrieSections {
  const nodes = trie.nodes;
  const nodeCount = nodes.length;
  // Host labels: deduplicated and sorted (neighbours share prefixes that gzip finds: 18 KB less
  // on the full corpus than first-use order), coded with a dictionary of their own (label text
  // has other repeats than regexes); the matcher compares them while expanding.
  const encoder = new TextEncoder();
  const labelIds = new Map<string, number>();
  const labelStrings = [...new Set(nodes.slice(1).map((node) => node.label))].sort();
  const lengths = labelStrings.map((label, i) => {
    labelIds.set(label, i);
    return encoder.encode(label).length;
  });
  const codedLabels = codeStrings(labelStrings);

  // Breadth-first order: the root, then each node's children sorted by label, so that siblings
  // are contiguous, follow their parent and ascend by label id (the pool is sorted too).
  const childrenOf: number[][] = nodes.map(() => []);
  for (let id = 1; id < nodeCount; id++) childrenOf[(nodes[id] as TrieNode).parent]?.push(id);
  const order: number[] = [0];
  for (let k = 0; k < order.length; k++) {
    const kids = childrenOf[order[k] as number] as number[];
    kids.sort(
      (x, y) =>
        (labelIds.get((nodes[x] as TrieNode).label) as number) -
        (labelIds.get((nodes[y] as TrieNode).label) as number),
    );
    for (const kid of kids) order.push(kid);
  }
  const childCounts: number[] = [];
  for (const id of order)
    for (const b of varintBytes((childrenOf[id] as number[]).length)) childCounts.push(b);

  const { refList, nodeRef } = writeRulesetRefs(nodes, rulesetCount);

  // A record keeps its label's expanded length, which also says where the coded label ends, so
  // only labels too long for the field (all-ones: "long") carry a varint header in the pool. The
  // field takes what the word has left, up to MAX_LENGTH_BITS; fewer bits mean more headers, a
  // longer pool and maybe a wider label id, so narrow it until the record fits.
  // Reduced, not spread: a library has tens of thousands of labels, more arguments than a
  // service worker's stack holds (the 2018 library failed to import in Chromium).
  const longest = lengths.reduce((a, b) => Math.max(a, b), 1);
  let lengthBits = Math.min(MAX_LENGTH_BITS, bitsFor(longest + 1));
  let labels: { bytes: Uint8Array; offsets: number[] };
  let layoutWords: number[];
  let layout: NodeLayout | string;
  for (;;) {
    const long = 2 ** lengthBits - 1;
    // The empty label (a host of dots only, `.`) takes its header byte too: with none it would
    // share its id with the next label (`*`), and siblings must ascend.
    labels = writePool(
      codedLabels.coded,
      (i) => (lengths[i] as number) >= long || lengths[i] === 0,
    );
    // Ids go up to the pool length: an empty label may sit at its very end.
    layoutWords = [nodeCount, bitsFor(Math.max(1, labels.bytes.length)), lengthBits];
    layout = nodeLayout(layoutWords);
    if (typeof layout !== 'string') break;
    if (lengthBits === 0) throw new Error(`host index does not fit a bundle: ${layout}`);
    lengthBits--;
  }
  const long = layout.lengthMask;
  // Section.Nodes: a flags-and-length byte per node, then the label ids as sibling rises.
  const nodeBytes: number[] = [];
  const labelOf = new Array<number>(nodeCount);
  order.forEach((id, rank) => {
    const node = nodes[id] as TrieNode;
    // The root's record: an empty label at the pool's start, never compared, and the root's
    // star bit.
    const labelIndex = id === 0 ? -1 : (labelIds.get(node.label) as number);
    const length = labelIndex < 0 ? 0 : Math.min(lengths[labelIndex] as number, long);
    labelOf[rank] = labelIndex < 0 ? 0 : (labels.offsets[labelIndex] as number);
    nodeBytes.push((node.hasStarChild ? NODE_STAR : 0) | length);
  });
  for (let rank = 0, next = 1, parent = 0, start = 1; rank < nodeCount; rank++) {
    // A first child (and the root) carries its label whole, a later sibling its rise.
    while (rank >= next && parent < nodeCount) {
      start = next;
      next += (childrenOf[order[parent] as number] as number[]).length;
      parent++;
    }
    const whole = rank === 0 || rank === start;
    for (const b of varintBytes(
      whole ? (labelOf[rank] as number) : (labelOf[rank] as number) - (labelOf[rank - 1] as number),
    ))
      nodeBytes.push(b);
  }
  return {
    labels: labels.bytes,
    labelDictionary: codedLabels.dictionary,
    childCounts: Uint8Array.from(childCounts),
    nodes: Uint8Array.from(nodeBytes),
    nodeIndex: nodeIndexOf(childCounts, nodeBytes, nodeCount, (rank) => labelOf[rank] as number),
    refList,
    nodeRef: Uint32Array.from(order, (id) => nodeRef[id] as number),
    layoutWords,
  };
}

/**
 * The NodeIndex of a trie, from its ChildCounts and Nodes bytes and each node's label id: the
 * writer stores it, full verification recomputes it and compares.
 */
export function nodeIndexOf(
  counts: ArrayLike<number>,
  nodeBytes: ArrayLike<number>,
  nodeCount: number,
  labelOf: (node: number) => number,
): Uint32Array {
  const index = new Uint32Array(nodeIndexLength(nodeCount));
  const blockStart = (i: number) =>
    (i & (NODE_BLOCK - 1)) === 0 ? (i >>> NODE_BLOCK_SHIFT) * NodeIndexField.Count : -1;
  for (let i = 0, at = 0, next = 1; i < nodeCount; i++) {
    const entry = blockStart(i);
    if (entry >= 0) {
      index[entry + NodeIndexField.CountsAt] = at;
      index[entry + NodeIndexField.FirstChild] = next;
    }
    const read = readVarint(counts, at);
    if (read < 0) break;
    next += Math.floor(read / 8);
    at += read & 7;
  }
  for (let i = 0, at = nodeCount; i < nodeCount; i++) {
    const entry = blockStart(i);
    if (entry >= 0) {
      index[entry + NodeIndexField.LabelAt] = at;
      index[entry + NodeIndexField.Label] = labelOf(i);
    }
    const read = readVarint(nodeBytes, at);
    if (read < 0) break;
    at += read & 7;
  }
  return index;
}

/**
 * Decodes the ChildCounts varints into each node's first child: `first[i]..first[i + 1]` are the
 * children of node i (`first` has nodeCount + 1 entries). Returns an error message when the
 * counts do not form a breadth-first tree of `nodeCount` nodes: every child index must lie above
 * its parent's (so walks only go down and end) and the counts must cover nodes 1..nodeCount-1
 * exactly. Full verification's: lookups decode lazily (host-index.ts).
 */
export function firstChildren(counts: Uint8Array, nodeCount: number): Int32Array | string {
  const first = new Int32Array(nodeCount + 1);
  const length = counts.length;
  let next = 1;
  let at = 0;
  for (let i = 0; i < nodeCount; i++) {
    first[i] = next;
    const read = readVarint(counts, at);
    if (read < 0)
      return read === VARINT_CUT
        ? `child counts cut short at node ${i}`
        : `child count of node ${i} too long`;
    const count = Math.floor(read / 8);
    at += read & 7;
    if (count > 0 && next <= i) return `children of node ${i} start at node ${next}, not after it`;
    if (next + count > nodeCount) return `children of node ${i} beyond the ${nodeCount} nodes`;
    next += count;
  }
  first[nodeCount] = next;
  if (at !== length) return `${length - at} bytes after the child counts`;
  if (next !== nodeCount) return `child counts cover ${next - 1} of ${nodeCount - 1} nodes`;
  return first;
}

/**
 * Expands Section.Nodes into one word per node (label id, star bit, length: NodeLayout), given
 * the children ranges of firstChildren. Returns an error message when the bytes are cut short,
 * siblings do not ascend or a label id lies past `poolLength`. Full verification's, as
 * firstChildren.
 */
export function decodeNodes(
  bytes: Uint8Array,
  first: Int32Array,
  layout: NodeLayout,
  poolLength: number,
): Uint32Array | string {
  const n = layout.nodeCount;
  const words = new Uint32Array(n);
  const length = bytes.length;
  if (length < n) return 'node bytes cut short';
  const { labelMask, starBit, lengthMask } = layout;
  const lengthUnit = 2 ** layout.lengthShift;
  let at = n;
  // Node 0 (the root) is a group of its own; then the children of each node, in node order.
  for (let p = -1, i = 0; p < n && i < n; p++) {
    const end = p < 0 ? 1 : Math.min(first[p + 1] as number, n);
    // A first child carries its label whole, a later sibling its rise.
    for (let label = 0, whole = true; i < end; i++, whole = false) {
      const read = readVarint(bytes, at);
      if (read < 0)
        return read === VARINT_CUT
          ? `node labels cut short at node ${i}`
          : `label of node ${i} too long`;
      const value = Math.floor(read / 8);
      at += read & 7;
      if (!whole && value === 0) return `children of node ${p} not in label order`;
      label = whole ? value : label + value;
      if (label > poolLength) return `node ${i} label out of range`;
      const flags = i < length ? (bytes[i] as number) : 0;
      words[i] =
        ((label & labelMask) +
          ((flags & NODE_STAR) !== 0 ? starBit : 0) +
          (flags & 0x7f & lengthMask) * lengthUnit) >>>
        0;
    }
  }
  if (at !== length) return `${length - at} bytes after the node labels`;
  return words;
}

/**
 * Full verification of the trie: the child counts form a breadth-first tree whose walks only go
 * down (firstChildren), label ids lie in the pool and siblings ascend (decodeNodes), and the
 * NodeIndex the lazy decoder starts from says what the full decode found. Returns an error
 * message, or null.
 */
export function checkHostTrie(
  layout: NodeLayout,
  childCounts: Uint8Array,
  nodeBytes: Uint8Array,
  labels: Uint8Array,
  stored: Uint32Array,
): string | null {
  const first = firstChildren(childCounts, layout.nodeCount);
  if (typeof first === 'string') return first;
  // An empty label may sit at the very end of the pool.
  const records = decodeNodes(nodeBytes, first, layout, labels.length);
  if (typeof records === 'string') return records;
  const expected = nodeIndexOf(
    childCounts,
    nodeBytes,
    layout.nodeCount,
    (i) => (records[i] as number) & layout.labelMask,
  );
  const wrong = expected.findIndex((v, i) => stored[i] !== v);
  if (wrong >= 0)
    return `node index entry ${wrong} says ${stored[wrong]}, expected ${expected[wrong]}`;
  return null;
}
