import {
  checksum,
  CHECKSUM_OFFSET,
  FIRST_PACKED,
  decodeNodes,
  firstChildren,
  nodeIndexLength,
  nodeIndexOf,
  FORMAT_VERSION,
  ghostBase,
  HEADER_BYTES,
  INHERIT_REF,
  MAGIC,
  nodeLayout,
  PACKED_COUNT,
  packedColumns,
  type PackedColumn,
  Section,
  SECTION_ELEMENT_BYTES,
  type NodeLayout,
} from './format.js';
import { blockWords, PackedArray, packedWords } from './packed-array.js';
import { readDictionary } from './string-dictionary.js';

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
  /** Field widths and positions of the host index. */
  layout: NodeLayout;
  u8: Uint8Array[];
  u32: Uint32Array[];
  /** The packed columns (RsFlags through PatternVerdict), indexed by Section. */
  packed: PackedArray[];
}

/** Reads and checks the fixed header; throws BundleError for anything that is not a whole bundle. */
export function readBundleHeader(bytes: Uint8Array): BundleHeader {
  if (bytes.length < HEADER_BYTES)
    throw new BundleError(
      `not a httpsify bundle: ${bytes.length} bytes is shorter than the ${HEADER_BYTES}-byte header`,
    );
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC.charCodeAt(i))
      throw new BundleError('not a httpsify bundle: bad magic bytes');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const formatVersion = view.getUint32(8, true);
  if (formatVersion !== FORMAT_VERSION)
    throw new BundleError(
      `bundle format version ${formatVersion} is not supported (this engine reads version ${FORMAT_VERSION}); recompile the rulesets`,
    );
  const byteLength = view.getUint32(12, true);
  if (bytes.length < byteLength)
    throw new BundleError(`truncated bundle: ${bytes.length} of ${byteLength} bytes`);
  if (bytes.length > byteLength)
    throw new BundleError(
      `corrupt bundle: ${bytes.length - byteLength} unexpected bytes after the end`,
    );
  return {
    formatVersion,
    byteLength,
    timestamp: view.getFloat64(16, true),
    rulesetCount: view.getUint32(24, true),
  };
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
export function readBundleSections(
  input: Uint8Array,
  verify: BundleVerification = 'full',
): BundleSections {
  const header = readBundleHeader(input);
  // Typed views need 4-byte alignment; a Buffer slice from a pool may not have it.
  const bytes = input.byteOffset % 4 === 0 ? input : input.slice();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sectionCount = view.getUint32(28, true);
  if (sectionCount !== Section.Count)
    throw new BundleError(`corrupt bundle: ${sectionCount} sections, expected ${Section.Count}`);
  if (HEADER_BYTES + sectionCount * 8 > bytes.length)
    throw new BundleError('truncated bundle: section directory cut off');
  if (verify === 'full' && view.getUint32(CHECKSUM_OFFSET, true) !== checksum(bytes))
    throw new BundleError('corrupt bundle: checksum mismatch');
  const u8: Uint8Array[] = [];
  const u32: Uint32Array[] = [];
  for (let i = 0; i < sectionCount; i++) {
    const offset = view.getUint32(HEADER_BYTES + i * 8, true);
    const length = view.getUint32(HEADER_BYTES + i * 8 + 4, true);
    const size = SECTION_ELEMENT_BYTES[i] as number;
    if (offset + length > bytes.length || offset % 4 !== 0 || length % size !== 0)
      throw new BundleError(`corrupt bundle: section ${i} lies outside the buffer`);
    if (size === 1) u8[i] = new Uint8Array(bytes.buffer, bytes.byteOffset + offset, length);
    else u32[i] = new Uint32Array(bytes.buffer, bytes.byteOffset + offset, length / 4);
  }
  // Checked even for trusted bytes: O(1), and the matcher's masks come from these widths.
  const layout = nodeLayout(u32[Section.Layout] as Uint32Array);
  if (typeof layout === 'string')
    throw new BundleError(`corrupt bundle: host index layout: ${layout}`);
  expectLength(
    'node index',
    (u32[Section.NodeIndex] as Uint32Array).length,
    nodeIndexLength(layout.nodeCount),
  );
  const columns = packedColumns(u32[Section.Layout] as Uint32Array, header.rulesetCount);
  if (typeof columns === 'string')
    throw new BundleError(`corrupt bundle: column layout: ${columns}`);
  const packed: PackedArray[] = [];
  for (let k = 0; k < PACKED_COUNT; k++) {
    const { count, bits, blocked } = columns[k] as PackedColumn;
    const words = u32[FIRST_PACKED + k] as Uint32Array;
    const bases = blocked ? blockWords(count) : 0;
    // Every index below the count then reads inside the section (a base per block included).
    expectLength(`column ${FIRST_PACKED + k}`, words.length, bases + packedWords(count, bits));
    packed[FIRST_PACKED + k] = new PackedArray(
      words.subarray(bases),
      bits,
      count,
      words.subarray(0, bases),
    );
  }
  if (verify === 'full') checkCrossReferences(header.rulesetCount, layout, u8, u32, packed);
  return { header, layout, u8, u32, packed };
}

function expectLength(name: string, actual: number, expected: number): void {
  if (actual !== expected)
    throw new BundleError(`corrupt bundle: ${name} has ${actual} entries, expected ${expected}`);
}

/**
 * Bounds what the matcher follows, so even a crafted bundle with a valid checksum cannot make
 * it loop forever or read a different structure: the child counts form a breadth-first tree
 * (children after their parent, every node reached once), siblings ascend by label, labels, refs
 * and ranges are in range and ordered. Out-of-range string reads cannot
 * escape the typed arrays in JavaScript; they only garble text.
 */
function checkCrossReferences(
  n: number,
  layout: NodeLayout,
  u8: Uint8Array[],
  u32: Uint32Array[],
  packed: PackedArray[],
): void {
  // Column lengths agree already (packedColumns); here the values the matcher follows.
  for (const owners of [Section.NoteOwner, Section.PlatformOwner]) {
    const ids = packed[owners] as PackedArray;
    // Ascending and in range: the matcher binary-searches them.
    for (let i = 0, previous = -1; i < ids.length; i++) {
      const id = ids.get(i);
      if (id >= n || id <= previous)
        throw new BundleError('corrupt bundle: sparse ruleset ids out of order');
      previous = id;
    }
  }
  const ranges: [Section, Section][] = [
    [Section.RsRuleStart, Section.RuleFrom],
    [Section.RsExclStart, Section.ExclPattern],
    [Section.RsCookieStart, Section.CookieHost],
  ];
  for (const [startSection, itemSection] of ranges) {
    const starts = packed[startSection] as PackedArray;
    let previous = 0;
    for (let i = 0; i <= n; i++) {
      const v = starts.get(i);
      if (v < previous) throw new BundleError('corrupt bundle: ruleset ranges out of order');
      previous = v;
    }
    if (previous !== (packed[itemSection] as PackedArray).length)
      throw new BundleError('corrupt bundle: ruleset ranges do not cover their items');
  }
  checkDictionary(u8[Section.Dictionary] as Uint8Array);
  checkDictionary(u8[Section.LabelDictionary] as Uint8Array);

  // Children start after their parent and the counts cover every node once: a tree whose
  // walks only go down (see firstChildren).
  const first = firstChildren(u8[Section.ChildCounts] as Uint8Array, layout.nodeCount);
  if (typeof first === 'string') throw new BundleError(`corrupt bundle: host index: ${first}`);
  const labels = u8[Section.Labels] as Uint8Array;
  // Label ids in range (an empty label may sit at the very end of the pool), siblings ascending.
  const records = decodeNodes(u8[Section.Nodes] as Uint8Array, first, layout, labels.length);
  if (typeof records === 'string') throw new BundleError(`corrupt bundle: host index: ${records}`);
  // The lazy decoder starts from these entries: each must say what the full decode found.
  const expected = nodeIndexOf(
    u8[Section.ChildCounts] as Uint8Array,
    u8[Section.Nodes] as Uint8Array,
    layout.nodeCount,
    (i) => (records[i] as number) & layout.labelMask,
  );
  const stored = u32[Section.NodeIndex] as Uint32Array;
  const wrong = expected.findIndex((v, i) => stored[i] !== v);
  if (wrong >= 0)
    throw new BundleError(
      `corrupt bundle: host index: node index entry ${wrong} says ${stored[wrong]}, expected ${expected[wrong]}`,
    );
  const refList = u32[Section.RefList] as Uint32Array;
  const refs = packed[Section.NodeRef] as PackedArray;
  const ghosts = ghostBase(n, refList.length);
  for (let r = 0; r < layout.nodeCount; r++) {
    // Own refs are stored one above, ghosts ghostBase above (see Section.NodeRef).
    const stored = refs.get(r);
    if (stored >= 2 * ghosts) throw new BundleError('corrupt bundle: ruleset ref out of range');
    const ref = stored <= INHERIT_REF ? 0 : stored <= ghosts ? stored - 1 : stored - ghosts;
    if (ref > n) {
      const firstRef = ref - n - 1;
      const count = refList[firstRef];
      if (count === undefined || firstRef + count >= refList.length)
        throw new BundleError('corrupt bundle: ruleset list out of range');
      for (let k = 1; k <= count; k++)
        if ((refList[firstRef + k] as number) >= n)
          throw new BundleError('corrupt bundle: ruleset id out of range');
    }
  }
}

function checkDictionary(section: Uint8Array): (Uint8Array | undefined)[] {
  const table = readDictionary(section);
  if (typeof table === 'string')
    throw new BundleError(`corrupt bundle: string dictionary: ${table}`);
  return table;
}
