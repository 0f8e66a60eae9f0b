import { isTrivialRule, type Ruleset } from '../model/ruleset.js';
import { literalPrefix } from '../regex/literal-prefix.js';
import {
  checksum,
  FORMAT_VERSION,
  HEADER_BYTES,
  hashStep,
  LABEL_HASH_SEED,
  MAGIC,
  NODE_BITS_OFFSET,
  NODE_LABEL,
  NODE_LABEL_ID_MASK,
  NODE_LABEL_LONG,
  NODE_PARENT,
  NODE_REF,
  NODE_STAR_BIT,
  NODE_STRIDE,
  NONE,
  REF_LIST_BIT,
  RuleKind,
  RulesetFlag,
  Section,
  SECTION_ELEMENT_BYTES,
  slotHash,
} from './format.js';

export interface CompileOptions {
  /** Unix seconds recorded in the header (update channels compare it); default 0. */
  timestamp?: number;
}

/**
 * Deduplicating string pool: each string is its varint byte length then its UTF-8 bytes, and a
 * string's id is its byte offset, so no offsets table is needed. Strings are laid out in
 * first-use order, so output is deterministic.
 */
class StringTable {
  private readonly ids = new Map<string, number>();
  private readonly parts: Uint8Array[] = [];
  private size = 0;
  private readonly encoder = new TextEncoder();
  id(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.size;
      const bytes = this.encoder.encode(s);
      const header: number[] = [];
      let n = bytes.length;
      while (n >= 0x80) {
        header.push((n & 0x7f) | 0x80);
        n >>>= 7;
      }
      header.push(n);
      if (header.length > 4) throw new Error(`string of ${bytes.length} bytes is too long for a bundle`);
      this.parts.push(Uint8Array.from(header), bytes);
      this.size += header.length + bytes.length;
      this.ids.set(s, id);
    }
    return id;
  }
  encode(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

interface TrieNode {
  parent: number;
  label: string;
  rulesets: number[];
  hasStarChild: boolean;
}

/** A rule is a plain prefix swap when its `from` is `^` + a literal and its `to` has no `$` pattern. */
function isLiteralRule(from: string, to: string): boolean {
  const lit = literalPrefix(from);
  return lit !== null && lit.whole && !to.includes('$');
}

function labelHash(parent: number, label: string): number {
  let h = LABEL_HASH_SEED;
  for (let i = 0; i < label.length; i++) h = hashStep(h, label.charCodeAt(i));
  return slotHash(h, parent);
}

/**
 * Compiles rulesets (already parsed and vetted) into a bundle. Rulesets keep the given order,
 * which is the order candidates are tried in when several share a target.
 */
export function compileBundle(rulesets: readonly Ruleset[], options: CompileOptions = {}): Uint8Array {
  const strings = new StringTable();
  const nodes: TrieNode[] = [{ parent: NONE, label: '', rulesets: [], hasStarChild: false }];
  const childIndex = new Map<string, number>();

  const child = (parent: number, label: string): number => {
    const key = `${parent}\u0000${label}`;
    let id = childIndex.get(key);
    if (id === undefined) {
      id = nodes.length;
      nodes.push({ parent, label, rulesets: [], hasStarChild: false });
      childIndex.set(key, id);
      if (label === '*') (nodes[parent] as TrieNode).hasStarChild = true;
    }
    return id;
  };

  const n = rulesets.length;
  const rsFlags = new Uint8Array(n);
  const rsName = new Uint32Array(n);
  const rsNote = new Uint32Array(n);
  const rsPlatform = new Uint32Array(n);
  const rsRuleStart = new Uint32Array(n + 1);
  const rsExclStart = new Uint32Array(n + 1);
  const rsCookieStart = new Uint32Array(n + 1);
  const ruleFrom: number[] = [];
  const ruleTo: number[] = [];
  const ruleKind: number[] = [];
  const exclPattern: number[] = [];
  const cookieHost: number[] = [];
  const cookieName: number[] = [];

  rulesets.forEach((rs, id) => {
    rsName[id] = strings.id(rs.name);
    rsNote[id] = rs.defaultOff === undefined ? NONE : strings.id(rs.defaultOff);
    rsPlatform[id] = rs.platform === undefined ? NONE : strings.id(rs.platform);
    let flags = 0;
    if (rs.defaultOff === undefined && rs.platform === undefined) flags |= RulesetFlag.DefaultOn;
    if (rs.defaultOff === undefined && rs.platform === 'mixedcontent') flags |= RulesetFlag.MixedContent;
    if (rs.rules.length === 1 && isTrivialRule(rs.rules[0] as Ruleset['rules'][number]) && rs.exclusions.length === 0) flags |= RulesetFlag.TrivialOnly;
    rsFlags[id] = flags;

    rsRuleStart[id] = ruleFrom.length;
    for (const rule of rs.rules) {
      ruleFrom.push(strings.id(rule.from));
      ruleTo.push(strings.id(rule.to));
      ruleKind.push(isTrivialRule(rule) ? RuleKind.Trivial : isLiteralRule(rule.from, rule.to) ? RuleKind.Literal : RuleKind.General);
    }
    rsExclStart[id] = exclPattern.length;
    for (const exclusion of rs.exclusions) {
      exclPattern.push(strings.id(exclusion.pattern));
    }
    rsCookieStart[id] = cookieHost.length;
    for (const cookie of rs.secureCookies) {
      cookieHost.push(strings.id(cookie.host));
      cookieName.push(strings.id(cookie.name));
    }
    for (const target of rs.targets) {
      // Reversed labels: www.example.com is com → example → www.
      const labels = target.host.split('.');
      let node = 0;
      for (let i = labels.length - 1; i >= 0; i--) node = child(node, labels[i] as string);
      const list = (nodes[node] as TrieNode).rulesets;
      if (list[list.length - 1] !== id) list.push(id);
    }
  });
  rsRuleStart[n] = ruleFrom.length;
  rsExclStart[n] = exclPattern.length;
  rsCookieStart[n] = cookieHost.length;

  // Node arrays and the open-addressing table. Load factor <= 0.7; each slot carries a hash tag
  // above the node index, so most probes that miss are rejected without touching the nodes.
  const nodeCount = nodes.length;
  let slotCount = 16;
  while (slotCount * 0.7 < nodeCount) slotCount *= 2;
  const mask = slotCount - 1;
  let nodeBits = 1;
  while (1 << nodeBits < nodeCount) nodeBits++;
  if (nodeBits > 28) throw new Error(`${nodeCount} host index nodes do not fit a bundle`);
  const slots = new Uint32Array(slotCount);
  const records = new Uint32Array(nodeCount * NODE_STRIDE);
  const refList: number[] = [];
  const encoder = new TextEncoder();
  // Labels go first in the string pool, so their ids stay small.
  for (const node of nodes) if (node.label !== '') strings.id(node.label);
  nodes.forEach((node, id) => {
    const at = id * NODE_STRIDE;
    records[at + NODE_PARENT] = node.parent;
    if (id > 0) {
      const labelId = strings.id(node.label);
      if (labelId > NODE_LABEL_ID_MASK) throw new Error('host labels exceed the 16 MiB a bundle can index');
      const length = Math.min(encoder.encode(node.label).length, NODE_LABEL_LONG);
      records[at + NODE_LABEL] = ((length << 24) | labelId | (node.hasStarChild ? NODE_STAR_BIT : 0)) >>> 0;
    } else if (node.hasStarChild) {
      records[at + NODE_LABEL] = NODE_STAR_BIT;
    }
    if (node.rulesets.length === 1) {
      records[at + NODE_REF] = (node.rulesets[0] as number) + 1;
    } else if (node.rulesets.length > 1) {
      records[at + NODE_REF] = (REF_LIST_BIT | refList.length) >>> 0;
      refList.push(node.rulesets.length, ...node.rulesets);
    }
    if (id === 0) return;
    const h = labelHash(node.parent, node.label);
    let slot = h & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = (((h >>> nodeBits) << nodeBits) | id) >>> 0;
  });

  const sections: ArrayBufferView[] = [];
  sections[Section.StrBytes] = strings.encode();
  sections[Section.Slots] = slots;
  sections[Section.Nodes] = records;
  sections[Section.RefList] = Uint32Array.from(refList);
  sections[Section.RsFlags] = rsFlags;
  sections[Section.RsName] = rsName;
  sections[Section.RsNote] = rsNote;
  sections[Section.RsPlatform] = rsPlatform;
  sections[Section.RsRuleStart] = rsRuleStart;
  sections[Section.RsExclStart] = rsExclStart;
  sections[Section.RsCookieStart] = rsCookieStart;
  sections[Section.RuleFrom] = Uint32Array.from(ruleFrom);
  sections[Section.RuleTo] = Uint32Array.from(ruleTo);
  sections[Section.RuleKind] = Uint8Array.from(ruleKind);
  sections[Section.ExclPattern] = Uint32Array.from(exclPattern);
  sections[Section.CookieHost] = Uint32Array.from(cookieHost);
  sections[Section.CookieName] = Uint32Array.from(cookieName);
  return assemble(sections, options.timestamp ?? 0, n, nodeBits);
}

const align4 = (x: number): number => (x + 3) & ~3;

function assemble(sections: ArrayBufferView[], timestamp: number, rulesetCount: number, nodeBits: number): Uint8Array {
  const directoryBytes = Section.Count * 8;
  let offset = HEADER_BYTES + directoryBytes;
  const placed = sections.map((s, i) => {
    if (s.byteLength % (SECTION_ELEMENT_BYTES[i] as number) !== 0) throw new Error(`section ${i} has a partial element`);
    const at = offset;
    offset = align4(offset + s.byteLength);
    return at;
  });
  const total = offset;
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < MAGIC.length; i++) bytes[i] = MAGIC.charCodeAt(i);
  view.setUint32(8, FORMAT_VERSION, true);
  view.setUint32(12, total, true);
  view.setFloat64(16, timestamp, true);
  view.setUint32(24, rulesetCount, true);
  view.setUint32(28, Section.Count, true);
  view.setUint32(NODE_BITS_OFFSET, nodeBits, true);
  sections.forEach((s, i) => {
    view.setUint32(HEADER_BYTES + i * 8, placed[i] as number, true);
    view.setUint32(HEADER_BYTES + i * 8 + 4, s.byteLength, true);
    bytes.set(new Uint8Array(s.buffer, s.byteOffset, s.byteLength), placed[i] as number);
  });
  view.setUint32(32, checksum(bytes, HEADER_BYTES), true);
  return bytes;
}
