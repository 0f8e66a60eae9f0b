import { describe, expect, it } from 'vitest';
import { decodeUtf8, NotUtf8 } from '../src/library/utf8.js';

describe('decodeUtf8: strict, with the line of the first bad byte', () => {
  const bytes = (...parts: (string | number[])[]): Uint8Array =>
    Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
  const lineOf = (b: Uint8Array): number | string => {
    try {
      return decodeUtf8(b);
    } catch (err) {
      return (err as NotUtf8).line;
    }
  };

  it('names the line of the first byte that is not UTF-8', () => {
    expect(lineOf(bytes('a\nb\n<x>', [0xe9], '</x>\n', [0xff]))).toBe(3);
    // A sequence cut by a newline is wrong where it starts; one cut by the end, on the last line.
    expect(lineOf(bytes('a\n', [0xe2, 0x82], '\nb'))).toBe(2);
    expect(lineOf(bytes('a\nb\nc', [0xf0, 0x9f]))).toBe(3);
    expect(lineOf(bytes([0xed, 0xa0, 0x80]))).toBe(1);
    expect(() => decodeUtf8(bytes([0xc0, 0xaf]))).toThrow(NotUtf8);
  });

  it('takes UTF-8, U+FFFD written as such included; drops a BOM unless asked to keep it', () => {
    expect(decodeUtf8(bytes('caf', [0xc3, 0xa9], ' ', [0xef, 0xbf, 0xbd]))).toBe('café \uFFFD');
    expect(decodeUtf8(bytes([0xef, 0xbb, 0xbf], '<r/>'))).toBe('<r/>');
    expect(decodeUtf8(bytes([0xef, 0xbb, 0xbf], '<r/>'), { keepBom: true })).toBe('\uFEFF<r/>');
  });
});
