/**
 * One http:// URL found in a document: where its bytes are (as offsets into the decoded text of
 * the file), the URL they stand for, and how to write another URL in the same place.
 */
export interface Occurrence {
  /** Offsets into the file's text (after the BOM) of the raw URL characters. */
  start: number;
  end: number;
  /** The URL the raw characters stand for (escapes and character references decoded). */
  url: string;
  /** Where it was found, for reports: `markdown-link`, `html-attribute:href`, `text`... */
  context: string;
  /**
   * The raw characters that stand for `newUrl` in this place, or null when the place cannot
   * hold it. Unchanged tails of the URL keep their original spelling.
   */
  encode(newUrl: string): string | null;
}

/** True for an absolute URL with the http scheme (any case): the only kind we upgrade. */
export function isHttpUrl(url: string): boolean {
  return /^http:\/\/[^/?#\s]/i.test(url);
}

/**
 * True when two URLs are the same as WHATWG parses them (`http://Example.com` and
 * `http://example.com/`): the test for link text that shows the link's own URL.
 */
export function sameUrl(a: string, b: string): boolean {
  if (!URL.canParse(a) || !URL.canParse(b)) return false;
  return new URL(a).href === new URL(b).href;
}
