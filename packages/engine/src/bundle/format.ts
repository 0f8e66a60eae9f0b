/**
 * The compiled bundle: one little-endian buffer, a fixed header, a directory of sections and
 * the sections themselves (typed arrays, 4-byte aligned, so loading is views over the buffer).
 *
 * Host index: a reversed label trie (`com` → `example` → `www`; a wildcard label is the literal
 * `*`), its nodes in breadth-first order, so the children of a node are contiguous and come after
 * it; siblings are sorted by label, and label ids (offsets into the sorted, deduplicated label
 * pool) ascend with the labels, so a lookup binary-searches the children of each node it reaches.
 * A node record keeps its label and star bit; its child count lies in ChildCounts, from which a
 * lookup derives each node's first child (a prefix sum, resumed from NodeIndex), so no parent or
 * slot is stored.
 */
import { MAX_PACKED_BITS, packColumn } from './packed-array.js';

export const MAGIC = 'HTTPSFY\0';
/**
 * 9: breadth-first host trie (Nodes in BFS order, ChildCounts, NodeIndex) instead of the
 * open-addressing table of version 8 (Occupancy, displacements); 0.2 MB less gzip on the full corpus.
 * 8: parentless host records (displacement from home instead of the parent slot; the root has a
 * record in ROOT_SLOT and carries the root's star bit), ruleset refs in their own packed column
 * (NodeRef). Version 7 bundles are refused with a "recompile" message.
 * 7: the PatternVerdict column (the regex door's verdicts, worked out when the bundle was
 * compiled). Version 6 bundles are refused with a "recompile" message like any other version:
 * a bundle is always compiled from rulesets, never kept as the only copy.
 * 6: the checksum covers the header too (every byte but the checksum field itself); version 5
 * left the timestamp (bytes 16-23) and the reserved word (bytes 36-39) outside it.
 */
export const FORMAT_VERSION = 9;
export const HEADER_BYTES = 40;
export const NONE = 0xffffffff;

export const enum Section {
  /**
   * Per-bundle widths, checked at every load: the host index (LayoutField order), then (count,
   * bits, blocked) for each packed column, RsFlags through NodeRef in section order.
   */
  Layout,
  /**
   * Host labels, each a varint byte length then its UTF-8 coded with LabelDictionary (see
   * string-dictionary.ts); compared while expanding, so a lookup allocates nothing.
   */
  Labels,
  /**
   * The child count of each node, in node order, as varints (mostly one byte: 0 or 1 child).
   * Node 0 is the root; the children of node i follow those of node i - 1 (breadth-first order).
   */
  ChildCounts,
  /**
   * Per node, in breadth-first order: first one byte each, the star bit (0x80: the node has a `*`
   * child, always its first) and the expanded label length (low 7 bits; all-ones: long, see
   * Labels); then one varint each, the label id, as the rise over the previous sibling's (at
   * least 1: siblings ascend) or, for a first child, whole. The root's label is empty (id 0).
   * The loader expands them lazily, a block of NODE_BLOCK nodes within a sibling group at a time,
   * from NodeIndex (decodeNodes expands them all, to verify).
   */
  Nodes,
  /**
   * Where decoding may start, per block of NODE_BLOCK nodes (NodeIndexField order): for the
   * block's first node as a parent, its ChildCounts byte offset and its first child; as a child,
   * the Nodes byte offset of its label and its label id whole. A lookup then decodes only the
   * blocks it reaches, so a load decodes nothing.
   */
  NodeIndex,
  RefList,
  /** Dictionary of the cold-string codes: each entry a varint byte length then its bytes. */
  Dictionary,
  /** Cold strings, each a varint encoded length then dictionary-coded bytes; id = byte offset. */
  StrBytes,
  /** From here to CookieName every section is a packed column (see packed-array.ts). */
  RsFlags,
  /** Cold-string ids (StrBytes offsets), as are Note, Platform, RuleFrom, RuleTo, ExclPattern, Cookie*. */
  RsName,
  /** Sparse: ruleset ids (ascending) that have a default_off note, and the notes. */
  NoteOwner,
  Note,
  /** Sparse: ruleset ids (ascending) that have a platform, and the platforms. */
  PlatformOwner,
  Platform,
  /** Per ruleset (n + 1 entries): first rule, exclusion and cookie; ruleset i owns [s[i], s[i+1]). */
  RsRuleStart,
  RsExclStart,
  RsCookieStart,
  RuleFrom,
  RuleTo,
  RuleKind,
  ExclPattern,
  CookieHost,
  CookieName,
  /**
   * The regex door's verdict on each pattern, worked out at compile time (PatternVerdictCode),
   * for rules, then exclusions, then securecookies (host, name); 0 entries when the bundle
   * carries none. Used only when the loader says the bundle is our own build
   * (`trustBundledRegexVerdicts`); any other bundle's patterns are judged where they run.
   */
  PatternVerdict,
  /**
   * The ruleset ref of each host record, in record order. With r a ref (1..n ruleset id + 1,
   * above n: n + 1 + RefList index, where a count then the ids lie) and G = ghostBase: 0 none;
   * INHERIT_REF (1) the rulesets its parent hands down (half the corpus's targets:
   * `www.example.com` under `example.com`); r + 1 (2..G) its own; r + G (above G) none of its
   * own, but it hands r down (a "ghost": `a.example.com`, `b.example.com` under a non-target
   * `example.com`). A node hands down its own rulesets, or its ghost.
   */
  NodeRef,
  /** Dictionary of the host-label codes, laid out as Dictionary. */
  LabelDictionary,
  Count,
}

/** Element size of each section, in bytes (1: Uint8Array, 4: Uint32Array). */
export const SECTION_ELEMENT_BYTES: readonly number[] = [
  4, 1, 1, 1, 4, 4, 1, 1, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1,
];

export const FIRST_PACKED = Section.RsFlags;
export const PACKED_COUNT = Section.NodeRef - Section.RsFlags + 1;

/** Element count and field width of one packed column. */
export interface PackedColumn {
  count: number;
  bits: number;
  /** Laid out in blocks with a base each (packed-array.ts BLOCK_SHIFT). */
  blocked: boolean;
}

/** Layout words per packed column: count, field bits, blocked (0 or 1). */
export const COLUMN_WORDS = 3;

/**
 * Packs the columns (indexed by Section, RsFlags through NodeRef), each at the width its values
 * need, blocked when that is smaller (packed-array.ts packColumn): their sections, and their
 * Layout words (count, bits, blocked each), which packedColumns reads back.
 */
export function writePackedColumns(columns: readonly ArrayLike<number>[]): {
  sections: Uint32Array[];
  layoutWords: number[];
} {
  const sections: Uint32Array[] = [];
  const layoutWords: number[] = [];
  for (let k = 0; k < PACKED_COUNT; k++) {
    const values = columns[FIRST_PACKED + k] as ArrayLike<number>;
    const { words, bits, blocked } = packColumn(values);
    layoutWords.push(values.length, bits, blocked ? 1 : 0);
    sections[FIRST_PACKED + k] = words;
  }
  return { sections, layoutWords };
}

/**
 * Reads the packed-column table of the Layout section and checks that the counts agree with
 * each other and with the ruleset count (all O(1), so even trusted bytes get it: the matcher
 * indexes one column by another's positions). Returns an error message when they do not.
 */
export function packedColumns(
  layout: ArrayLike<number>,
  rulesetCount: number,
): PackedColumn[] | string {
  if (layout.length !== LayoutField.Count + COLUMN_WORDS * PACKED_COUNT)
    return `layout of ${layout.length} words`;
  const columns: PackedColumn[] = [];
  for (let k = 0; k < PACKED_COUNT; k++) {
    const count = layout[LayoutField.Count + COLUMN_WORDS * k] as number;
    const bits = layout[LayoutField.Count + COLUMN_WORDS * k + 1] as number;
    const blocked = layout[LayoutField.Count + COLUMN_WORDS * k + 2] as number;
    // Field positions are computed with 32-bit shifts, so the bit stream stays below 2^32.
    if (bits < 1 || bits > MAX_PACKED_BITS || count * bits >= 2 ** 32)
      return `column ${FIRST_PACKED + k} of ${count} fields of ${bits} bits`;
    if (blocked !== 0 && blocked !== 1)
      return `column ${FIRST_PACKED + k} with block flag ${blocked}`;
    columns.push({ count, bits, blocked: blocked === 1 });
  }
  const count = (s: Section): number => (columns[s - FIRST_PACKED] as PackedColumn).count;
  const n = rulesetCount;
  if (count(Section.RsFlags) !== n || count(Section.RsName) !== n)
    return 'ruleset columns do not match the ruleset count';
  if (
    count(Section.RsRuleStart) !== n + 1 ||
    count(Section.RsExclStart) !== n + 1 ||
    count(Section.RsCookieStart) !== n + 1
  )
    return 'ruleset ranges do not match the ruleset count';
  if (
    count(Section.Note) !== count(Section.NoteOwner) ||
    count(Section.Platform) !== count(Section.PlatformOwner) ||
    count(Section.NoteOwner) > n ||
    count(Section.PlatformOwner) > n
  ) {
    return 'sparse ruleset columns of different lengths';
  }
  if (
    count(Section.RuleTo) !== count(Section.RuleFrom) ||
    count(Section.RuleKind) !== count(Section.RuleFrom)
  )
    return 'rule columns of different lengths';
  if (count(Section.CookieName) !== count(Section.CookieHost))
    return 'cookie columns of different lengths';
  const patterns =
    count(Section.RuleFrom) + count(Section.ExclPattern) + 2 * count(Section.CookieHost);
  if (count(Section.PatternVerdict) !== 0 && count(Section.PatternVerdict) !== patterns)
    return `${count(Section.PatternVerdict)} regex verdicts for ${patterns} patterns`;
  // Two bits hold every PatternVerdictCode, so no stored value can name an unknown one.
  if ((columns[Section.PatternVerdict - FIRST_PACKED] as PackedColumn).bits > PATTERN_VERDICT_BITS)
    return `regex verdicts of ${(columns[Section.PatternVerdict - FIRST_PACKED] as PackedColumn).bits} bits`;
  if (count(Section.NodeRef) !== layout[LayoutField.NodeCount])
    return 'ruleset refs do not match the host records';
  return columns;
}

/** Words of the Layout section. */
export const enum LayoutField {
  /** Node records, the root's included. */
  NodeCount,
  /** Width of the label id (a byte offset into Labels). */
  LabelBits,
  /**
   * Width of the label's expanded (UTF-8) length, a pre-check before expanding it; its all-ones
   * value means "longer: compare to the end of the expansion".
   */
  LengthBits,
  Count,
}

export const enum RulesetFlag {
  /** No default_off and no platform. */
  DefaultOn = 1,
  /** platform="mixedcontent" and no default_off: on when mixed-content rulesets are enabled. */
  MixedContent = 2,
  /** The only rule is `^http:` → `https:` and there is no exclusion. */
  TrivialOnly = 4,
}

export const enum RuleKind {
  General = 0,
  /** `^http:` → `https:` */
  Trivial = 1,
  /** `^literal` → a `to` without `$`: a prefix swap. */
  Literal = 2,
}

/**
 * The regex door's verdict on one pattern, as the PatternVerdict column stores it (see
 * safe-regex.ts RegexVerdict). Only the two verdicts that let a pattern run on RegExp with no
 * analysis at all are kept; the RE2 spelling a quadratic pattern needs for input beyond
 * QUADRATIC_INPUT_LIMIT is worked out if such input ever comes (storing the spellings cost
 * 0.23 MB raw on the full corpus for a case no oracle URL meets).
 */
export const enum PatternVerdictCode {
  /** The matcher runs the pattern without a regex (a finite language, a prefix swap, a trivial rule). */
  None = 0,
  /** Proven linear on RegExp. */
  Proven = 1,
  /** Proven quadratic: RegExp up to QUADRATIC_INPUT_LIMIT characters. */
  Quadratic = 2,
  /** Needs a regex, judged where it first runs: linear-time route, refused or invalid (rare). */
  Judge = 3,
}
/** Widest PatternVerdict field: every code fits. */
export const PATTERN_VERDICT_BITS = 2;

/** NodeRef value: the record carries its parent's rulesets (the root's: none). */
export const INHERIT_REF = 1;

/** The NodeRef value of a ghost ref r is r + ghostBase (see Section.NodeRef). */
export function ghostBase(rulesetCount: number, refListLength: number): number {
  return rulesetCount + 1 + refListLength;
}

/** Node index of the root: breadth-first order puts it first. */
export const ROOT_NODE = 0;
/** Widest label-length field: labels of 127 bytes or more carry a header in the pool. */
export const MAX_LENGTH_BITS = 7;
/** Star bit of a node's byte in Section.Nodes. */
export const NODE_STAR = 0x80;

/** log2 of NODE_BLOCK. */
export const NODE_BLOCK_SHIFT = 7;
/** Nodes per NodeIndex entry: 128 keeps the index near 1% of the host index, a block's decode short. */
export const NODE_BLOCK = 1 << NODE_BLOCK_SHIFT;

/** Words of each NodeIndex entry. */
export const enum NodeIndexField {
  /** ChildCounts byte offset of the block's first node's count. */
  CountsAt,
  /** The block's first node's first child (as if it had children). */
  FirstChild,
  /** Section.Nodes byte offset of the block's first node's label varint. */
  LabelAt,
  /** The block's first node's label id, whole (its varint may be a rise). */
  Label,
  Count,
}

/** Words of the NodeIndex section of a trie of `nodeCount` nodes. */
export function nodeIndexLength(nodeCount: number): number {
  return Math.ceil(nodeCount / NODE_BLOCK) * NodeIndexField.Count;
}

/** readVarint's answers when the bytes end inside the varint, and when it runs too long. */
export const VARINT_CUT = -1;
export const VARINT_LONG = -2;

/**
 * Reads the varint at `at` (7 bits a byte, low first) as its value * 8 + its byte length, so one
 * number says both (`& 7` is the length); VARINT_CUT when the bytes end inside it, VARINT_LONG
 * past 5 bytes or at a value of 2^31 or more.
 */
export function readVarint(bytes: ArrayLike<number>, at: number): number {
  let value = 0;
  for (let size = 0, scale = 1; size < 5; size++, scale *= 128) {
    if (at + size >= bytes.length) return VARINT_CUT;
    const b = bytes[at + size] as number;
    value += (b & 0x7f) * scale;
    if (b < 0x80) return value < 2 ** 31 ? value * 8 + size + 1 : VARINT_LONG;
  }
  return VARINT_LONG;
}

/** Bit positions of the node record fields, derived from the Layout widths. */
export interface NodeLayout {
  nodeCount: number;
  labelBits: number;
  lengthBits: number;
  labelMask: number;
  starBit: number;
  lengthShift: number;
  lengthMask: number;
}

/** Derives field positions; returns an error message when the widths cannot form a record. */
export function nodeLayout(fields: ArrayLike<number>): NodeLayout | string {
  if (fields.length < LayoutField.Count) return 'layout section cut short';
  const nodeCount = fields[LayoutField.NodeCount] as number;
  const labelBits = fields[LayoutField.LabelBits] as number;
  const lengthBits = fields[LayoutField.LengthBits] as number;
  // The root's record is always there.
  if (nodeCount < 1 || nodeCount >= 2 ** 30) return `${nodeCount} nodes`;
  if (labelBits < 1 || lengthBits > MAX_LENGTH_BITS || labelBits + 1 + lengthBits > 32) {
    return `label fields of ${labelBits} + ${lengthBits} bits do not fit a word`;
  }
  const lengthShift = labelBits + 1;
  return {
    nodeCount,
    labelBits,
    lengthBits,
    labelMask: 2 ** labelBits - 1,
    starBit: 2 ** labelBits,
    lengthShift,
    lengthMask: 2 ** lengthBits - 1,
  };
}

/** Bits needed to hold values 0..max. */
export function bitsFor(max: number): number {
  let bits = 1;
  while (2 ** bits <= max) bits++;
  return bits;
}

/** Byte offset of the checksum word in the header; the only header word it does not cover. */
export const CHECKSUM_OFFSET = 32;

/**
 * Word-wise checksum of the whole bundle except the checksum word itself, to reject corrupted
 * bundles: the header fields (timestamp, counts, the reserved word at 36-39) are covered too, so
 * a flipped timestamp byte is caught like any other.
 */
export function checksum(bytes: Uint8Array): number {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  const skip = CHECKSUM_OFFSET >>> 2;
  let h = 0x811c9dc5;
  for (let i = 0; i < words.length; i++)
    if (i !== skip) h = Math.imul(h ^ (words[i] as number), 0x01000193);
  return h >>> 0;
}
