/** What the options page asks about the imported ruleset library (over the UI port; see ui-protocol.ts). */
import type { FileProblem, LibraryFile } from './archive-entries.js';
import type { LibraryProgress } from './library-compile.js';
import type { LibraryInfo } from './library-store.js';

export type LibraryRequest =
  /**
   * Starts an import: the folder's or archive's name, and what the page already passed over
   * while unpacking (non-XML entries, entries it could not read).
   */
  | { type: 'libraryBegin'; name: string; skipped: number; problems: FileProblem[] }
  /** A batch of files of the import under way (a few MB at a time: ports carry JSON). */
  | { type: 'libraryFiles'; upload: number; files: LibraryFile[] }
  /**
   * Compiles the import and answers what it would change (`{ preview }`, library-preview.ts);
   * nothing is stored yet. Progress arrives as `{ progress }` messages on the port.
   */
  | { type: 'libraryFinish'; upload: number }
  /** Stores the previewed import, all of it or without its rulesets that leave their sites or go to HTTP. */
  | { type: 'libraryApply'; upload: number; withoutCrossSite: boolean }
  /** Drops the previewed import: nothing changes. */
  | { type: 'libraryDiscard'; upload: number }
  /**
   * Sent while the preview is open: keeps an idle background (Firefox's event page, Chromium's
   * worker: 30 s) from ending with the previewed import in memory; `{ held }` says it still is.
   */
  | { type: 'libraryHold'; upload: number }
  | { type: 'libraryStatus' }
  | { type: 'librarySetEnabled'; enabled: boolean }
  | { type: 'libraryRemove' };

export const LIBRARY_REQUEST_TYPES = [
  'libraryBegin',
  'libraryFiles',
  'libraryFinish',
  'libraryApply',
  'libraryDiscard',
  'libraryHold',
  'libraryStatus',
  'librarySetEnabled',
  'libraryRemove',
] as const;

export function isLibraryRequest(request: { type: string }): request is LibraryRequest {
  return (LIBRARY_REQUEST_TYPES as readonly string[]).includes(request.type);
}

/** The options page's view of the library. */
export interface LibraryStatus {
  info: LibraryInfo | null;
  /** Why it is not used at all (damaged storage). */
  problem: string | null;
  /** Chromium: why only part of it (or none) is applied as browser rules. */
  platformProblem: string | null;
  /** Chromium: its rulesets that work for page loads only (through the handoff page), by name. */
  pageLoadsOnly: string[];
}

export type { LibraryInfo, LibraryProgress };
export type { LibraryPreview } from './library-preview.js';
