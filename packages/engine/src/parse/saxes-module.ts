import { SaxesParser } from 'saxes';

/**
 * The XML parser, reached through a function: the Node build of the package
 * (scripts/bundle-node.mjs) swaps this module for one that loads it on first call, so a process
 * that only loads a compiled bundle (the CLI's prebuilt defaults) never pays for it.
 */
export function saxesParser(): typeof SaxesParser {
  return SaxesParser;
}
