import { parse, parseFragment, type DefaultTreeAdapterMap } from 'parse5';
import { decodeHTML, decodeHTMLAttribute } from 'entities';
import { decodeWithMap, respell, type DecodedText } from './decoded-text.js';
import { isHttpUrl, sameUrl, type Occurrence } from './occurrence.js';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

/** Attributes whose whole value is one URL (on any element: `cite`, `action`, `poster`...). */
const URL_ATTRIBUTES = new Set([
  'href',
  'src',
  'action',
  'formaction',
  'poster',
  'cite',
  'background',
  'longdesc',
  'manifest',
  'codebase',
  'profile',
  'icon',
  'xlink:href',
]);
/** Attributes holding a list of `URL descriptor` candidates. */
const SRCSET_ATTRIBUTES = new Set(['srcset', 'imagesrcset']);
/** Character references, and CR LF / CR, which the parser reads as LF. */
const DECODED_TOKEN = /&(?:#[xX][0-9a-fA-F]+;?|#[0-9]+;?|[A-Za-z][A-Za-z0-9]*;?)|\r\n?/;

/**
 * Finds http:// URLs in the URL attributes of an HTML document (`href`, `src`, `srcset`,
 * `action`...; `data` on `<object>`), parsed by parse5 as a browser would. Text is not
 * touched (but for link text that is the link's own URL, `linkText`), so URLs shown inside
 * `<code>`, `<pre>`, scripts, styles and comments stay as they are; the attributes of elements inside `<pre>`/`<code>` are real links and are handled.
 * `fragment` parses a piece of HTML found inside Markdown.
 */
export function findUrlsInHtml(source: string, base = 0, fragment = false): Occurrence[] {
  const options = { sourceCodeLocationInfo: true, scriptingEnabled: false } as const;
  const root = fragment ? parseFragment(source, options) : parse(source, options);
  const found: Occurrence[] = [];
  // An explicit stack: hostile documents nest deeper than the call stack goes.
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if ('tagName' in node) {
      attributesOf(node, source, base, found);
      if (node.tagName === 'a') linkText(node, source, base, found);
    }
    if ('childNodes' in node) for (const child of node.childNodes) stack.push(child);
    if ('content' in node && node.nodeName === 'template')
      stack.push((node as DefaultTreeAdapterMap['template']).content);
  }
  return found.sort((a, b) => a.start - b.start);
}

/**
 * Where the comments of an HTML document (or `fragment`) are, `<!--` to `-->`, as offsets
 * shifted by `base`: the places `httpsify-ignore-…` markers count (inline-ignores.ts). Parsed
 * as for links, so `<!--` inside a script or an attribute value is not a comment.
 */
export function htmlComments(
  source: string,
  base = 0,
  fragment = false,
): { start: number; end: number }[] {
  const options = { sourceCodeLocationInfo: true, scriptingEnabled: false } as const;
  const root = fragment ? parseFragment(source, options) : parse(source, options);
  const found: { start: number; end: number }[] = [];
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const loc =
      node.nodeName === '#comment'
        ? (node as DefaultTreeAdapterMap['commentNode']).sourceCodeLocation
        : undefined;
    if (loc !== undefined && loc !== null)
      found.push({ start: base + loc.startOffset, end: base + loc.endOffset });
    if ('childNodes' in node) for (const child of node.childNodes) stack.push(child);
    if ('content' in node && node.nodeName === 'template')
      stack.push((node as DefaultTreeAdapterMap['template']).content);
  }
  return found.sort((a, b) => a.start - b.start);
}

function attributesOf(element: Element, source: string, base: number, found: Occurrence[]): void {
  const locations = element.sourceCodeLocation?.attrs;
  if (locations === undefined) return;
  for (const attr of element.attrs) {
    const name =
      attr.prefix !== undefined && attr.prefix !== '' ? `${attr.prefix}:${attr.name}` : attr.name;
    const isList = SRCSET_ATTRIBUTES.has(name);
    if (!isList && !URL_ATTRIBUTES.has(name) && !(name === 'data' && element.tagName === 'object'))
      continue;
    if (!/http:\/\//i.test(attr.value)) continue;
    const loc = locations[name];
    if (loc === undefined) continue;
    const value = rawValue(source, loc.startOffset, loc.endOffset);
    if (value === null) continue;
    const decoded = decodeWithMap(value.raw, DECODED_TOKEN, (t) =>
      t[0] === '\r' ? '\n' : decodeHTMLAttribute(t),
    );
    if (decoded.text !== attr.value) {
      // The map disagrees with the parser: report the value's URLs, but never write into it.
      for (const [from, to] of isList ? srcsetUrls(attr.value) : [trimmed(attr.value)]) {
        const url = attr.value.slice(from, to);
        if (isHttpUrl(url))
          found.push({
            start: base + value.offset,
            end: base + value.offset + value.raw.length,
            url,
            context: `html-attribute:${name}`,
            encode: () => null,
          });
      }
      continue;
    }
    const escape =
      value.quote === '"'
        ? escapeDoubleQuoted
        : value.quote === "'"
          ? escapeSingleQuoted
          : escapeUnquoted;
    const ranges = isList ? srcsetUrls(decoded.text) : [trimmed(decoded.text)];
    for (const [from, to] of ranges) {
      const url = decoded.text.slice(from, to);
      if (!isHttpUrl(url)) continue;
      found.push(
        occurrence(decoded, from, to, base + value.offset, `html-attribute:${name}`, escape),
      );
    }
  }
}

/**
 * The text of `<a href="http://x">http://x</a>`, when it is exactly the link's own URL (as
 * WHATWG parses both): it changes with the link, so the page does not show http:// for an
 * https:// link. Any other text stays, as everywhere else.
 */
function linkText(element: Element, source: string, base: number, found: Occurrence[]): void {
  const href = element.attrs.find((a) => a.name === 'href' && (a.prefix ?? '') === '')?.value;
  const [child] = element.childNodes;
  if (
    href === undefined ||
    element.childNodes.length !== 1 ||
    child === undefined ||
    child.nodeName !== '#text'
  )
    return;
  const node = child as DefaultTreeAdapterMap['textNode'];
  const loc = node.sourceCodeLocation;
  if (loc === undefined || loc === null) return;
  const decoded = decodeWithMap(source.slice(loc.startOffset, loc.endOffset), DECODED_TOKEN, (t) =>
    t[0] === '\r' ? '\n' : decodeHTML(t),
  );
  if (decoded.text !== node.value) return; // the map disagrees with the parser: never write into it
  const [from, to] = trimmed(decoded.text);
  const url = decoded.text.slice(from, to);
  if (!isHttpUrl(url) || /\s/.test(url) || !sameUrl(url, href.trim())) return;
  found.push(occurrence(decoded, from, to, base + loc.startOffset, 'html-link-text', escapeText));
}

function occurrence(
  decoded: DecodedText,
  from: number,
  to: number,
  rawBase: number,
  context: string,
  escape: (s: string) => string,
): Occurrence {
  return {
    start: rawBase + (decoded.rawOffset[from] as number),
    end: rawBase + (decoded.rawOffset[to] as number),
    url: decoded.text.slice(from, to),
    context,
    encode: (u) =>
      context.endsWith('srcset') && /[\s,]/.test(u) ? null : respell(decoded, from, to, u, escape),
  };
}

/** The raw value of `name="value"` (or '…', or unquoted) spanning [start, end) of `source`. */
function rawValue(
  source: string,
  start: number,
  end: number,
): { raw: string; offset: number; quote: string } | null {
  const text = source.slice(start, end);
  const eq = /^[^=\s]*\s*=\s*/.exec(text);
  if (eq === null) return null;
  let at = eq[0].length;
  const quote = text[at] === '"' || text[at] === "'" ? (text[at] as string) : '';
  if (quote !== '') at++;
  const stop = quote !== '' && text.endsWith(quote) ? text.length - 1 : text.length;
  return { raw: text.slice(at, stop), offset: start + at, quote };
}

/** URL attribute values are stripped of leading and trailing ASCII whitespace. */
function trimmed(text: string): [number, number] {
  let from = 0;
  let to = text.length;
  while (from < to && /[\t\n\f\r ]/.test(text[from] as string)) from++;
  while (to > from && /[\t\n\f\r ]/.test(text[to - 1] as string)) to--;
  return [from, to];
}

/** The URL of each image candidate in a srcset value (HTML's "parse a srcset attribute"). */
export function srcsetUrls(text: string): [number, number][] {
  const urls: [number, number][] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /[\t\n\f\r ,]/.test(text[i] as string)) i++;
    const start = i;
    while (i < text.length && !/[\t\n\f\r ]/.test(text[i] as string)) i++;
    let end = i;
    let commaEnded = false;
    while (end > start && text[end - 1] === ',') {
      end--;
      commaEnded = true;
    }
    if (end > start) urls.push([start, end]);
    if (commaEnded) continue;
    // Descriptors run to the next comma outside parentheses.
    let depth = 0;
    while (i < text.length) {
      const c = text[i] as string;
      if (c === '(') depth++;
      else if (c === ')' && depth > 0) depth--;
      else if (c === ',' && depth === 0) break;
      i++;
    }
  }
  return urls;
}

const escapeDoubleQuoted = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
const escapeSingleQuoted = (s: string): string => s.replace(/&/g, '&amp;').replace(/'/g, '&#39;');
const escapeUnquoted = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/[\s"'=<>`]/g, (c) => `&#${c.charCodeAt(0)};`);
const escapeText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
