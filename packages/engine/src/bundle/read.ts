import { checksum, FORMAT_VERSION, HEADER_BYTES, MAGIC, NODE_BITS_OFFSET, NODE_PARENT, NODE_REF, NODE_STRIDE, Section, SECTION_ELEMENT_BYTES } from './format.js';

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
  /** Low bits of a host-table slot that hold the node index (the rest is a hash tag). */
  nodeBits: number;
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
 * How much of a bundle to check before use. `full` (the default) verifies the checksum and every
 * cross-reference: right for a file from disk. `trusted` checks the header and section bounds
 * only, for bytes whose integrity is already established (shipped inside the extension package,
 * or an update-channel bundle whose signature was verified), so loading stays O(1).
 */
export type BundleVerification = 'full' | 'trusted';

/**
 * Validates the bundle (header and section bounds; with `full`, also checksum and the
 * cross-references the matcher relies on) and returns typed-array views over it: no copy.
 */
export function readBundleSections(input: Uint8Array, verify: BundleVerification = 'full'): BundleSections {
  const header = readBundleHeader(input);
  // Typed views need 4-byte alignment; a Buffer slice from a pool may not have it.
  const bytes = input.byteOffset % 4 === 0 ? input : input.slice();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sectionCount = view.getUint32(28, true);
  if (sectionCount !== Section.Count) throw new BundleError(`corrupt bundle: ${sectionCount} sections, expected ${Section.Count}`);
  if (HEADER_BYTES + sectionCount * 8 > bytes.length) throw new BundleError('truncated bundle: section directory cut off');
  if (verify === 'full' && view.getUint32(32, true) !== checksum(bytes, HEADER_BYTES)) throw new BundleError('corrupt bundle: checksum mismatch');
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
  const nodeBits = view.getUint32(NODE_BITS_OFFSET, true);
  if (nodeBits < 1 || nodeBits > 28) throw new BundleError(`corrupt bundle: host table node bits ${nodeBits}`);
  if (verify === 'full') checkCrossReferences(header.rulesetCount, nodeBits, u8, u32);
  return { header, nodeBits, u8, u32 };
}

function expectLength(name: string, actual: number, expected: number): void {
  if (actual !== expected) throw new BundleError(`corrupt bundle: ${name} has ${actual} entries, expected ${expected}`);
}

/**
 * Bounds what the matcher follows, so even a crafted bundle with a valid checksum cannot make
 * it loop forever or read a different structure: parents point backwards (host walks end),
 * the host table has an empty slot (probes end), ranges are ordered, ids are in range.
 * Out-of-range string reads cannot escape the typed arrays in JavaScript; they only garble text.
 */
function checkCrossReferences(n: number, nodeBits: number, u8: Uint8Array[], u32: Uint32Array[]): void {
  const records = u32[Section.Nodes] as Uint32Array;
  const nodes = records.length / NODE_STRIDE;
  if (nodes === 0 || !Number.isInteger(nodes) || nodes > 2 ** nodeBits) throw new BundleError('corrupt bundle: host index size');
  expectLength('ruleset flags', (u8[Section.RsFlags] as Uint8Array).length, n);
  for (const s of [Section.RsName, Section.RsNote, Section.RsPlatform]) expectLength('ruleset strings', (u32[s] as Uint32Array).length, n);
  const ranges: [Section, Section][] = [
    [Section.RsRuleStart, Section.RuleFrom],
    [Section.RsExclStart, Section.ExclPattern],
    [Section.RsCookieStart, Section.CookieHost],
  ];
  for (const [startSection, itemSection] of ranges) {
    const starts = u32[startSection] as Uint32Array;
    expectLength('ruleset ranges', starts.length, n + 1);
    let previous = 0;
    for (let i = 0; i <= n; i++) {
      const v = starts[i] as number;
      if (v < previous) throw new BundleError('corrupt bundle: ruleset ranges out of order');
      previous = v;
    }
    if (previous !== (u32[itemSection] as Uint32Array).length) throw new BundleError('corrupt bundle: ruleset ranges do not cover their items');
  }
  const rules = (u32[Section.RuleFrom] as Uint32Array).length;
  expectLength('rule targets', (u32[Section.RuleTo] as Uint32Array).length, rules);
  expectLength('rule kinds', (u8[Section.RuleKind] as Uint8Array).length, rules);
  expectLength('cookie names', (u32[Section.CookieName] as Uint32Array).length, (u32[Section.CookieHost] as Uint32Array).length);
  for (let i = 1; i < nodes; i++) if ((records[i * NODE_STRIDE + NODE_PARENT] as number) >= i) throw new BundleError('corrupt bundle: node parent out of order');
  const slots = u32[Section.Slots] as Uint32Array;
  if (slots.length === 0 || (slots.length & (slots.length - 1)) !== 0) throw new BundleError('corrupt bundle: host table size');
  const nodeMask = nodeBits === 32 ? 0xffffffff : 2 ** nodeBits - 1;
  let used = 0;
  for (let i = 0; i < slots.length; i++) {
    const v = slots[i] as number;
    if (v === 0) continue;
    used++;
    if ((v & nodeMask) >= nodes) throw new BundleError('corrupt bundle: host table entry out of range');
  }
  if (used >= slots.length) throw new BundleError('corrupt bundle: host table has no empty slot');
  const refList = u32[Section.RefList] as Uint32Array;
  for (let i = 0; i < nodes; i++) {
    const r = records[i * NODE_STRIDE + NODE_REF] as number;
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
}
