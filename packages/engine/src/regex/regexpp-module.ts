import { RegExpParser } from '@eslint-community/regexpp';

/**
 * The regex parser, reached through a function: the Node build of the package
 * (scripts/bundle-node.mjs) swaps this module for one that loads it on first call, so loading a
 * bundle and rewriting with literal rules never pays for it.
 */
export function regexpParser(): typeof RegExpParser {
  return RegExpParser;
}
