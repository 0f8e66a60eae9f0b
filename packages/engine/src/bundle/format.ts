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
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 40;
export const NONE = 0xffffffff;

export const enum Section {
  StrBytes,
  StrOffsets,
  Slots,
  NodeParent,
  NodeLabel,
  NodeRef,
  NodeFlags,
  RefList,
  RsFlags,
  RsName,
  RsNote,
  RsPlatform,
  RsRuleStart,
  RsExclStart,
  RsCookieStart,
  RsTargetStart,
  RuleFrom,
  RuleTo,
  RuleKind,
  RulePrefix,
  ExclPattern,
  ExclPrefix,
  CookieHost,
  CookieName,
  TargetNode,
  Count,
}

/** Element size of each section, in bytes (1: Uint8Array, 4: Uint32Array). */
export const SECTION_ELEMENT_BYTES: readonly number[] = [
  1, 4, 4, 4, 4, 4, 1, 4, 1, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1, 4, 4, 4, 4, 4, 4,
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

export const enum NodeFlag {
  HasStarChild = 1,
}

/** Set in NodeRef when the value indexes RefList (count, then ids) instead of holding id + 1. */
export const REF_LIST_BIT = 0x80000000;

/** Mixes a parent node index into the hash seed of its children's labels. */
export function hashSeed(parent: number): number {
  return Math.imul(parent + 1, 0x9e3779b1);
}

export function hashStep(h: number, charCode: number): number {
  return Math.imul(h ^ charCode, 0x01000193);
}

export function hashFinish(h: number): number {
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 12);
}

/** Word-wise checksum of everything after the header, to reject corrupted bundles. */
export function checksum(bytes: Uint8Array, from: number): number {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + from, (bytes.length - from) >>> 2);
  let h = 0x811c9dc5;
  for (let i = 0; i < words.length; i++) h = Math.imul(h ^ (words[i] as number), 0x01000193);
  return h >>> 0;
}
