/**
 * compileBundle: rulesets in, bundle bytes out. Each family of sections has its writer beside its
 * reader (ruleset-columns.ts, pool.ts, host-trie.ts, ruleset-refs.ts, pattern-verdicts.ts, the
 * packed columns in format.ts); this module orders them into the bundle's sections and lays
 * those out behind the header and directory that read.ts reads.
 */
import type { Ruleset } from '../model/ruleset.js';
import {
  CHECKSUM_OFFSET,
  checksum,
  FORMAT_VERSION,
  HEADER_BYTES,
  MAGIC,
  Section,
  SECTION_ELEMENT_BYTES,
  writePackedColumns,
} from './format.js';
import { HostTrie, writeHostTrie } from './host-trie.js';
import { patternVerdicts } from './pattern-verdicts.js';
import { writeColdStrings } from './pool.js';
import { STRING_COLUMNS, writeRulesetColumns } from './ruleset-columns.js';

export interface CompileOptions {
  /** Unix seconds recorded in the header (update channels compare it); default 0. */
  timestamp?: number;
  /**
   * Work out the regex door's verdict on every pattern that needs a regex and store it (the
   * PatternVerdict column), so that a loader trusting this build skips the analysis. Costs
   * about a second on the full corpus and 16 KB; only the extension's own build asks for it.
   * Default false.
   */
  regexVerdicts?: boolean;
}

/**
 * Compiles rulesets (already parsed and vetted) into a bundle. Rulesets keep the given order,
 * which is the order candidates are tried in when several share a target.
 */
export function compileBundle(
  rulesets: readonly Ruleset[],
  options: CompileOptions = {},
): Uint8Array {
  const n = rulesets.length;
  const { columns, strings } = writeRulesetColumns(rulesets);
  // Cold strings: dictionary-coded; the dense indexes of the string columns become byte offsets.
  const cold = writeColdStrings(strings);
  const columnValues: ArrayLike<number>[] = columns;
  for (const s of STRING_COLUMNS)
    columnValues[s] = Uint32Array.from(columns[s] as number[], (i) => cold.offsets[i] as number);
  columnValues[Section.PatternVerdict] =
    options.regexVerdicts === true ? patternVerdicts(rulesets) : [];

  const trie = new HostTrie();
  rulesets.forEach((rs, id) => {
    // Each target once, in sorted order: the bytes then depend only on each ruleset's set of
    // targets, so compiling the rulesets a bundle decodes to gives that bundle again (a channel
    // delta rebuilds a release so, and checks it against the signed digest).
    for (const host of [...new Set(rs.targets.map((t) => t.host))].sort()) trie.add(host, id);
  });
  const hosts = writeHostTrie(trie, n);
  columnValues[Section.NodeRef] = hosts.nodeRef;

  const packed = writePackedColumns(columnValues);
  const sections: ArrayBufferView[] = packed.sections;
  sections[Section.Layout] = Uint32Array.from([...hosts.layoutWords, ...packed.layoutWords]);
  sections[Section.Labels] = hosts.labels;
  sections[Section.LabelDictionary] = hosts.labelDictionary;
  sections[Section.ChildCounts] = hosts.childCounts;
  sections[Section.Nodes] = hosts.nodes;
  sections[Section.NodeIndex] = hosts.nodeIndex;
  sections[Section.RefList] = hosts.refList;
  sections[Section.Dictionary] = cold.dictionary;
  sections[Section.StrBytes] = cold.bytes;
  return assemble(sections, options.timestamp ?? 0, n);
}

const align4 = (x: number): number => (x + 3) & ~3;

/**
 * Where sections of these byte lengths go, in Section order, each 4-byte aligned after the
 * header and directory, and the bundle's whole length: assemble writes exactly so much.
 */
export function placeSections(byteLengths: readonly number[]): {
  offsets: number[];
  total: number;
} {
  let offset = HEADER_BYTES + Section.Count * 8;
  const offsets = byteLengths.map((length) => {
    const at = offset;
    offset = align4(offset + length);
    return at;
  });
  return { offsets, total: offset };
}

/** The bundle of `sections` (indexed by Section) behind its header and directory. */
export function assemble(
  sections: readonly ArrayBufferView[],
  timestamp: number,
  rulesetCount: number,
): Uint8Array {
  sections.forEach((s, i) => {
    if (s.byteLength % (SECTION_ELEMENT_BYTES[i] as number) !== 0)
      throw new Error(`section ${i} has a partial element`);
  });
  const { offsets: placed, total } = placeSections(sections.map((s) => s.byteLength));
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < MAGIC.length; i++) bytes[i] = MAGIC.charCodeAt(i);
  view.setUint32(8, FORMAT_VERSION, true);
  view.setUint32(12, total, true);
  view.setFloat64(16, timestamp, true);
  view.setUint32(24, rulesetCount, true);
  view.setUint32(28, Section.Count, true);
  sections.forEach((s, i) => {
    view.setUint32(HEADER_BYTES + i * 8, placed[i] as number, true);
    view.setUint32(HEADER_BYTES + i * 8 + 4, s.byteLength, true);
    bytes.set(new Uint8Array(s.buffer, s.byteOffset, s.byteLength), placed[i] as number);
  });
  view.setUint32(CHECKSUM_OFFSET, checksum(bytes), true);
  return bytes;
}
