import { checksum, FORMAT_VERSION, HEADER_BYTES, MAGIC, Section, SECTION_ELEMENT_BYTES } from './format.js';

export class BundleError extends Error {
  override readonly name = 'BundleError';
}

export interface BundleHeader {
  formatVersion: number;
  byteLength: number;
  /** Unix seconds given at compile time (0 when none). */
  timestamp: number;
  rulesetCount: number;
}

export interface BundleSections {
  header: BundleHeader;
  u8: Uint8Array[];
  u32: Uint32Array[];
}

/** Reads and checks the fixed header; throws BundleError for anything that is not a whole bundle. */
export function readBundleHeader(bytes: Uint8Array): BundleHeader {
  if (bytes.length < HEADER_BYTES) throw new BundleError(`not a httpsify bundle: ${bytes.length} bytes is shorter than the ${HEADER_BYTES}-byte header`);
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC.charCodeAt(i)) throw new BundleError('not a httpsify bundle: bad magic bytes');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const formatVersion = view.getUint32(8, true);
  if (formatVersion !== FORMAT_VERSION) throw new BundleError(`bundle format version ${formatVersion} is not supported (this engine reads version ${FORMAT_VERSION}); recompile the rulesets`);
  const byteLength = view.getUint32(12, true);
  if (bytes.length < byteLength) throw new BundleError(`truncated bundle: ${bytes.length} of ${byteLength} bytes`);
  if (bytes.length > byteLength) throw new BundleError(`corrupt bundle: ${bytes.length - byteLength} unexpected bytes after the end`);
  return { formatVersion, byteLength, timestamp: view.getFloat64(16, true), rulesetCount: view.getUint32(24, true) };
}

/**
 * Validates the whole bundle (header, checksum, section bounds and cross-references that the
 * matcher relies on) and returns typed-array views over it: no copy of the sections is made.
 */
export function readBundleSections(input: Uint8Array): BundleSections {
  const header = readBundleHeader(input);
  // Typed views need 4-byte alignment; a Buffer slice from a pool may not have it.
  const bytes = input.byteOffset % 4 === 0 ? input : input.slice();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sectionCount = view.getUint32(28, true);
  if (sectionCount !== Section.Count) throw new BundleError(`corrupt bundle: ${sectionCount} sections, expected ${Section.Count}`);
  if (HEADER_BYTES + sectionCount * 8 > bytes.length) throw new BundleError('truncated bundle: section directory cut off');
  if (view.getUint32(32, true) !== checksum(bytes, HEADER_BYTES)) throw new BundleError('corrupt bundle: checksum mismatch');
  const u8: Uint8Array[] = [];
  const u32: Uint32Array[] = [];
  for (let i = 0; i < sectionCount; i++) {
    const offset = view.getUint32(HEADER_BYTES + i * 8, true);
    const length = view.getUint32(HEADER_BYTES + i * 8 + 4, true);
    const size = SECTION_ELEMENT_BYTES[i] as number;
    if (offset + length > bytes.length || offset % 4 !== 0 || length % size !== 0) throw new BundleError(`corrupt bundle: section ${i} lies outside the buffer`);
    if (size === 1) u8[i] = new Uint8Array(bytes.buffer, bytes.byteOffset + offset, length);
    else u32[i] = new Uint32Array(bytes.buffer, bytes.byteOffset + offset, length / 4);
  }
  checkCrossReferences(header.rulesetCount, u8, u32);
  return { header, u8, u32 };
}

function expectLength(name: string, actual: number, expected: number): void {
  if (actual !== expected) throw new BundleError(`corrupt bundle: ${name} has ${actual} entries, expected ${expected}`);
}

/** Bounds every index the matcher follows, so a crafted bundle cannot send it out of range. */
function checkCrossReferences(n: number, u8: Uint8Array[], u32: Uint32Array[]): void {
  const strCount = (u32[Section.StrOffsets] as Uint32Array).length - 1;
  const strOffsets = u32[Section.StrOffsets] as Uint32Array;
  if (strCount < 0) throw new BundleError('corrupt bundle: empty string table');
  const strBytes = (u8[Section.StrBytes] as Uint8Array).length;
  for (let i = 0; i < strCount; i++) {
    if ((strOffsets[i] as number) > (strOffsets[i + 1] as number)) throw new BundleError('corrupt bundle: string table out of order');
  }
  if ((strOffsets[strCount] as number) > strBytes) throw new BundleError('corrupt bundle: string table exceeds its bytes');
  const nodes = (u32[Section.NodeParent] as Uint32Array).length;
  expectLength('node labels', (u32[Section.NodeLabel] as Uint32Array).length, nodes);
  expectLength('node refs', (u32[Section.NodeRef] as Uint32Array).length, nodes);
  expectLength('node flags', (u8[Section.NodeFlags] as Uint8Array).length, nodes);
  for (const s of [Section.RsFlags]) expectLength('ruleset flags', (u8[s] as Uint8Array).length, n);
  for (const s of [Section.RsName, Section.RsNote, Section.RsPlatform]) expectLength('ruleset strings', (u32[s] as Uint32Array).length, n);
  const ranges: [Section, Section][] = [
    [Section.RsRuleStart, Section.RuleFrom],
    [Section.RsExclStart, Section.ExclPattern],
    [Section.RsCookieStart, Section.CookieHost],
    [Section.RsTargetStart, Section.TargetNode],
  ];
  for (const [startSection, itemSection] of ranges) {
    const starts = u32[startSection] as Uint32Array;
    expectLength('ruleset ranges', starts.length, n + 1);
    const items = (u32[itemSection] as Uint32Array).length;
    for (let i = 0; i < n; i++) {
      if ((starts[i] as number) > (starts[i + 1] as number)) throw new BundleError('corrupt bundle: ruleset ranges out of order');
    }
    if ((starts[n] as number) !== items) throw new BundleError('corrupt bundle: ruleset ranges do not cover their items');
  }
  const rules = (u32[Section.RuleFrom] as Uint32Array).length;
  expectLength('rule targets', (u32[Section.RuleTo] as Uint32Array).length, rules);
  expectLength('rule kinds', (u8[Section.RuleKind] as Uint8Array).length, rules);
  expectLength('rule prefixes', (u32[Section.RulePrefix] as Uint32Array).length, rules);
  expectLength('exclusion prefixes', (u32[Section.ExclPrefix] as Uint32Array).length, (u32[Section.ExclPattern] as Uint32Array).length);
  expectLength('cookie names', (u32[Section.CookieName] as Uint32Array).length, (u32[Section.CookieHost] as Uint32Array).length);
  const stringRefs = [Section.NodeLabel, Section.RsName, Section.RsNote, Section.RsPlatform, Section.RuleFrom, Section.RuleTo, Section.RulePrefix, Section.ExclPattern, Section.ExclPrefix, Section.CookieHost, Section.CookieName];
  for (const s of stringRefs) {
    const refs = u32[s] as Uint32Array;
    for (let i = 0; i < refs.length; i++) {
      const r = refs[i] as number;
      if (r !== 0xffffffff && r >= strCount) throw new BundleError(`corrupt bundle: string reference ${r} out of range`);
    }
  }
  const parents = u32[Section.NodeParent] as Uint32Array;
  for (let i = 1; i < nodes; i++) if ((parents[i] as number) >= i) throw new BundleError('corrupt bundle: node parent out of order');
  const slots = u32[Section.Slots] as Uint32Array;
  if (slots.length === 0 || (slots.length & (slots.length - 1)) !== 0 || slots.length < nodes) throw new BundleError('corrupt bundle: host table size');
  for (let i = 0; i < slots.length; i++) if ((slots[i] as number) >= nodes) throw new BundleError('corrupt bundle: host table entry out of range');
  const refList = u32[Section.RefList] as Uint32Array;
  const refs = u32[Section.NodeRef] as Uint32Array;
  for (let i = 0; i < nodes; i++) {
    const r = refs[i] as number;
    if (r === 0) continue;
    if (r & 0x80000000) {
      const at = r & 0x7fffffff;
      const count = refList[at];
      if (count === undefined || at + count >= refList.length) throw new BundleError('corrupt bundle: ruleset list out of range');
      for (let k = 1; k <= count; k++) if ((refList[at + k] as number) >= n) throw new BundleError('corrupt bundle: ruleset id out of range');
    } else if (r - 1 >= n) {
      throw new BundleError('corrupt bundle: ruleset id out of range');
    }
  }
  const targets = u32[Section.TargetNode] as Uint32Array;
  for (let i = 0; i < targets.length; i++) if ((targets[i] as number) >= nodes) throw new BundleError('corrupt bundle: target node out of range');
}
