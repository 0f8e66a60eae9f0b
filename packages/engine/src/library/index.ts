// Reading a ruleset library (a folder's files, .zip, .tar, .tar.gz) within limits: browser-safe,
// shared by the extension's import and the CLI's --rules (through @httpsify/engine/node).
export { archiveKind, gunzipBounded, readArchive, readTar, type ArchiveKind } from './archive.js';
export {
  EntryCollector,
  LIBRARY_LIMITS,
  LibraryRefused,
  mb,
  safePath,
  type ArchiveContents,
  type FileProblem,
  type LibraryFile,
  type Limits,
} from './archive-entries.js';
export { readZip } from './archive-zip.js';
export { decodeUtf8, NotUtf8 } from './utf8.js';
