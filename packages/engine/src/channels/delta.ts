import { BundleError } from '../bundle/read.js';
import { compileBundle } from '../bundle/write.js';
import { loadBundle } from '../match/engine.js';
import type { Ruleset } from '../model/ruleset.js';
import { ChannelError } from './errors.js';

/**
 * A channel delta: how to build release B's bundle from release A's. Bundles are not
 * delta-friendly byte strings (one new string shifts every offset after it), so a delta works on
 * rulesets: B's rulesets in order, as runs of A's rulesets kept as they are and runs of a small
 * bundle of B's new or changed ones. The client decodes both, compiles the list, and the result
 * must be B's bundle byte for byte: it is checked against the length and SHA-256 of B's signed
 * release, so a delta can make an update cheaper but never different. Compiling the rulesets a
 * bundle decodes to gives that bundle again (write.ts orders each ruleset's targets), provided
 * both sides run the same compiler; otherwise the digest differs and the client downloads B.
 *
 * Layout (little-endian): magic `HTTPSDLT`, format (u32), run count (u32), then per run two u32
 * (source in the top bit: 0 = A, 1 = the delta's bundle; first ruleset id below it; count), then
 * the delta's own bundle, a complete bundle that passes the same door as any other.
 */
const MAGIC = 'HTTPSDLT';
export const DELTA_FORMAT = 1;
const HEADER_BYTES = 16;
const FROM_DELTA = 0x80000000;

function fail(message: string): never {
  throw new ChannelError('bad-delta', message);
}

/** A stable text per ruleset, to find the ones B kept from A. */
function rulesetKey(rs: Ruleset): string {
  return JSON.stringify(rs);
}

function decodeAll(bundle: Uint8Array, what: string): Ruleset[] {
  let engine;
  try {
    engine = loadBundle(bundle);
  } catch (err) {
    fail(`${what} does not load: ${err instanceof BundleError ? err.message : String(err)}`);
  }
  return Array.from({ length: engine.rulesetCount }, (_, id) => engine.ruleset(id));
}

/**
 * Bytes any bundle of `rulesets` takes at least, cheap to count next to compiling them: every
 * distinct string sits in the string pool with at least a one-byte length header, every
 * ruleset has at least a flags byte and every rule a kind byte. Strings are dictionary-coded,
 * so their lengths are no bound; their number is.
 */
function leastBundleBytes(rulesets: readonly Ruleset[]): number {
  const strings = new Set<string>();
  let fixed = 0;
  for (const rs of rulesets) {
    fixed += 1 + rs.rules.length;
    strings.add(rs.name);
    if (rs.defaultOff !== undefined) strings.add(rs.defaultOff);
    if (rs.platform !== undefined) strings.add(rs.platform);
    for (const rule of rs.rules) {
      strings.add(rule.from);
      strings.add(rule.to);
    }
    for (const exclusion of rs.exclusions) strings.add(exclusion.pattern);
    for (const cookie of rs.secureCookies) {
      strings.add(cookie.host);
      strings.add(cookie.name);
    }
  }
  return fixed + strings.size;
}

/** The delta from bundle `base` (release A) to bundle `target` (release B). */
export function makeDelta(base: Uint8Array, target: Uint8Array): Uint8Array {
  const before = new Map<string, number[]>();
  decodeAll(base, 'the base bundle').forEach((rs, id) => {
    const key = rulesetKey(rs);
    const ids = before.get(key);
    if (ids === undefined) before.set(key, [id]);
    else ids.push(id);
  });
  const added: Ruleset[] = [];
  const runs: [number, number][] = [];
  for (const rs of decodeAll(target, 'the target bundle')) {
    const kept = before.get(rulesetKey(rs))?.shift();
    const ref = kept === undefined ? FROM_DELTA + added.push(rs) - 1 : kept;
    const last = runs[runs.length - 1];
    if (last !== undefined && last[0] + last[1] === ref) last[1]++;
    else runs.push([ref, 1]);
  }
  const bundle = compileBundle(added);
  const out = new Uint8Array(HEADER_BYTES + runs.length * 8 + bundle.length);
  const view = new DataView(out.buffer);
  for (let i = 0; i < MAGIC.length; i++) out[i] = MAGIC.charCodeAt(i);
  view.setUint32(8, DELTA_FORMAT, true);
  view.setUint32(12, runs.length, true);
  runs.forEach(([ref, count], i) => {
    view.setUint32(HEADER_BYTES + i * 8, ref, true);
    view.setUint32(HEADER_BYTES + i * 8 + 4, count, true);
  });
  out.set(bundle, HEADER_BYTES + runs.length * 8);
  return out;
}

/**
 * Release B's bundle from the installed A and a delta, or a ChannelError `bad-delta` saying
 * why not. Every bound is checked before the work it bounds: the header before the delta's
 * bundle is decoded, each run before its rulesets are taken (every ruleset of A and of the
 * delta at most once), and the least size of the result against `maxBytes` (B's signed length)
 * before anything is compiled, so a delta signed with a stolen online key cannot make a client
 * build a large bundle to refuse afterwards; the result's real length is checked again before
 * anything hashes it. The caller checks the result against B's signed SHA-256.
 */
export function applyDelta(
  base: Uint8Array,
  delta: Uint8Array,
  options: { timestamp: number; maxBytes: number },
): Uint8Array {
  if (delta.length < HEADER_BYTES)
    fail(`delta of ${delta.length} bytes is shorter than its header`);
  for (let i = 0; i < MAGIC.length; i++)
    if (delta[i] !== MAGIC.charCodeAt(i)) fail('not a httpsify delta: bad magic bytes');
  const view = new DataView(delta.buffer, delta.byteOffset, delta.byteLength);
  const format = view.getUint32(8, true);
  if (format !== DELTA_FORMAT)
    fail(`delta format ${format} is not supported (this client reads format ${DELTA_FORMAT})`);
  const runCount = view.getUint32(12, true);
  if (runCount > (delta.length - HEADER_BYTES) / 8)
    fail(`delta cut short: ${runCount} runs announced`);
  const before = decodeAll(base, 'the installed bundle');
  const added = decodeAll(delta.subarray(HEADER_BYTES + runCount * 8), "the delta's bundle");
  const used = [new Uint8Array(before.length), new Uint8Array(added.length)];
  const rulesets: Ruleset[] = [];
  for (let i = 0; i < runCount; i++) {
    const ref = view.getUint32(HEADER_BYTES + i * 8, true);
    const count = view.getUint32(HEADER_BYTES + i * 8 + 4, true);
    const fromDelta = ref >= FROM_DELTA;
    const source = fromDelta ? added : before;
    const seen = used[fromDelta ? 1 : 0] as Uint8Array;
    const start = fromDelta ? ref - FROM_DELTA : ref;
    if (count === 0 || start + count > source.length)
      fail(
        `delta run ${i} reaches past the ${fromDelta ? "delta's" : 'installed'} ${source.length} rulesets`,
      );
    for (let id = start; id < start + count; id++) {
      if (seen[id] === 1) fail(`delta run ${i} uses ruleset ${id} a second time`);
      seen[id] = 1;
      rulesets.push(source[id] as Ruleset);
    }
  }
  const least = leastBundleBytes(rulesets);
  if (least > options.maxBytes)
    fail(
      `delta would build at least ${least} bytes, more than the ${options.maxBytes} of the signed release`,
    );
  const out = compileBundle(rulesets, { timestamp: options.timestamp });
  if (out.length > options.maxBytes)
    fail(
      `delta builds ${out.length} bytes, more than the ${options.maxBytes} of the signed release`,
    );
  return out;
}
