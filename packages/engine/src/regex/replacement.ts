/** What a `$` in a `to` replacement string means under JavaScript's GetSubstitution. */
export type DollarUse =
  | { kind: 'group'; group: number; offset: number; text: string }
  | { kind: 'missing-group'; group: number; offset: number; text: string }
  | { kind: 'special'; offset: number; text: string }
  | { kind: 'literal'; offset: number; text: string };

/**
 * Classifies every `$` of `to` against a pattern with `groupCount` capturing groups, exactly as
 * `String.prototype.replace` reads it: `$$`, `$&`, `` $` ``, `$'` are special; `$nn` is a group when
 * nn names one, else `$n` is when n does, else the text stays literal; any other `$x` is literal.
 */
export function dollarUses(to: string, groupCount: number): DollarUse[] {
  const uses: DollarUse[] = [];
  for (let i = 0; i < to.length; i++) {
    if (to[i] !== '$') continue;
    const next = to[i + 1] ?? '';
    if (next === '$' || next === '&' || next === '`' || next === "'") {
      uses.push({ kind: next === '$' ? 'literal' : 'special', offset: i, text: `$${next}` });
      i++;
      continue;
    }
    if (/[0-9]/.test(next)) {
      const two = to.slice(i + 1, i + 3);
      if (/^[0-9]{2}$/.test(two) && Number(two) >= 1 && Number(two) <= groupCount) {
        uses.push({ kind: 'group', group: Number(two), offset: i, text: `$${two}` });
        i += 2;
      } else if (Number(next) >= 1 && Number(next) <= groupCount) {
        uses.push({ kind: 'group', group: Number(next), offset: i, text: `$${next}` });
        i++;
      } else {
        uses.push({ kind: 'missing-group', group: Number(next), offset: i, text: `$${next}` });
        i++;
      }
      continue;
    }
    uses.push({ kind: 'literal', offset: i, text: `$${next}` });
  }
  return uses;
}

/** The group numbers `to` inserts (`$n`) against a pattern with `groupCount` capturing groups. */
export function insertedGroups(to: string, groupCount: number): Set<number> {
  return new Set(dollarUses(to, groupCount).flatMap((u) => (u.kind === 'group' ? [u.group] : [])));
}
