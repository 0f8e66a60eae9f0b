import { isHttpUrl, type Occurrence } from './occurrence.js';

/** Characters that cannot be part of a URL written in running text. */
// eslint-disable-next-line no-control-regex -- control characters end a URL in running text
const URL_CHAR = /[^\s<>"`{}|\\^\u0000-\u001f\u007f\u00a0\u2000-\u200b\u2028\u2029\u3000]/u;
const TRAILING_PUNCTUATION = /[.,:;!?'*_~]/;
const CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/**
 * Finds http:// URLs in running text, the way a reader would delimit them: a URL starts at
 * `http://` not preceded by a letter or digit, runs until whitespace or a character URLs never
 * contain in text, and gives back trailing punctuation (`.`, `,`, `'`...) and closing brackets
 * that have no opening partner inside the URL (so `(see http://a.com/x)` ends before `)`).
 */
export function findUrlsInText(text: string, base = 0, context = 'text'): Occurrence[] {
  const found: Occurrence[] = [];
  const lower = text.toLowerCase();
  let from = 0;
  for (;;) {
    const at = lower.indexOf('http://', from);
    if (at < 0) break;
    from = at + 7;
    const before = at > 0 ? (text[at - 1] ?? '') : '';
    if (/[\p{L}\p{N}_+.-]/u.test(before)) continue;
    let end = at + 7;
    while (end < text.length) {
      const cp = text.codePointAt(end) as number;
      const ch = String.fromCodePoint(cp);
      if (!URL_CHAR.test(ch)) break;
      end += ch.length;
    }
    end = trimEnd(text, at, end);
    const raw = text.slice(at, end);
    if (!isHttpUrl(raw)) continue;
    found.push({
      start: base + at,
      end: base + end,
      url: raw,
      context,
      encode: (u) => (/[\s<>"`]/.test(u) ? null : u),
    });
    from = end;
  }
  return found;
}

function trimEnd(text: string, start: number, end: number): number {
  for (;;) {
    const last = text[end - 1] ?? '';
    if (end - start <= 7) return end;
    if (TRAILING_PUNCTUATION.test(last)) {
      end--;
      continue;
    }
    const opener = CLOSERS[last];
    if (opener !== undefined) {
      const body = text.slice(start, end);
      const opens = body.split(opener).length - 1;
      const closes = body.split(last).length - 1;
      if (closes > opens) {
        end--;
        continue;
      }
    }
    // An entity-like tail such as `&amp;` at the end stays: it is part of the URL as written.
    return end;
  }
}
