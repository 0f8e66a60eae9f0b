import { decodeHTML } from 'entities';
import { sequenceSimilarity } from '../fetch-test/page-structure.js';
import { looksLikeHtml } from '../fetch-test/page-structure.js';

/** Words compared per page; the comparison is quadratic, and a page's start says enough. */
export const MAX_WORDS = 2000;
/** Pages at least this similar count as the same content (see `contentSimilarity`). */
export const SIMILARITY_THRESHOLD = 0.9;

/**
 * The words a reader sees: for HTML, the text outside tags, scripts, styles and comments, with
 * character references decoded; for other text, the body. Lower-cased, split on anything but
 * letters and digits, and `http://`/`https://` made one token, so a page that prints its own
 * links with the scheme it was fetched over does not differ for that alone.
 */
export function visibleWords(body: string, html: boolean, limit = MAX_WORDS): string[] {
  let text = body;
  if (html) {
    text = text
      .replace(/<!--[\s\S]*?(?:-->|$)/g, ' ')
      .replace(/<(script|style|noscript|template)\b[^>]*>[\s\S]*?(?:<\/\1\s*>|$)/gi, ' ')
      .replace(/<[^>]*>?/g, ' ');
    text = decodeHTML(text);
  }
  text = text.toLowerCase().replace(/https?:\/\//g, ' url ');
  const words: string[] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    words.push(m[0]);
    if (words.length >= limit) break;
  }
  return words;
}

const TEXTUAL = /^text\/|json|xml|javascript|ecmascript/i;

/**
 * How alike two answers are, from 0 to 1: HTML and other text by their visible words
 * (2·LCS / total words, so 0.9 means 90% of the words line up in order); anything else (images,
 * archives) only when the bodies are identical. Two empty bodies are alike.
 */
export function contentSimilarity(
  plain: { contentType: string; body: string },
  secure: { contentType: string; body: string },
): number {
  if (plain.body === secure.body) return 1;
  const html =
    looksLikeHtml(plain.contentType, plain.body) && looksLikeHtml(secure.contentType, secure.body);
  const textual = html || (TEXTUAL.test(plain.contentType) && TEXTUAL.test(secure.contentType));
  if (!textual) return 0;
  return sequenceSimilarity(visibleWords(plain.body, html), visibleWords(secure.body, html));
}
