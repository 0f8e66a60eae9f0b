import type { Occurrence } from './occurrence.js';

/** What rewrote a URL: a ruleset (and the channel that shipped it), or `--upgrade-all`. */
export interface RewriteSource {
  rewritten: string | null;
  ruleset: string | null;
  channel: string | null;
}

export type Rewriter = (url: string) => RewriteSource;

/** An http:// URL in a document that can be upgraded, with where it is and what replaces it. */
export interface LinkFinding {
  file: string;
  /** 1-based; columns count UTF-16 code units, as SARIF's default `utf16CodeUnits` does. */
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  /** Offsets into the document text (without BOM) of the bytes that change. */
  start: number;
  end: number;
  context: string;
  url: string;
  rewritten: string;
  /** null: no ruleset covers the host, offered by `--upgrade-all`. */
  ruleset: string | null;
  channel: string | null;
  /** The raw characters written in place of the old ones. */
  replacement: string;
  /** Set by `--verify`: whether both URLs answered alike, and if not, why. */
  verified?: boolean;
  reason?: string;
}

/** Offsets of line starts; `\n`, `\r\n` and a lone `\r` each end a line. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) starts.push(i + 1);
  }
  return starts;
}

export function position(
  starts: readonly number[],
  offset: number,
): { line: number; column: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - (starts[lo] as number) + 1 };
}

/**
 * The spelling of the upgraded URL to write. The engine answers with normalised URLs
 * (`http://Example.com` comes back as `https://example.com/`); when the only change is the
 * scheme, the document's own spelling is kept and only `http` becomes `https`.
 */
export function upgradedSpelling(original: string, rewritten: string): string {
  let normalised: string;
  try {
    normalised = new URL(original).href;
  } catch {
    return rewritten;
  }
  const schemeOnly = `https${normalised.slice(normalised.indexOf(':'))}`;
  if (rewritten === schemeOnly) return `https${original.slice(original.indexOf(':'))}`;
  return rewritten;
}

/**
 * The URL `--upgrade-all` offers for a host no ruleset covers: the same URL over https (a
 * written `:80` goes, since 80 is not https's port), or null when it cannot be parsed.
 */
export function plainUpgrade(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' || parsed.hostname === '') return null;
  if (/^http:\/\/[^/?#]*:80(?:[/?#]|$)/i.test(url)) {
    parsed.protocol = 'https:';
    return parsed.href;
  }
  return `https${url.slice(url.indexOf(':'))}`;
}

/**
 * The findings for one document: every occurrence a ruleset upgrades (or, with `upgradeAll`,
 * any http URL), written in the occurrence's own escaping. Rewrites to anything but https (a
 * ruleset may move http to http) are not upgrades and are left out.
 */
export function planRewrites(
  file: string,
  text: string,
  occurrences: readonly Occurrence[],
  rewrite: Rewriter,
  upgradeAll: boolean,
): { findings: LinkFinding[]; notes: string[] } {
  const starts = lineStarts(text);
  const findings: LinkFinding[] = [];
  const notes: string[] = [];
  for (const o of occurrences) {
    let source: RewriteSource = rewrite(o.url);
    if (source.rewritten === null && upgradeAll) {
      const upgraded = plainUpgrade(o.url);
      if (upgraded !== null) source = { rewritten: upgraded, ruleset: null, channel: null };
    } else if (source.rewritten !== null) {
      source = { ...source, rewritten: upgradedSpelling(o.url, source.rewritten) };
    }
    if (source.rewritten === null || !/^https:/i.test(source.rewritten)) continue;
    const from = position(starts, o.start);
    const replacement = o.encode(source.rewritten);
    if (replacement === null) {
      notes.push(
        `${file}:${from.line}:${from.column}: ${o.url} -> ${source.rewritten} cannot be written in this place (${o.context}); left alone`,
      );
      continue;
    }
    const to = position(starts, o.end);
    findings.push({
      file,
      line: from.line,
      column: from.column,
      endLine: to.line,
      endColumn: to.column,
      start: o.start,
      end: o.end,
      context: o.context,
      url: o.url,
      rewritten: source.rewritten,
      ruleset: source.ruleset,
      channel: source.channel,
      replacement,
    });
  }
  return { findings, notes };
}

/** `text` with each finding's bytes replaced; everything between them is copied as it is. */
export function applyFindings(text: string, findings: readonly LinkFinding[]): string {
  const sorted = [...findings].sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const f of sorted) {
    if (f.start < at) throw new Error(`overlapping rewrites at offset ${f.start} in ${f.file}`);
    out += text.slice(at, f.start) + f.replacement;
    at = f.end;
  }
  return out + text.slice(at);
}
