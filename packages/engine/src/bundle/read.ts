import {
  checksum,
  CHECKSUM_OFFSET,
  FIRST_PACKED,
  nodeIndexLength,
  FORMAT_VERSION,
  HEADER_BYTES,
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
import { checkHostTrie } from './host-trie.js';
import { checkRulesetColumns } from './ruleset-columns.js';
import { checkRulesetRefs } from './ruleset-refs.js';
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
  const packed = readPackedColumns(u32, header.rulesetCount);
  if (verify === 'full') checkCrossReferences(header.rulesetCount, layout, u8, u32, packed);
  return { header, layout, u8, u32, packed };
}

/**
 * The packed columns (RsFlags through NodeRef, indexed by Section) as the Layout section's
 * column table describes them, each checked to fill its section exactly: so every index below a
 * column's count reads inside it (a base per block included). O(1): even trusted bytes get it.
 */
export function readPackedColumns(
  u32: readonly Uint32Array[],
  rulesetCount: number,
): PackedArray[] {
  const columns = packedColumns(u32[Section.Layout] as Uint32Array, rulesetCount);
  if (typeof columns === 'string')
    throw new BundleError(`corrupt bundle: column layout: ${columns}`);
  const packed: PackedArray[] = [];
  for (let k = 0; k < PACKED_COUNT; k++) {
    const { count, bits, blocked } = columns[k] as PackedColumn;
    const words = u32[FIRST_PACKED + k] as Uint32Array;
    const bases = blocked ? blockWords(count) : 0;
    expectLength(`column ${FIRST_PACKED + k}`, words.length, bases + packedWords(count, bits));
    packed[FIRST_PACKED + k] = new PackedArray(
      words.subarray(bases),
      bits,
      count,
      words.subarray(0, bases),
    );
  }
  return packed;
}

function expectLength(name: string, actual: number, expected: number): void {
  if (actual !== expected)
    throw new BundleError(`corrupt bundle: ${name} has ${actual} entries, expected ${expected}`);
}

/**
 * Bounds what the matcher follows, so even a crafted bundle with a valid checksum cannot make
 * it loop forever or read a different structure: each family checks its own sections (the
 * ruleset columns, the host trie, the ruleset refs; dictionaries are well-formed). Out-of-range
 * string reads cannot escape the typed arrays in JavaScript; they only garble text.
 */
function checkCrossReferences(
  n: number,
  layout: NodeLayout,
  u8: Uint8Array[],
  u32: Uint32Array[],
  packed: PackedArray[],
): void {
  // Column lengths agree already (packedColumns); here the values the matcher follows.
  const columns = checkRulesetColumns(n, packed);
  if (columns !== null) throw new BundleError(`corrupt bundle: ${columns}`);
  checkDictionary(u8[Section.Dictionary] as Uint8Array);
  checkDictionary(u8[Section.LabelDictionary] as Uint8Array);
  const trie = checkHostTrie(
    layout,
    u8[Section.ChildCounts] as Uint8Array,
    u8[Section.Nodes] as Uint8Array,
    u8[Section.Labels] as Uint8Array,
    u32[Section.NodeIndex] as Uint32Array,
  );
  if (trie !== null) throw new BundleError(`corrupt bundle: host index: ${trie}`);
  const refs = checkRulesetRefs(
    n,
    packed[Section.NodeRef] as PackedArray,
    layout.nodeCount,
    u32[Section.RefList] as Uint32Array,
  );
  if (refs !== null) throw new BundleError(`corrupt bundle: ${refs}`);
}

function checkDictionary(section: Uint8Array): (Uint8Array | undefined)[] {
  const table = readDictionary(section);
  if (typeof table === 'string')
    throw new BundleError(`corrupt bundle: string dictionary: ${table}`);
  return table;
}
