/**
 * URL normalisation with the reference semantics: WHATWG parsing, trailing dots stripped from
 * the hostname (down to one: a host of dots only becomes `.`), credentials set aside. Most URLs seen in practice are already in the form the
 * WHATWG serializer would produce; for those a single scan proves it and no URL object is built.
 */

export interface NormalizedUrl {
  /** The href rules are applied to (no credentials, no trailing dots). */
  href: string;
  /** Hostname used for the target lookup, as a range of `href`... */
  hostStart: number;
  hostEnd: number;
  /** ...or, when the stripped hostname could not be written back into the href, the hostname itself. */
  hostOverride: string | null;
  /** Percent-encoded username and password of the input, to put back into the result. */
  username: string;
  password: string;
}

/**
 * The labels of a hostname, found while its characters are validated anyway: where each starts
 * and ends in the URL. Scratch, reused per URL.
 */
export interface HostLabels {
  start: Int32Array;
  end: Int32Array;
  /** Labels found; more than the arrays hold means the host is too long for any target. */
  count: number;
}

/** 255 characters hold at most 128 labels. */
export const MAX_LABELS = 128;

export function newHostLabels(): HostLabels {
  return { start: new Int32Array(MAX_LABELS), end: new Int32Array(MAX_LABELS), count: 0 };
}

export function newNormalizedUrl(): NormalizedUrl {
  return { href: '', hostStart: 0, hostEnd: 0, hostOverride: null, username: '', password: '' };
}

// Bytes allowed unchanged after the host in a serialized special URL. Conservative: anything the
// serializer might percent-encode or rewrite (quotes, braces, backslash, backtick, ^, |, [ ]) is out.
const SAFE_TAIL = new Uint8Array(128);
for (let c = 0x21; c < 0x7f; c++) SAFE_TAIL[c] = 1;
for (const ch of '"\'<>\\^`{|}[]') SAFE_TAIL[ch.charCodeAt(0)] = 0;

const enum Ch {
  Slash = 0x2f,
  Dot = 0x2e,
  Colon = 0x3a,
  Question = 0x3f,
  Hash = 0x23,
  Percent = 0x25,
  Zero = 0x30,
  Nine = 0x39,
}

/** 1 for the bytes a canonical hostname consists of: lowercase letters, digits, `.`, `-`, `_`. */
const HOST_CHAR = new Uint8Array(128);
for (let c = 0x61; c <= 0x7a; c++) HOST_CHAR[c] = 1;
for (let c = Ch.Zero; c <= Ch.Nine; c++) HOST_CHAR[c] = 1;
for (const c of [Ch.Dot, 0x2d, 0x5f]) HOST_CHAR[c] = 1;

/**
 * Proves the scheme, host and port of `url` are already in WHATWG form and sets out's host range
 * (href = url). Returns the index of the "/" that starts the path, or -1 ("take the slow path").
 * Once this holds, nothing later in the URL can change its host or make it invalid. With
 * `labels`, the same pass also splits the host (so the lookup needs no second scan).
 */
export function canonicalAuthority(
  url: string,
  out: NormalizedUrl,
  labels: HostLabels | null = null,
): number {
  let hostStart: number;
  let defaultPort: number;
  if (url.startsWith('http://')) {
    hostStart = 7;
    defaultPort = 80;
  } else if (url.startsWith('https://')) {
    hostStart = 8;
    defaultPort = 443;
  } else {
    return -1;
  }
  const len = url.length;
  let i = hostStart;
  let prev = Ch.Dot; // a leading dot counts as an empty label
  let labelStart = i;
  let n = 0;
  while (i < len) {
    const c = url.charCodeAt(i);
    if (c >= 128 || HOST_CHAR[c] === 0) break;
    if (c === Ch.Dot) {
      if (prev === Ch.Dot) return -1; // empty label
      if (labels !== null && n < MAX_LABELS) {
        labels.start[n] = labelStart;
        labels.end[n] = i;
      }
      n++;
      labelStart = i + 1;
    } else {
      if (c === 0x2d && i === labelStart + 3 && url.charCodeAt(i - 1) === 0x2d) {
        // "xn--" (or any "??--"): a possible punycode label that WHATWG would validate
        return -1;
      }
    }
    prev = c;
    i++;
  }
  const hostEnd = i;
  if (hostEnd === hostStart || prev === Ch.Dot) return -1;
  if (labels !== null) {
    if (n < MAX_LABELS) {
      labels.start[n] = labelStart;
      labels.end[n] = hostEnd;
    }
    labels.count = n + 1;
  }
  // A last label starting with a digit may be an IPv4 address the parser would rewrite.
  const last = url.charCodeAt(labelStart);
  if (last >= Ch.Zero && last <= Ch.Nine) return -1;
  if (i < len && url.charCodeAt(i) === Ch.Colon) {
    i++;
    const portStart = i;
    let port = 0;
    while (i < len) {
      const c = url.charCodeAt(i);
      if (c < Ch.Zero || c > Ch.Nine) break;
      port = port * 10 + (c - Ch.Zero);
      if (port > 65535) return -1;
      i++;
    }
    const digits = i - portStart;
    if (
      digits === 0 ||
      (digits > 1 && url.charCodeAt(portStart) === Ch.Zero) ||
      port === defaultPort
    )
      return -1;
  }
  if (i >= len || url.charCodeAt(i) !== Ch.Slash) return -1;
  out.href = url;
  out.hostStart = hostStart;
  out.hostEnd = hostEnd;
  out.hostOverride = null;
  out.username = '';
  out.password = '';
  return i;
}

/**
 * Whether path, query and fragment from `i` pass through the serializer unchanged: no byte it
 * would percent-encode or rewrite, no dot segment (or encoded dot) in the path it would resolve.
 */
export function canonicalTail(url: string, i: number): boolean {
  const len = url.length;
  let inPath = true;
  for (; i < len; i++) {
    const c = url.charCodeAt(i);
    if (c >= 128 || SAFE_TAIL[c] === 0) return false;
    if (!inPath) continue;
    if (c === Ch.Question || c === Ch.Hash) {
      inPath = false;
    } else if (c === Ch.Slash && i + 1 < len && url.charCodeAt(i + 1) === Ch.Dot) {
      const n = i + 2 < len ? url.charCodeAt(i + 2) : -1;
      if (n === -1 || n === Ch.Slash || n === Ch.Dot || n === Ch.Question || n === Ch.Hash)
        return false;
    } else if (
      c === Ch.Percent &&
      i + 2 < len &&
      url.charCodeAt(i + 1) === 0x32 &&
      (url.charCodeAt(i + 2) | 0x20) === 0x65
    ) {
      return false; // %2e
    }
  }
  return true;
}

/** Fills `out` for `url`; returns false when `url` is not a valid URL at all. */
export function normalizeUrl(url: string, out: NormalizedUrl): boolean {
  const pathStart = canonicalAuthority(url, out);
  if (pathStart >= 0 && canonicalTail(url, pathStart)) return true;
  return normalizeWithParser(url, out);
}

/** The general case: WHATWG parsing, trailing dots stripped, credentials set aside. */
export function normalizeWithParser(url: string, out: NormalizedUrl): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  out.username = parsed.username;
  out.password = parsed.password;
  if (out.username !== '' || out.password !== '') {
    parsed.username = '';
    parsed.password = '';
  }
  let host = parsed.hostname;
  let stripped = host;
  // The reference stops at a lone dot: `http://../` is host `.`, which targets `.`, `*.` and
  // `.*` match (its labels are two empty ones).
  while (stripped.length > 1 && stripped.endsWith('.')) stripped = stripped.slice(0, -1);
  if (stripped !== host) {
    // The setter ignores an empty host on special URLs; the lookup still uses the stripped name.
    parsed.hostname = stripped;
    host = parsed.hostname;
  }
  const href = parsed.href;
  const hostStart = parsed.protocol.length + 2;
  out.href = href;
  if (
    host === stripped &&
    stripped !== '' &&
    href.startsWith(host, hostStart) &&
    href.charCodeAt(hostStart - 1) === Ch.Slash
  ) {
    out.hostStart = hostStart;
    out.hostEnd = hostStart + host.length;
    out.hostOverride = null;
  } else {
    out.hostStart = 0;
    out.hostEnd = 0;
    out.hostOverride = stripped;
  }
  return true;
}

/** Puts the credentials set aside by normalizeUrl back into a rewritten URL. */
export function restoreCredentials(result: string, from: NormalizedUrl): string {
  if (from.username === '' && from.password === '') return result;
  try {
    const url = new URL(result);
    url.username = from.username;
    url.password = from.password;
    return url.href;
  } catch {
    return result;
  }
}
