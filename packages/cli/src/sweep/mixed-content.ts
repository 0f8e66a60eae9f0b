/** Subresources a page loads (not links it offers): what a browser would block or warn about. */
const SUBRESOURCE = /<(script|img|iframe|audio|video|source|embed|track|link|object)\b([^>]*)>/gi;
const ATTR = /\b(src|href|data|srcset)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/gi;

/**
 * The http:// subresource URLs of an HTML page (at most `limit`). `<link>` counts only for
 * stylesheets, icons and preloads; `<a href>` never (a link is not a subresource).
 */
export function httpSubresources(html: string, limit = 5): string[] {
  const found: string[] = [];
  for (const tag of html.matchAll(SUBRESOURCE)) {
    const name = (tag[1] ?? '').toLowerCase();
    const attrs = tag[2] ?? '';
    if (
      name === 'link' &&
      !/\brel\s*=\s*["']?[^"'>]*\b(stylesheet|icon|preload|modulepreload)\b/i.test(attrs)
    )
      continue;
    for (const a of attrs.matchAll(ATTR)) {
      const value = (a[3] ?? a[4] ?? a[5] ?? '').trim();
      const candidates =
        a[1]?.toLowerCase() === 'srcset'
          ? value.split(',').map((part) => part.trim().split(/\s+/)[0] ?? '')
          : [value];
      for (const c of candidates) {
        if (/^http:\/\//i.test(c)) found.push(c);
        if (found.length >= limit) return found;
      }
    }
  }
  return found;
}
