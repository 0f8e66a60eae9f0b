/**
 * Text with escapes or character references decoded, keeping where each decoded character came
 * from, so that a URL rewritten in decoded form can be written back changing only what changed.
 */
export interface DecodedText {
  text: string;
  raw: string;
  /** rawOffset[i]: offset in `raw` where decoded character i starts; rawOffset[text.length] = raw.length. */
  rawOffset: number[];
  /** boundary[i]: decoded index i starts a raw token (not the middle of a multi-character reference). */
  boundary: boolean[];
}

/** Decodes `raw` token by token: `pattern` matches an escape or reference, `decode` gives its text. */
export function decodeWithMap(
  raw: string,
  pattern: RegExp,
  decode: (token: string) => string,
): DecodedText {
  const rawOffset: number[] = [];
  const boundary: boolean[] = [];
  let text = '';
  let last = 0;
  const push = (piece: string, at: number, single: boolean): void => {
    for (let k = 0; k < piece.length; k++) {
      rawOffset.push(single ? at + k : at);
      boundary.push(single || k === 0);
    }
    text += piece;
  };
  const re = new RegExp(
    pattern.source,
    pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`,
  );
  for (let m = re.exec(raw); m !== null; m = re.exec(raw)) {
    if (m[0] === '') {
      re.lastIndex++;
      continue;
    }
    push(raw.slice(last, m.index), last, true);
    push(decode(m[0]), m.index, false);
    last = m.index + m[0].length;
  }
  push(raw.slice(last), last, true);
  rawOffset.push(raw.length);
  boundary.push(true);
  return { text, raw, rawOffset, boundary };
}

/** Identity decoding: plain text, autolinks. */
export function undecoded(raw: string): DecodedText {
  return decodeWithMap(raw, /(?!)/, (t) => t);
}

/**
 * The raw spelling of `newText` replacing decoded [from, to) of `decoded`: the longest tail that
 * both share keeps its raw bytes; the changed head is written with `escape`.
 */
export function respell(
  decoded: DecodedText,
  from: number,
  to: number,
  newText: string,
  escape: (s: string) => string,
): string {
  const old = decoded.text.slice(from, to);
  let common = 0;
  const max = Math.min(old.length, newText.length);
  while (common < max && old[old.length - 1 - common] === newText[newText.length - 1 - common])
    common++;
  // The kept tail must start on a raw token boundary.
  while (common > 0 && decoded.boundary[to - common] !== true) common--;
  const tailRawStart = decoded.rawOffset[to - common] as number;
  const tailRawEnd = decoded.rawOffset[to] as number;
  return (
    escape(newText.slice(0, newText.length - common)) + decoded.raw.slice(tailRawStart, tailRawEnd)
  );
}
