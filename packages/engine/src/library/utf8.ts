/** Bytes that are not UTF-8: `line` is where the first bad byte is (1-based). */
export class NotUtf8 extends Error {
  constructor(readonly line: number) {
    super(`not UTF-8 text (first bad byte on line ${line})`);
  }
}

const dropBom = new TextDecoder('utf-8', { fatal: true });
const keepBom = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * UTF-8 text of `bytes`. Malformed bytes are refused, never replaced with U+FFFD: a ruleset
 * decoded with a replacement character is not the one its author wrote. A BOM is dropped
 * unless `keepBom` (text that is edited and written back, or diffed, keeps its bytes).
 */
export function decodeUtf8(bytes: Uint8Array, options: { keepBom?: boolean } = {}): string {
  try {
    return (options.keepBom === true ? keepBom : dropBom).decode(bytes);
  } catch {
    throw new NotUtf8(lineOf(bytes, firstBadByte(bytes)));
  }
}

/**
 * Offset of the byte at which the platform's decoder gives up. Found by bisection with the
 * same decoder in streaming mode (a prefix cut inside a sequence is not an error there), so
 * the answer cannot disagree with what decodeUtf8 refused; this runs only for refused files.
 */
function firstBadByte(bytes: Uint8Array): number {
  let good = 0;
  let bad = bytes.length + 1;
  while (bad - good > 1) {
    const mid = Math.floor((good + bad) / 2);
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      good = mid;
    } catch {
      bad = mid;
    }
  }
  // Every prefix decodes: the text ends inside a sequence, which the last byte left open.
  return Math.min(good, bytes.length - 1);
}

function lineOf(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  return line;
}
