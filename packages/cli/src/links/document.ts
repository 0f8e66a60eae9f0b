import { readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import type { Occurrence } from './occurrence.js';
import { findUrlsInHtml } from './scan-html.js';
import { findUrlsInMarkdown } from './scan-markdown.js';
import { findUrlsInText } from './scan-text.js';

export type DocumentKind = 'markdown' | 'html' | 'text';

const KINDS: Record<string, DocumentKind> = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdown': 'markdown',
  '.mkd': 'markdown',
  '.mkdn': 'markdown',
  '.html': 'html',
  '.htm': 'html',
  '.xhtml': 'html',
  '.txt': 'text',
  '.text': 'text',
};

/** The kind of a file by its extension; null for files a directory walk skips. */
export function kindOf(path: string): DocumentKind | null {
  return KINDS[extname(path).toLowerCase()] ?? null;
}

/** Larger files are refused: documents are small, and the parsers hold the whole file. */
export const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;

const UTF8_BOM = '\ufeff';

/** A document as read: its text without the BOM, and what is needed to write it back byte for byte. */
export interface LoadedDocument {
  text: string;
  bom: boolean;
  mode: number;
}

/** Why a file was not read, in words for the report. */
export class DocumentError extends Error {}

/**
 * Reads a document for scanning. Only UTF-8 (with or without a BOM, which ASCII includes) is
 * accepted, because a file is written back by re-encoding its text: any other encoding, and
 * binary files, are refused with a reason rather than risk changing bytes outside the URLs.
 */
export function readDocument(path: string, maxBytes = DEFAULT_MAX_BYTES): LoadedDocument {
  let size: number;
  let mode: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new DocumentError('not a regular file');
    size = stat.size;
    mode = stat.mode & 0o7777;
  } catch (err) {
    throw err instanceof DocumentError ? err : new DocumentError(describeFsError(err));
  }
  if (size > maxBytes)
    throw new DocumentError(`too large (${size} bytes; the limit is ${maxBytes}, see --max-size)`);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new DocumentError(describeFsError(err));
  }
  if (bytes.length > maxBytes)
    throw new DocumentError(
      `too large (${bytes.length} bytes; the limit is ${maxBytes}, see --max-size)`,
    );
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    throw new DocumentError('UTF-16 text is not supported; only UTF-8 files are read');
  if (bytes.subarray(0, 8192).includes(0))
    throw new DocumentError('binary file (contains NUL bytes)');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new DocumentError('not valid UTF-8; only UTF-8 files are read');
  }
  const bom = text.startsWith(UTF8_BOM);
  return { text: bom ? text.slice(1) : text, bom, mode };
}

/** The bytes of a document's (possibly edited) text, with its BOM if it had one. */
export function encodeDocument(text: string, bom: boolean): Buffer {
  return Buffer.from(bom ? UTF8_BOM + text : text, 'utf8');
}

export function findUrls(kind: DocumentKind, text: string): Occurrence[] {
  if (kind === 'markdown') return findUrlsInMarkdown(text);
  if (kind === 'html') return findUrlsInHtml(text);
  return findUrlsInText(text);
}

export function describeFsError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ELOOP':
      return 'too many levels of symbolic links (a symlink loop?)';
    case 'EISDIR':
      return 'is a directory';
    default:
      return e.message ?? String(err);
  }
}
