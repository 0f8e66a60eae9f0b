/**
 * Which rulesets each host-trie node carries (Section.RefList and Section.NodeRef; the values are
 * described there): the writer, and the bounds full verification puts on what the matcher
 * (match/host-index.ts) follows.
 */
import { ghostBase, INHERIT_REF } from './format.js';
import type { PackedArray } from './packed-array.js';

/** What the writer needs of a trie node: its parent (-1 for the root) and its rulesets. */
export interface RefNode {
  parent: number;
  rulesets: readonly number[];
}

/**
 * The RefList section and the NodeRef value of each node, by node index (the host trie writes
 * them in its own record order). A node whose list equals the one its parent hands down
 * inherits it; a node with no rulesets of its own hands its children a "ghost" list, the one
 * most of them carry (a.example.com, b.example.com under example.com, which is no target), so
 * that they can inherit it: the first of the most common lists, in node order.
 */
export function writeRulesetRefs(
  nodes: readonly RefNode[],
  rulesetCount: number,
): { refList: Uint32Array; nodeRef: number[] } {
  const n = rulesetCount;
  const refList: number[] = [];
  const listRefs = new Map<string, number>();
  // One id, or a RefList entry per distinct list.
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
  const ghost = ghostLists(nodes);
  const inheritable = (id: number): readonly number[] => {
    const node = nodes[id] as RefNode;
    return node.rulesets.length > 0 ? node.rulesets : (ghost[id] ?? []);
  };
  const inherits = nodes.map(
    (node, id) =>
      id > 0 &&
      node.rulesets.length > 0 &&
      inheritable(node.parent).join() === node.rulesets.join(),
  );
  // Refs are handed out own lists first, then ghosts, each in node order.
  const ownRef = nodes.map((node, id) => (inherits[id] === true ? 0 : refFor(node.rulesets)));
  const ghostRef = ghost.map((list) => (list === undefined ? 0 : refFor(list)));
  const ghosts = ghostBase(n, refList.length);
  // The same rulesets as the parent hands down: one small repeated value, not a random id.
  const nodeRef = nodes.map((_, id) => {
    const own = ownRef[id] as number;
    const handed = ghostRef[id] ?? 0;
    if (inherits[id] === true) return INHERIT_REF;
    return own !== 0 ? own + 1 : handed !== 0 ? handed + ghosts : 0;
  });
  return { refList: Uint32Array.from(refList), nodeRef };
}

/** The ghost list of each node with no rulesets of its own whose children share one (sparse). */
function ghostLists(nodes: readonly RefNode[]): (number[] | undefined)[] {
  const ghost = new Array<number[] | undefined>(nodes.length);
  const counts = new Map<number, Map<string, number>>();
  for (let id = 1; id < nodes.length; id++) {
    const node = nodes[id] as RefNode;
    if (
      node.rulesets.length === 0 ||
      node.parent === 0 ||
      (nodes[node.parent] as RefNode).rulesets.length > 0
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
  return ghost;
}

/**
 * Checks every stored ref against the ruleset count and the RefList (each list's count and ids
 * in range); returns an error message, or null. Full verification's.
 */
export function checkRulesetRefs(
  rulesetCount: number,
  refs: PackedArray,
  nodeCount: number,
  refList: Uint32Array,
): string | null {
  const n = rulesetCount;
  const ghosts = ghostBase(n, refList.length);
  for (let r = 0; r < nodeCount; r++) {
    // Own refs are stored one above, ghosts ghostBase above (see Section.NodeRef).
    const stored = refs.get(r);
    if (stored >= 2 * ghosts) return 'ruleset ref out of range';
    const ref = stored <= INHERIT_REF ? 0 : stored <= ghosts ? stored - 1 : stored - ghosts;
    if (ref > n) {
      const firstRef = ref - n - 1;
      const count = refList[firstRef];
      if (count === undefined || firstRef + count >= refList.length)
        return 'ruleset list out of range';
      for (let k = 1; k <= count; k++)
        if ((refList[firstRef + k] as number) >= n) return 'ruleset id out of range';
    }
  }
  return null;
}
