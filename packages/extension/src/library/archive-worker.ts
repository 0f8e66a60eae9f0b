import { LibraryRefused } from './archive-entries.js';
import { readArchive } from './archive.js';
import type { ArchiveReply } from './archive-reader.js';

/**
 * Unpacks one archive off the options page's main thread (ui/archive-worker.js): the page stays
 * responsive, and its Cancel button ends the work by terminating this worker.
 */
/** What this script uses of the worker's global scope (the DOM typings call it a Window). */
interface WorkerScope {
  onmessage: ((e: MessageEvent<ArrayBuffer>) => void) | null;
  postMessage(reply: ArchiveReply): void;
}
const scope: WorkerScope = self;
scope.onmessage = (e) => {
  try {
    scope.postMessage({ ok: true, contents: readArchive(new Uint8Array(e.data)) });
  } catch (err) {
    scope.postMessage({
      ok: false,
      refused: err instanceof LibraryRefused,
      message: err instanceof Error ? err.message : String(err),
    });
  }
};
