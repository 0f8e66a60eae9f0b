import * as fflate from 'fflate';

/**
 * fflate (gzip and zip inflate), reached through a function: the Node build of the package
 * (scripts/bundle-node.mjs) swaps this module for one that loads it on first call, so a process
 * that reads no archive (a one-shot `httpsify rewrite URL`) never pays for it.
 */
export function fflateModule(): typeof fflate {
  return fflate;
}
