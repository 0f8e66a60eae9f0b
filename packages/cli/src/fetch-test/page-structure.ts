/** Longest sequences compared; the LCS table is quadratic, and a page's head says enough. */
export const MAX_STRUCTURE_TAGS = 3000;

const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'noscript']);

/**
 * The page's shape as a sequence of tag tokens: `div` for a start tag, `/div` for an end tag.
 * Comments, doctypes, processing instructions and raw-text contents (scripts, styles) are
 * skipped, so inline script differences between http and https do not count as structure.
 */
export function tagSequence(html: string, limit = MAX_STRUCTURE_TAGS): string[] {
  const tags: string[] = [];
  const lowerHtml = html.toLowerCase();
  const tagRe = /<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)[^>]*>|<!--[\s\S]*?(?:-->|$)|<![^>]*>|<\?[^>]*>/g;
  let m: RegExpExecArray | null;
  while (tags.length < limit && (m = tagRe.exec(html)) !== null) {
    const name = m[2];
    if (name === undefined) continue;
    const lower = name.toLowerCase();
    const closing = m[1] === '/';
    tags.push(closing ? `/${lower}` : lower);
    if (!closing && RAW_TEXT.has(lower)) {
      const end = lowerHtml.indexOf(`</${lower}`, tagRe.lastIndex);
      tagRe.lastIndex = end < 0 ? html.length : end;
    }
  }
  return tags;
}

/** 2·LCS / (|a| + |b|): 1 for identical sequences, 0 for nothing in common (Levenshtein-ratio-like). */
export function sequenceSimilarity(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  if (a.length === 0 || b.length === 0) return 0;
  let prev = new Uint16Array(b.length + 1);
  let row = new Uint16Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      row[j] = a[i - 1] === b[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, row[j - 1]!);
    }
    [prev, row] = [row, prev];
  }
  return (2 * prev[b.length]!) / (a.length + b.length);
}

export function looksLikeHtml(contentType: string, body: string): boolean {
  if (/html|xml/i.test(contentType)) return true;
  return contentType === '' && /^\s*</.test(body);
}

/** Structure similarity of two pages, or null when either is not HTML or the plain one is empty. */
export function pageSimilarity(
  plain: { contentType: string; body: string },
  secure: { contentType: string; body: string },
): number | null {
  if (plain.body.trim() === '') return null;
  if (
    !looksLikeHtml(plain.contentType, plain.body) ||
    !looksLikeHtml(secure.contentType, secure.body)
  )
    return null;
  if (plain.body === secure.body) return 1;
  return sequenceSimilarity(tagSequence(plain.body), tagSequence(secure.body));
}
