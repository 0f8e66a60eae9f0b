/**
 * The compiled bundle: one little-endian buffer, a fixed header, a directory of sections and
 * the sections themselves (typed arrays, 4-byte aligned, so loading is views over the buffer).
 *
 * Host index: a reversed label trie. Node 0 is the root; every other node is one label under
 * its parent (`com` → `example` → `www`), a wildcard label is the literal `*`. Nodes are found
 * through one open-addressing table keyed by (parent, label), so a lookup walks the hostname
 * right to left probing once per label, straight over the URL string.
 */
export const MAGIC = 'HTTPSFY\0';
export const FORMAT_VERSION = 3;
export const HEADER_BYTES = 40;
/** Header offset of the number of low bits of a slot that hold the node index. */
export const NODE_BITS_OFFSET = 36;
export const NONE = 0xffffffff;

export const enum Section {
  /** Strings, each a varint byte length then UTF-8; a string's id is its byte offset. */
  StrBytes,
  /** Open-addressing table: node index in the low `nodeBits`, a hash tag above it; 0 = empty. */
  Slots,
  /**
   * One record of NODE_STRIDE words per trie node, so a probe touches one cache line:
   * parent index; label word (string id in the low 24 bits, label length in bits 24-30 when
   * below 127, NODE_STAR_BIT when the node has a `*` child); ruleset ref.
   */
  Nodes,
  RefList,
  RsFlags,
  RsName,
  RsNote,
  RsPlatform,
  RsRuleStart,
  RsExclStart,
  RsCookieStart,
  RuleFrom,
  RuleTo,
  RuleKind,
  ExclPattern,
  CookieHost,
  CookieName,
  Count,
}

/** Element size of each section, in bytes (1: Uint8Array, 4: Uint32Array). */
export const SECTION_ELEMENT_BYTES: readonly number[] = [
  1, 4, 4, 4, 1, 4, 4, 4, 4, 4, 4, 4, 4, 1, 4, 4, 4,
];

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

export const NODE_STRIDE = 3;
export const NODE_PARENT = 0;
export const NODE_LABEL = 1;
export const NODE_REF = 2;
/** Label word: the node has a `*` child. */
export const NODE_STAR_BIT = 0x80000000;
/** Label word: string id bits; the string pool must stay below 16 MiB. */
export const NODE_LABEL_ID_MASK = 0x00ffffff;
/** Label word: length field value meaning "127 or longer: read it from the pool". */
export const NODE_LABEL_LONG = 127;

/** Set in NodeRef when the value indexes RefList (count, then ids) instead of holding id + 1. */
export const REF_LIST_BIT = 0x80000000;

/**
 * Host-table hashing: a label's own hash (FNV-1a over its UTF-16 code units, so the matcher can
 * hash labels straight from the URL string in the same pass that finds the dots), then mixed
 * with the parent node index to place the (parent, label) pair.
 */
export const LABEL_HASH_SEED = 0x811c9dc5;

export function hashStep(h: number, charCode: number): number {
  return Math.imul(h ^ charCode, 0x01000193);
}

export function slotHash(labelHash: number, parent: number): number {
  let h = Math.imul(labelHash ^ Math.imul(parent + 1, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}

/** Decodes the varint length at `at`; returns length * 8 + header size (1..4 bytes), no allocation. */
export function readLength(bytes: Uint8Array, at: number): number {
  let length = 0;
  let shift = 0;
  let size = 0;
  for (;;) {
    const b = bytes[at + size] as number;
    length |= (b & 0x7f) << shift;
    size++;
    if (b < 0x80 || size === 4) break;
    shift += 7;
  }
  return length * 8 + size;
}

/** Word-wise checksum of everything after the header, to reject corrupted bundles. */
export function checksum(bytes: Uint8Array, from: number): number {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + from, (bytes.length - from) >>> 2);
  let h = 0x811c9dc5;
  for (let i = 0; i < words.length; i++) h = Math.imul(h ^ (words[i] as number), 0x01000193);
  return h >>> 0;
}
