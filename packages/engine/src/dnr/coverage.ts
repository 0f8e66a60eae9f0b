import { DnrEmulator, follow } from './emulate.js';
import type { DnrRule } from './types.js';

export interface DnrCoverage {
  cases: number;
  /** Cases where the reference rewrites the URL. */
  rewrites: number;
  /** ...and the DNR rules land on the same URL. */
  reproduced: number;
  /** ...but DNR leaves the request alone. */
  missed: number;
  /** ...but DNR sends it elsewhere. */
  wrong: number;
  /** Cases the reference leaves alone but DNR redirects. */
  spurious: number;
  /** A few differing cases, for reports. */
  examples: { url: string; expected: string | null; actual: string | null }[];
}

function canonical(url: string | null, dropFragment = false): string | null {
  if (url === null) return null;
  try {
    const u = new URL(url);
    if (dropFragment) u.hash = '';
    return u.href;
  } catch {
    return url;
  }
}

/**
 * Runs reference cases (`{url, expected}`: the oracle) through the DNR emulator as main-frame
 * requests. Both sides are compared in WHATWG-canonical form, as the browser would navigate.
 * `asBrowser`: the request URL is what the browser sends, canonical and without its fragment
 * (the reference's answer loses its fragment too), instead of the oracle's text.
 */
export function measureDnrCoverage(
  rules: readonly DnrRule[],
  cases: Iterable<{ url: string; expected: string | null }>,
  maxExamples = 20,
  options: { asBrowser?: boolean } = {},
): DnrCoverage {
  const asBrowser = options.asBrowser === true;
  const emulator = new DnrEmulator(rules);
  const out: DnrCoverage = {
    cases: 0,
    rewrites: 0,
    reproduced: 0,
    missed: 0,
    wrong: 0,
    spurious: 0,
    examples: [],
  };
  for (const c of cases) {
    out.cases++;
    const url = asBrowser ? (canonical(c.url, true) as string) : c.url;
    const actual = canonical(emulator.match({ url, type: 'main_frame' }).redirectUrl, asBrowser);
    const expected = canonical(c.expected, asBrowser);
    if (expected === null) {
      if (actual !== null) out.spurious++;
    } else {
      out.rewrites++;
      if (actual === expected) out.reproduced++;
      else if (actual === null) out.missed++;
      else out.wrong++;
    }
    if (actual !== expected && out.examples.length < maxExamples)
      out.examples.push({ url, expected: asBrowser ? expected : c.expected, actual });
  }
  return out;
}

export interface TrailingDotCoverage extends DnrCoverage {
  /**
   * URLs that only lost their trailing dot (still http://): counted as spurious where the
   * reference leaves the URL alone and as wrong where it rewrites it (a dotless host is
   * another origin, so such a URL ends changed but not where the reference sends it).
   */
  dotOnly: number;
}

/** The case's URL with a trailing dot on its host, or null when it has no host name to dot. */
export function withTrailingDot(url: string): URL | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.hostname === '' || u.hostname.endsWith('.') || u.hostname.startsWith('[')) return null;
  u.hostname = `${u.hostname}.`;
  // An IPv4 address stays one (the parser drops the dot).
  return u.hostname.endsWith('.') ? u : null;
}

/**
 * The oracle's URLs with a trailing dot on the host (`http://example.com./path`), requested as
 * subresources the way the browser sends them (no fragment) and followed through redirects as
 * Chromium does. The reference strips the dots first, so the expected result is the case's own.
 */
export function measureTrailingDotCoverage(
  rules: readonly DnrRule[],
  cases: Iterable<{ url: string; expected: string | null }>,
  maxExamples = 20,
): TrailingDotCoverage {
  const emulator = new DnrEmulator(rules);
  const out: TrailingDotCoverage = {
    cases: 0,
    rewrites: 0,
    reproduced: 0,
    missed: 0,
    wrong: 0,
    spurious: 0,
    dotOnly: 0,
    examples: [],
  };
  for (const c of cases) {
    const dotted = withTrailingDot(c.url);
    if (dotted === null) continue;
    dotted.hash = '';
    const url = dotted.href;
    const undotted = new URL(url);
    undotted.hostname = undotted.hostname.replace(/\.+$/, '');
    out.cases++;
    const actual = canonical(follow(emulator, { url, type: 'script' }), true);
    const expected = canonical(c.expected, true);
    const dotOnly = actual === undotted.href;
    if (dotOnly) out.dotOnly++;
    if (expected === null) {
      if (actual !== null) out.spurious++;
    } else {
      out.rewrites++;
      if (actual === expected) out.reproduced++;
      else if (actual === null) out.missed++;
      else out.wrong++;
    }
    if (actual !== expected && out.examples.length < maxExamples)
      out.examples.push({ url, expected, actual });
  }
  return out;
}
