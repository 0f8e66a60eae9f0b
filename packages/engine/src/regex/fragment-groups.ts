/**
 * Replacements whose result depends on the URL's fragment. The reference applies a rule to the
 * whole URL, fragment included; a browser's declarativeNetRequest never sees the fragment and
 * puts it back after the redirect. Both agree when whatever can reach into the fragment is
 * copied once, at the very end of `to`, in the order the pattern captured it: the fragment
 * then ends the result either way. A group that can reach the URL's end and is repeated
 * (`$2$2`) or followed by more text copies the fragment into the middle of the URL: the
 * reference's result then depends on a fragment the browser never shows DNR.
 */
import type { AST } from '@eslint-community/regexpp';
import { childrenOf, countCapturingGroups, parsePattern } from './pattern-ast.js';
import { dollarUses } from './replacement.js';

/**
 * The group numbers of `to` that can carry the fragment into the middle of the result (each
 * once); empty when the result does not depend on the fragment, or when `from` does not parse.
 */
export function fragmentDependentGroups(from: string, to: string): number[] {
  const pattern = parsePattern(from);
  if (pattern === null) return [];
  const reaching = new Set<number>();
  for (const alternative of pattern.alternatives) {
    const elements = alternative.elements;
    // From the end back: every element after a reaching one may match nothing.
    for (let i = elements.length - 1; i >= 0; i--) {
      const el = elements[i]!;
      for (const g of capturingGroups(el))
        if (mayMatchHash(g)) reaching.add(groupNumber(pattern, g));
      if (!mayBeEmpty(el)) break;
    }
  }
  if (reaching.size === 0) return [];
  const uses = dollarUses(to, countCapturingGroups(pattern));
  // The trailing run of `$n` with nothing between them or after them.
  let tail = uses.length;
  let end = to.length;
  while (tail > 0) {
    const use = uses[tail - 1]!;
    if (use.kind !== 'group' || use.offset + use.text.length !== end) break;
    end = use.offset;
    tail--;
  }
  const out = new Set<number>();
  const seen = new Set<number>();
  let last = 0;
  uses.forEach((use, i) => {
    if (use.kind !== 'group' || !reaching.has(use.group)) return;
    // Repeated, before the tail, or after a later group in the tail: the fragment lands inside.
    if (seen.has(use.group) || i < tail || use.group < last) out.add(use.group);
    seen.add(use.group);
    last = Math.max(last, use.group);
  });
  return [...out].sort((a, b) => a - b);
}

/** The capturing groups in an element, outermost first. */
function capturingGroups(node: AST.Node): AST.CapturingGroup[] {
  const out: AST.CapturingGroup[] = [];
  const visit = (n: AST.Node): void => {
    if (n.type === 'Assertion') return;
    if (n.type === 'CapturingGroup') out.push(n);
    for (const child of childrenOf(n)) visit(child);
  };
  visit(node);
  return out;
}

function groupNumber(pattern: AST.Pattern, group: AST.CapturingGroup): number {
  let n = 0;
  let found = 0;
  const visit = (node: AST.Node): void => {
    if (found !== 0) return;
    if (node.type === 'CapturingGroup') {
      n++;
      if (node === group) found = n;
    }
    for (const child of childrenOf(node)) visit(child);
  };
  visit(pattern);
  return found;
}

/** Whether a piece can match a `#` (a class that admits it, `.`, a backreference: assume so). */
function mayMatchHash(node: AST.Node): boolean {
  switch (node.type) {
    case 'Character':
      return node.value === 0x23;
    case 'CharacterClass':
    case 'CharacterSet':
      return new RegExp(`^${node.raw}$`).test('#');
    case 'Assertion':
      return false;
    case 'Group':
    case 'CapturingGroup':
    case 'Alternative':
    case 'Quantifier':
      return childrenOf(node).some(mayMatchHash);
    default:
      return true;
  }
}

/** Whether an element can match the empty string. */
function mayBeEmpty(node: AST.Node): boolean {
  switch (node.type) {
    case 'Assertion':
      return true;
    case 'Quantifier':
      return node.min === 0 || mayBeEmpty(node.element);
    case 'Group':
    case 'CapturingGroup':
      return node.alternatives.some((a) => a.elements.every(mayBeEmpty));
    case 'Backreference':
      return true;
    default:
      return false;
  }
}
