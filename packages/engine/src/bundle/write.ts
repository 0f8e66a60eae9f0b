import { isTrivialRule, type Ruleset } from '../model/ruleset.js';
import { isLiteralRule } from '../regex/prepared-pattern.js';
import {
  bitsFor,
  checksum,
  CHECKSUM_OFFSET,
  FORMAT_VERSION,
  HEADER_BYTES,
  ghostBase,
  INHERIT_REF,
  MAGIC,
  MAX_LENGTH_BITS,
  NODE_STAR,
  nodeIndexOf,
  nodeLayout,
  type NodeLayout,
  RuleKind,
  RulesetFlag,
  Section,
  SECTION_ELEMENT_BYTES,
  FIRST_PACKED,
  PACKED_COUNT,
} from './format.js';
import { packColumn } from './packed-array.js';
import { patternVerdicts } from './pattern-verdicts.js';
import { codeStrings } from './string-dictionary.js';

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

function varint(n: number): number[] {
  const header: number[] = [];
  while (n >= 0x80) {
    header.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  header.push(n);
  if (header.length > 4) throw new Error(`string of ${n} bytes is too long for a bundle`);
  return header;
}

/**
 * Lays out byte strings as varint length + bytes (only those with `headed(i)`, by default all);
 * returns the pool and each string's offset.
 */
function pool(
  strings: readonly Uint8Array[],
  headed: (i: number) => boolean = () => true,
): { bytes: Uint8Array; offsets: number[] } {
  const headers = strings.map((s, i) => (headed(i) ? varint(s.length) : []));
  let size = 0;
  for (let i = 0; i < strings.length; i++)
    size += (headers[i] as number[]).length + (strings[i] as Uint8Array).length;
  const bytes = new Uint8Array(size);
  const offsets: number[] = [];
  let at = 0;
  strings.forEach((s, i) => {
    offsets.push(at);
    bytes.set(headers[i] as number[], at);
    at += (headers[i] as number[]).length;
    bytes.set(s, at);
    at += s.length;
  });
  return { bytes, offsets };
}

/**
 * Deduplicating string table: hands out dense indexes in first-use order (so output is
 * deterministic); the final ids are byte offsets, known once the whole pool is laid out.
 */
class StringTable {
  private readonly ids = new Map<string, number>();
  readonly strings: string[] = [];
  id(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.strings.length;
      this.strings.push(s);
      this.ids.set(s, id);
    }
    return id;
  }
}

interface TrieNode {
  parent: number;
  label: string;
  rulesets: number[];
  hasStarChild: boolean;
}

/**
 * Compiles rulesets (already parsed and vetted) into a bundle. Rulesets keep the given order,
 * which is the order candidates are tried in when several share a target.
 */
export function compileBundle(
  rulesets: readonly Ruleset[],
  options: CompileOptions = {},
): Uint8Array {
  const strings = new StringTable();
  // Node 0 is the root (breadth-first order keeps it first).
  const nodes: TrieNode[] = [{ parent: -1, label: '', rulesets: [], hasStarChild: false }];
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
  const noteOwner: number[] = [];
  const note: number[] = [];
  const platformOwner: number[] = [];
  const platform: number[] = [];
  const rsRuleStart = new Uint32Array(n + 1);
  const rsExclStart = new Uint32Array(n + 1);
  const rsCookieStart = new Uint32Array(n + 1);
  const ruleFrom: number[] = [];
  const ruleTo: number[] = [];
  const ruleKind: number[] = [];
  const exclPattern: number[] = [];
  const cookieHost: number[] = [];
  const cookieName: number[] = [];

  // Cold strings are laid out in first-use order and every column is as wide as its largest
  // offset, so intern the columns with few distinct strings first (narrow offsets for them);
  // the ruleset names, one per ruleset, come last.
  for (const rs of rulesets) if (rs.platform !== undefined) strings.id(rs.platform);
  for (const rs of rulesets) if (rs.defaultOff !== undefined) strings.id(rs.defaultOff);
  for (const rs of rulesets) {
    for (const cookie of rs.secureCookies) {
      strings.id(cookie.host);
      strings.id(cookie.name);
    }
  }
  for (const rs of rulesets) for (const exclusion of rs.exclusions) strings.id(exclusion.pattern);
  for (const rs of rulesets) {
    for (const rule of rs.rules) {
      strings.id(rule.from);
      strings.id(rule.to);
    }
  }
  rulesets.forEach((rs, id) => {
    rsName[id] = strings.id(rs.name);
    if (rs.defaultOff !== undefined) {
      noteOwner.push(id);
      note.push(strings.id(rs.defaultOff));
    }
    if (rs.platform !== undefined) {
      platformOwner.push(id);
      platform.push(strings.id(rs.platform));
    }
    let flags = 0;
    if (rs.defaultOff === undefined && rs.platform === undefined) flags |= RulesetFlag.DefaultOn;
    if (rs.defaultOff === undefined && rs.platform === 'mixedcontent')
      flags |= RulesetFlag.MixedContent;
    if (
      rs.rules.length === 1 &&
      isTrivialRule(rs.rules[0] as Ruleset['rules'][number]) &&
      rs.exclusions.length === 0
    )
      flags |= RulesetFlag.TrivialOnly;
    rsFlags[id] = flags;

    rsRuleStart[id] = ruleFrom.length;
    for (const rule of rs.rules) {
      ruleFrom.push(strings.id(rule.from));
      ruleTo.push(strings.id(rule.to));
      ruleKind.push(
        isTrivialRule(rule)
          ? RuleKind.Trivial
          : isLiteralRule(rule.from, rule.to)
            ? RuleKind.Literal
            : RuleKind.General,
      );
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
    // Each target once, in sorted order: the bytes then depend only on each ruleset's set of
    // targets, so compiling the rulesets a bundle decodes to gives that bundle again (a channel
    // delta rebuilds a release so, and checks it against the signed digest).
    for (const host of [...new Set(rs.targets.map((t) => t.host))].sort()) {
      // Reversed labels: www.example.com is com → example → www.
      const labels = host.split('.');
      let node = 0;
      for (let i = labels.length - 1; i >= 0; i--) node = child(node, labels[i] as string);
      const list = (nodes[node] as TrieNode).rulesets;
      if (list[list.length - 1] !== id) list.push(id);
    }
  });
  rsRuleStart[n] = ruleFrom.length;
  rsExclStart[n] = exclPattern.length;
  rsCookieStart[n] = cookieHost.length;
  const verdicts = options.regexVerdicts === true ? patternVerdicts(rulesets) : [];

  // Cold strings: dictionary-coded; the dense indexes handed out above become byte offsets.
  const coded = codeStrings(strings.strings);
  const strPool = pool(coded.coded);
  const toOffset = (ids: ArrayLike<number>): Uint32Array =>
    Uint32Array.from(ids, (i) => strPool.offsets[i] as number);

  // Host labels: deduplicated and sorted (neighbours share prefixes that gzip finds: 18 KB less
  // on the full corpus than first-use order), coded with a dictionary of their own (label text
  // has other repeats than regexes); the matcher compares them while expanding.
  const encoder = new TextEncoder();
  const labelIds = new Map<string, number>();
  const labelStrings = [...new Set(nodes.slice(1).map((node) => node.label))].sort();
  const labelBytes = labelStrings.map((label, i) => {
    labelIds.set(label, i);
    return encoder.encode(label);
  });
  const codedLabels = codeStrings(labelStrings);

  // Breadth-first order: the root, then each node's children sorted by label, so that siblings
  // are contiguous, follow their parent and ascend by label id (the pool is sorted too).
  const childrenOf: number[][] = nodes.map(() => []);
  for (let id = 1; id < nodes.length; id++) childrenOf[(nodes[id] as TrieNode).parent]?.push(id);
  const nodeCount = nodes.length;
  const order: number[] = [0];
  for (let k = 0; k < order.length; k++) {
    const kids = childrenOf[order[k] as number] as number[];
    kids.sort(
      (x, y) =>
        (labelIds.get((nodes[x] as TrieNode).label) as number) -
        (labelIds.get((nodes[y] as TrieNode).label) as number),
    );
    for (const kid of kids) order.push(kid);
  }
  const childCounts: number[] = [];
  for (const id of order)
    for (const b of varint((childrenOf[id] as number[]).length)) childCounts.push(b);

  // Ruleset lists as refs (see Section.NodeRef): one id, or a RefList entry per distinct list.
  const refList: number[] = [];
  const listRefs = new Map<string, number>();
  const refFor = (list: readonly number[]): number => {
    if (list.length === 0) return 0;
    if (list.length === 1) return (list[0] as number) + 1;
    const key = list.join();
    let ref = listRefs.get(key);
    if (ref === undefined) {
      ref = n + 1 + refList.length;
      // Pushed one by one: spreading a long list as arguments overflows the stack.
      refList.push(list.length);
      for (const id of list) refList.push(id);
      listRefs.set(key, ref);
    }
    return ref;
  };
  // A node with no rulesets of its own hands its children a "ghost" list, the one most of them
  // carry (a.example.com, b.example.com under example.com, which is no target), so that they
  // can inherit it; the first of the most common lists, in node order.
  const ghost: (number[] | undefined)[] = new Array<number[] | undefined>(nodes.length);
  {
    const counts = new Map<number, Map<string, number>>();
    for (let id = 1; id < nodes.length; id++) {
      const node = nodes[id] as TrieNode;
      if (
        node.rulesets.length === 0 ||
        node.parent === 0 ||
        (nodes[node.parent] as TrieNode).rulesets.length > 0
      )
        continue;
      const perList = counts.get(node.parent) ?? new Map<string, number>();
      perList.set(node.rulesets.join(), (perList.get(node.rulesets.join()) ?? 0) + 1);
      counts.set(node.parent, perList);
    }
    for (const [parent, perList] of counts) {
      let best = '';
      let most = 1;
      for (const [key, count] of perList) {
        if (count > most) {
          best = key;
          most = count;
        }
      }
      if (most >= 2) ghost[parent] = best.split(',').map(Number);
    }
  }
  const inheritable = (id: number): number[] => {
    const node = nodes[id] as TrieNode;
    return node.rulesets.length > 0 ? node.rulesets : (ghost[id] ?? []);
  };
  const inherits = nodes.map(
    (node, id) =>
      id > 0 &&
      node.rulesets.length > 0 &&
      inheritable(node.parent).join() === node.rulesets.join(),
  );
  const ownRef = nodes.map((node, id) => (inherits[id] === true ? 0 : refFor(node.rulesets)));
  const ghostRef = ghost.map((list) => (list === undefined ? 0 : refFor(list)));
  const ghosts = ghostBase(n, refList.length);
  // A record keeps its label's expanded length, which also says where the coded label ends, so
  // only labels too long for the field (all-ones: "long") carry a varint header in the pool. The
  // field takes what the word has left, up to MAX_LENGTH_BITS; fewer bits mean more headers, a
  // longer pool and maybe a wider label id, so narrow it until the record fits.
  const lengths = labelBytes.map((b) => b.length);
  // Reduced, not spread: a library has tens of thousands of labels, more arguments than a
  // service worker's stack holds (the 2018 library failed to import in Chromium).
  const longest = lengths.reduce((a, b) => Math.max(a, b), 1);
  let lengthBits = Math.min(MAX_LENGTH_BITS, bitsFor(longest + 1));
  let labels: { bytes: Uint8Array; offsets: number[] };
  let layoutWords: number[];
  let layout: NodeLayout | string;
  for (;;) {
    const long = 2 ** lengthBits - 1;
    // The empty label (a host of dots only, `.`) takes its header byte too: with none it would
    // share its id with the next label (`*`), and siblings must ascend.
    labels = pool(codedLabels.coded, (i) => (lengths[i] as number) >= long || lengths[i] === 0);
    // Ids go up to the pool length: an empty label may sit at its very end.
    layoutWords = [nodeCount, bitsFor(Math.max(1, labels.bytes.length)), lengthBits];
    layout = nodeLayout(layoutWords);
    if (typeof layout !== 'string') break;
    if (lengthBits === 0) throw new Error(`host index does not fit a bundle: ${layout}`);
    lengthBits--;
  }
  const nodeRef = new Uint32Array(nodeCount);
  const long = layout.lengthMask;
  // Section.Nodes: a flags-and-length byte per node, then the label ids as sibling rises.
  const nodeBytes: number[] = [];
  const labelOf = new Array<number>(nodeCount);
  order.forEach((id, rank) => {
    const node = nodes[id] as TrieNode;
    // The root's record: an empty label at the pool's start, never compared, and the root's
    // star bit.
    const labelIndex = id === 0 ? -1 : (labelIds.get(node.label) as number);
    const length = labelIndex < 0 ? 0 : Math.min(lengths[labelIndex] as number, long);
    labelOf[rank] = labelIndex < 0 ? 0 : (labels.offsets[labelIndex] as number);
    nodeBytes.push((node.hasStarChild ? NODE_STAR : 0) | length);
    // The same rulesets as the parent hands down: one small repeated value, not a random id.
    const own = ownRef[id] as number;
    const handed = ghostRef[id] ?? 0;
    nodeRef[rank] =
      inherits[id] === true
        ? INHERIT_REF
        : own !== 0
          ? own + 1
          : handed !== 0
            ? handed + ghosts
            : 0;
  });
  for (let rank = 0, next = 1, parent = 0, start = 1; rank < nodeCount; rank++) {
    // A first child (and the root) carries its label whole, a later sibling its rise.
    while (rank >= next && parent < nodeCount) {
      start = next;
      next += (childrenOf[order[parent] as number] as number[]).length;
      parent++;
    }
    const whole = rank === 0 || rank === start;
    for (const b of varint(
      whole ? (labelOf[rank] as number) : (labelOf[rank] as number) - (labelOf[rank - 1] as number),
    ))
      nodeBytes.push(b);
  }

  // Columns: each packed at the width its values need, in blocks with a base each when that is
  // smaller (ascending columns); (count, bits, blocked) go in the Layout.
  const columns: ArrayLike<number>[] = [];
  columns[Section.RsFlags] = rsFlags;
  columns[Section.RsName] = toOffset(rsName);
  columns[Section.NoteOwner] = noteOwner;
  columns[Section.Note] = toOffset(note);
  columns[Section.PlatformOwner] = platformOwner;
  columns[Section.Platform] = toOffset(platform);
  columns[Section.RsRuleStart] = rsRuleStart;
  columns[Section.RsExclStart] = rsExclStart;
  columns[Section.RsCookieStart] = rsCookieStart;
  columns[Section.RuleFrom] = toOffset(ruleFrom);
  columns[Section.RuleTo] = toOffset(ruleTo);
  columns[Section.RuleKind] = ruleKind;
  columns[Section.ExclPattern] = toOffset(exclPattern);
  columns[Section.CookieHost] = toOffset(cookieHost);
  columns[Section.CookieName] = toOffset(cookieName);
  columns[Section.PatternVerdict] = verdicts;
  columns[Section.NodeRef] = nodeRef;

  const sections: ArrayBufferView[] = [];
  for (let k = 0; k < PACKED_COUNT; k++) {
    const values = columns[FIRST_PACKED + k] as ArrayLike<number>;
    const { words, bits, blocked } = packColumn(values);
    layoutWords.push(values.length, bits, blocked ? 1 : 0);
    sections[FIRST_PACKED + k] = words;
  }
  sections[Section.Layout] = Uint32Array.from(layoutWords);
  sections[Section.Labels] = labels.bytes;
  sections[Section.LabelDictionary] = codedLabels.dictionary;
  sections[Section.ChildCounts] = Uint8Array.from(childCounts);
  sections[Section.Nodes] = Uint8Array.from(nodeBytes);
  sections[Section.NodeIndex] = nodeIndexOf(
    childCounts,
    nodeBytes,
    nodeCount,
    (rank) => labelOf[rank] as number,
  );
  sections[Section.RefList] = Uint32Array.from(refList);
  sections[Section.Dictionary] = coded.dictionary;
  sections[Section.StrBytes] = strPool.bytes;
  return assemble(sections, options.timestamp ?? 0, n);
}

const align4 = (x: number): number => (x + 3) & ~3;

function assemble(
  sections: ArrayBufferView[],
  timestamp: number,
  rulesetCount: number,
): Uint8Array {
  const directoryBytes = Section.Count * 8;
  let offset = HEADER_BYTES + directoryBytes;
  const placed = sections.map((s, i) => {
    if (s.byteLength % (SECTION_ELEMENT_BYTES[i] as number) !== 0)
      throw new Error(`section ${i} has a partial element`);
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
  view.setUint32(CHECKSUM_OFFSET, checksum(bytes), true);
  return bytes;
}
