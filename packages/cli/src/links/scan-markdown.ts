import { parse, postprocess, preprocess } from 'micromark';
import { gfm } from 'micromark-extension-gfm';
import { decodeString } from 'micromark-util-decode-string';
import { decodeWithMap, respell, undecoded, type DecodedText } from './decoded-text.js';
import { isHttpUrl, sameUrl, type Occurrence } from './occurrence.js';
import { findUrlsInHtml } from './scan-html.js';

/** A backslash escape or a character reference, as CommonMark decodes them in destinations. */
const MARKDOWN_ESCAPE =
  /\\[!-/:-@[-`{-~]|&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{0,31});/;

/**
 * Finds http:// URLs in Markdown (CommonMark + GFM, tokenised by micromark, the parser behind
 * remark): inline link and image destinations, reference definitions, `<http://…>` autolinks,
 * GFM bare-URL autolinks, and the URL attributes of raw HTML. The parser never makes links of
 * code spans, fenced or indented code, so their URLs are left alone. micromark's tokens are
 * used rather than the remark tree because the tree keeps only decoded URLs, not where the
 * destination's characters are.
 */
export function findUrlsInMarkdown(source: string): Occurrence[] {
  return occurrencesFromTokens(source, markdownTokens(source));
}

/** A micromark token that may hold a URL: its type and where it is. */
export interface MarkdownToken {
  type: string;
  start: number;
  end: number;
}

const URL_TOKENS = new Set([
  'resourceDestinationString',
  'definitionDestinationString',
  'autolinkProtocol',
  'literalAutolinkHttp',
  'htmlFlow',
  'htmlText',
  // An inline link and its text: `[http://x](http://x)` shows its own URL.
  'link',
  'labelText',
]);

/**
 * The tokens that may hold URLs, in document order. This is the costly step (micromark is slow
 * on some hostile inputs), kept apart so that it can run in a worker under a time limit.
 */
export function markdownTokens(source: string): MarkdownToken[] {
  const events = postprocess(
    parse({ extensions: [gfm()] })
      .document()
      .write(preprocess()(source, undefined, true)),
  );
  const tokens: MarkdownToken[] = [];
  for (const [kind, token] of events) {
    if (kind === 'enter' && URL_TOKENS.has(token.type))
      tokens.push({ type: token.type, start: token.start.offset, end: token.end.offset });
  }
  return tokens;
}

export function occurrencesFromTokens(
  source: string,
  tokens: readonly MarkdownToken[],
): Occurrence[] {
  const found: Occurrence[] = [];
  for (const { type, start, end } of tokens) {
    const raw = source.slice(start, end);
    switch (type) {
      case 'resourceDestinationString':
      case 'definitionDestinationString': {
        const decoded = decodeWithMap(raw, MARKDOWN_ESCAPE, (t) => decodeString(t));
        if (decoded.text !== decodeString(raw) || !isHttpUrl(decoded.text)) break;
        // Inside `<…>` only angle brackets and newlines are special; bare destinations also
        // stop at spaces and unbalanced parentheses.
        const inAngles = source[start - 1] === '<';
        const context =
          type === 'definitionDestinationString' ? 'markdown-definition' : 'markdown-destination';
        found.push(
          markdownOccurrence(decoded, start, context, inAngles ? escapeInAngles : escapeBare),
        );
        break;
      }
      case 'autolinkProtocol':
        if (isHttpUrl(raw))
          found.push(
            markdownOccurrence(undecoded(raw), start, 'markdown-autolink', (s) => s, /[\s<>]/),
          );
        break;
      case 'literalAutolinkHttp':
        if (isHttpUrl(raw))
          found.push(
            markdownOccurrence(undecoded(raw), start, 'markdown-bare-url', (s) => s, /[\s<>]/),
          );
        break;
      case 'htmlFlow':
      case 'htmlText':
        if (/http:\/\//i.test(raw))
          found.push(
            ...findUrlsInHtml(raw, start, true).map((o) => ({
              ...o,
              context: `markdown-${o.context}`,
            })),
          );
        break;
      default:
        break;
    }
  }
  found.push(...linkTexts(source, tokens));
  return found.sort((a, b) => a.start - b.start);
}

/**
 * The text of inline links that is exactly the link's own URL (`[http://x](http://x)`): what a
 * reader sees must not keep saying http:// once the link says https://. The same rule as for
 * `<a href>` text in HTML (`sameUrl`); other link text never changes.
 */
function linkTexts(source: string, tokens: readonly MarkdownToken[]): Occurrence[] {
  const found: Occurrence[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const link = tokens[i] as MarkdownToken;
    const label = tokens[i + 1];
    if (link.type !== 'link' || label?.type !== 'labelText' || label.start !== link.start + 1)
      continue;
    // The destination after the label: one inside it belongs to an image in the text.
    let destination: MarkdownToken | undefined;
    for (let j = i + 2; j < tokens.length && (tokens[j] as MarkdownToken).start < link.end; j++) {
      const t = tokens[j] as MarkdownToken;
      if (t.type === 'resourceDestinationString' && t.start >= label.end) {
        destination = t;
        break;
      }
    }
    const raw = source.slice(label.start, label.end);
    // Plain characters only: emphasis, code or markup in the text is not a bare URL.
    if (destination === undefined || !/^[^\s*`<>[\]]+$/.test(raw)) continue;
    const text = decodeWithMap(raw, MARKDOWN_ESCAPE, (t) => decodeString(t));
    const target = decodeString(source.slice(destination.start, destination.end));
    if (text.text !== decodeString(raw) || !isHttpUrl(text.text) || !sameUrl(text.text, target))
      continue;
    found.push(markdownOccurrence(text, label.start, 'markdown-link-text', escapeLinkText));
  }
  return found;
}

function markdownOccurrence(
  decoded: DecodedText,
  base: number,
  context: string,
  escape: (s: string) => string,
  refuse?: RegExp,
): Occurrence {
  return {
    start: base,
    end: base + decoded.raw.length,
    url: decoded.text,
    context,
    encode: (u) =>
      refuse?.test(u) === true ? null : respell(decoded, 0, decoded.text.length, u, escape),
  };
}

const escapeBare = (s: string): string =>
  s.replace(/[\\()<>&]/g, (c) => `\\${c}`).replace(/\s/g, (c) => encodeURIComponent(c));
const escapeInAngles = (s: string): string =>
  s.replace(/[\\<>&]/g, (c) => `\\${c}`).replace(/\n/g, '%0A');
const escapeLinkText = (s: string): string =>
  s.replace(/[\\[\]`*_<>&]/g, (c) => `\\${c}`).replace(/\s/g, (c) => encodeURIComponent(c));
