import { isTrivialRule, type Ruleset } from '../model/ruleset.js';
import { literalPrefix, type LiteralPrefix } from '../regex/literal-prefix.js';
import {
  checksum,
  FORMAT_VERSION,
  HEADER_BYTES,
  hashFinish,
  hashSeed,
  hashStep,
  MAGIC,
  NodeFlag,
  NONE,
  REF_LIST_BIT,
  RuleKind,
  RulesetFlag,
  Section,
  SECTION_ELEMENT_BYTES,
} from './format.js';

export interface CompileOptions {
  /** Unix seconds recorded in the header (update channels compare it); default 0. */
  timestamp?: number;
}

/** Deduplicating string table; ids are assigned in first-use order, so output is deterministic. */
class StringTable {
  private readonly ids = new Map<string, number>();
  readonly strings: string[] = [];
  id(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.strings.length;
      this.ids.set(s, id);
      this.strings.push(s);
    }
    return id;
  }
  encode(): { bytes: Uint8Array; offsets: Uint32Array } {
    const encoder = new TextEncoder();
    const parts = this.strings.map((s) => encoder.encode(s));
    const offsets = new Uint32Array(parts.length + 1);
    let total = 0;
    parts.forEach((p, i) => {
      offsets[i] = total;
      total += p.length;
    });
    offsets[parts.length] = total;
    const bytes = new Uint8Array(total);
    parts.forEach((p, i) => bytes.set(p, offsets[i] as number));
    return { bytes, offsets };
  }
}

interface TrieNode {
  parent: number;
  label: string;
  rulesets: number[];
  hasStarChild: boolean;
}

/** The matcher compares prefixes byte-for-char, so a prefix is cut before its first non-ASCII character. */
function asciiPrefix(source: string): LiteralPrefix | null {
  const lit = literalPrefix(source);
  if (lit === null) return null;
  const cut = lit.prefix.search(/[^\x00-\x7f]/);
  if (cut === -1) return lit;
  return cut === 0 ? null : { prefix: lit.prefix.slice(0, cut), whole: false };
}

function labelHash(parent: number, label: string): number {
  let h = hashSeed(parent);
  for (let i = 0; i < label.length; i++) h = hashStep(h, label.charCodeAt(i));
  return hashFinish(h);
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
  const rsTargetStart = new Uint32Array(n + 1);
  const ruleFrom: number[] = [];
  const ruleTo: number[] = [];
  const ruleKind: number[] = [];
  const rulePrefix: number[] = [];
  const exclPattern: number[] = [];
  const exclPrefix: number[] = [];
  const cookieHost: number[] = [];
  const cookieName: number[] = [];
  const targetNode: number[] = [];

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
      const lit = asciiPrefix(rule.from);
      if (isTrivialRule(rule)) {
        ruleKind.push(RuleKind.Trivial);
      } else if (lit !== null && lit.whole && !rule.to.includes('$')) {
        ruleKind.push(RuleKind.Literal);
      } else {
        ruleKind.push(RuleKind.General);
      }
      rulePrefix.push(lit === null ? NONE : strings.id(lit.prefix));
    }
    rsExclStart[id] = exclPattern.length;
    for (const exclusion of rs.exclusions) {
      exclPattern.push(strings.id(exclusion.pattern));
      const lit = asciiPrefix(exclusion.pattern);
      exclPrefix.push(lit === null ? NONE : strings.id(lit.prefix));
    }
    rsCookieStart[id] = cookieHost.length;
    for (const cookie of rs.secureCookies) {
      cookieHost.push(strings.id(cookie.host));
      cookieName.push(strings.id(cookie.name));
    }
    rsTargetStart[id] = targetNode.length;
    for (const target of rs.targets) {
      // Reversed labels: www.example.com is com → example → www.
      const labels = target.host.split('.');
      let node = 0;
      for (let i = labels.length - 1; i >= 0; i--) node = child(node, labels[i] as string);
      const list = (nodes[node] as TrieNode).rulesets;
      if (list[list.length - 1] !== id) list.push(id);
      targetNode.push(node);
    }
  });
  rsRuleStart[n] = ruleFrom.length;
  rsExclStart[n] = exclPattern.length;
  rsCookieStart[n] = cookieHost.length;
  rsTargetStart[n] = targetNode.length;

  // Node arrays and the open-addressing table (load factor <= 0.5 keeps probe chains short).
  const nodeCount = nodes.length;
  let slotCount = 16;
  while (slotCount < nodeCount * 2) slotCount *= 2;
  const mask = slotCount - 1;
  const slots = new Uint32Array(slotCount);
  const nodeParent = new Uint32Array(nodeCount);
  const nodeLabel = new Uint32Array(nodeCount);
  const nodeRef = new Uint32Array(nodeCount);
  const nodeFlags = new Uint8Array(nodeCount);
  const refList: number[] = [];
  nodes.forEach((node, id) => {
    nodeParent[id] = node.parent;
    nodeLabel[id] = id === 0 ? NONE : strings.id(node.label);
    if (node.hasStarChild) nodeFlags[id] = NodeFlag.HasStarChild;
    if (node.rulesets.length === 1) {
      nodeRef[id] = (node.rulesets[0] as number) + 1;
    } else if (node.rulesets.length > 1) {
      nodeRef[id] = REF_LIST_BIT | refList.length;
      refList.push(node.rulesets.length, ...node.rulesets);
    }
    if (id === 0) return;
    let slot = labelHash(node.parent, node.label) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = id;
  });

  const { bytes: strBytes, offsets: strOffsets } = strings.encode();
  const sections: ArrayBufferView[] = [];
  sections[Section.StrBytes] = strBytes;
  sections[Section.StrOffsets] = strOffsets;
  sections[Section.Slots] = slots;
  sections[Section.NodeParent] = nodeParent;
  sections[Section.NodeLabel] = nodeLabel;
  sections[Section.NodeRef] = nodeRef;
  sections[Section.NodeFlags] = nodeFlags;
  sections[Section.RefList] = Uint32Array.from(refList);
  sections[Section.RsFlags] = rsFlags;
  sections[Section.RsName] = rsName;
  sections[Section.RsNote] = rsNote;
  sections[Section.RsPlatform] = rsPlatform;
  sections[Section.RsRuleStart] = rsRuleStart;
  sections[Section.RsExclStart] = rsExclStart;
  sections[Section.RsCookieStart] = rsCookieStart;
  sections[Section.RsTargetStart] = rsTargetStart;
  sections[Section.RuleFrom] = Uint32Array.from(ruleFrom);
  sections[Section.RuleTo] = Uint32Array.from(ruleTo);
  sections[Section.RuleKind] = Uint8Array.from(ruleKind);
  sections[Section.RulePrefix] = Uint32Array.from(rulePrefix);
  sections[Section.ExclPattern] = Uint32Array.from(exclPattern);
  sections[Section.ExclPrefix] = Uint32Array.from(exclPrefix);
  sections[Section.CookieHost] = Uint32Array.from(cookieHost);
  sections[Section.CookieName] = Uint32Array.from(cookieName);
  sections[Section.TargetNode] = Uint32Array.from(targetNode);
  return assemble(sections, options.timestamp ?? 0, n);
}

const align4 = (x: number): number => (x + 3) & ~3;

function assemble(sections: ArrayBufferView[], timestamp: number, rulesetCount: number): Uint8Array {
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
  sections.forEach((s, i) => {
    view.setUint32(HEADER_BYTES + i * 8, placed[i] as number, true);
    view.setUint32(HEADER_BYTES + i * 8 + 4, s.byteLength, true);
    bytes.set(new Uint8Array(s.buffer, s.byteOffset, s.byteLength), placed[i] as number);
  });
  view.setUint32(32, checksum(bytes, HEADER_BYTES), true);
  return bytes;
}
