import { RE2JS } from 're2js';

/**
 * re2js, the linear-time matcher, reached through a function: the Node build of the package
 * (scripts/bundle-node.mjs) swaps this module for one that loads re2js on first call, so a
 * process whose patterns all run natively never pays for loading it.
 */
export function re2js(): typeof RE2JS {
  return RE2JS;
}
