import { type ArchiveContents, LibraryRefused } from './archive-entries.js';

/** What the archive worker answers. */
export type ArchiveReply =
  { ok: true; contents: ArchiveContents } | { ok: false; refused: boolean; message: string };

/** The parts of a Worker this needs (a fake in tests). */
export interface WorkerLike {
  onmessage: ((e: MessageEvent<ArchiveReply>) => void) | null;
  onerror: ((e: ErrorEvent) => void) | null;
  postMessage(message: ArrayBuffer, transfer: Transferable[]): void;
  terminate(): void;
}

/** The user pressed Cancel: nothing was imported. */
export class ArchiveCancelled extends Error {}

/** The worker script, next to the options page in the built extension. */
export const ARCHIVE_WORKER_URL = 'archive-worker.js';

/**
 * Reads an archive in a worker, so a hostile or merely large one never freezes the page, and
 * `signal` (the Cancel button) stops it at once by terminating the worker. The bytes are
 * transferred, not copied. Rejects with LibraryRefused (the archive's fault) or ArchiveCancelled.
 */
export function readArchiveOffThread(
  bytes: ArrayBuffer,
  signal: AbortSignal,
  createWorker: () => WorkerLike = () => new Worker(ARCHIVE_WORKER_URL, { type: 'module' }),
): Promise<ArchiveContents> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new ArchiveCancelled('cancelled'));
      return;
    }
    const worker = createWorker();
    const finish = (): void => {
      signal.removeEventListener('abort', onAbort);
      worker.terminate();
    };
    const onAbort = (): void => {
      finish();
      reject(new ArchiveCancelled('cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    worker.onmessage = (e) => {
      finish();
      const reply = e.data;
      if (reply.ok) resolve(reply.contents);
      else reject(reply.refused ? new LibraryRefused(reply.message) : new Error(reply.message));
    };
    worker.onerror = (e) => {
      finish();
      reject(new Error(`the archive reader stopped: ${e.message}`));
    };
    worker.postMessage(bytes, [bytes]);
  });
}
