import type { AST } from '@eslint-community/regexpp';

/**
 * Whether a pattern element can match the empty string. Assertions and backreferences count
 * as able to: they consume nothing (a backreference to a group that matched empty). Types only
 * from regexpp, so it loads nothing at run time.
 */
export function canMatchEmpty(el: AST.Node): boolean {
  switch (el.type) {
    case 'Character':
    case 'CharacterSet':
    case 'CharacterClass':
      return false;
    case 'Group':
    case 'CapturingGroup':
      return el.alternatives.some((alt) => alt.elements.every(canMatchEmpty));
    case 'Quantifier':
      return el.min === 0 || canMatchEmpty(el.element);
    default:
      return true;
  }
}
