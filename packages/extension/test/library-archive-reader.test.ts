import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { readArchive } from '../src/library/archive.js';
import {
  ArchiveCancelled,
  type ArchiveReply,
  readArchiveOffThread,
  type WorkerLike,
} from '../src/library/archive-reader.js';

/**
 * Stands in for the archive worker: runs the real reader when `answer` is called (so a test
 * decides whether Cancel comes first), and records termination.
 */
class FakeWorker implements WorkerLike {
  onmessage: ((e: MessageEvent<ArchiveReply>) => void) | null = null;
  onerror: ((e: ErrorEvent) => void) | null = null;
  received: ArrayBuffer | null = null;
  terminated = false;
  postMessage(message: ArrayBuffer): void {
    this.received = message;
  }
  terminate(): void {
    this.terminated = true;
  }
  answer(): void {
    let reply: ArchiveReply;
    try {
      reply = { ok: true, contents: readArchive(new Uint8Array(this.received as ArrayBuffer)) };
    } catch (e) {
      reply = { ok: false, refused: true, message: (e as Error).message };
    }
    this.onmessage?.({ data: reply } as MessageEvent<ArchiveReply>);
  }
}

const zip = () =>
  zipSync({
    'A.xml': strToU8(
      '<ruleset name="A"><target host="a.test"/><rule from="^http:" to="https:"/></ruleset>',
    ),
  }).buffer as ArrayBuffer;

describe('reading an archive off the main thread', () => {
  it('hands the bytes to the worker and returns what it read, then ends the worker', async () => {
    const worker = new FakeWorker();
    const reading = readArchiveOffThread(zip(), new AbortController().signal, () => worker);
    worker.answer();
    expect((await reading).files.map((f) => f.path)).toEqual(['A.xml']);
    expect(worker.terminated).toBe(true);
  });

  it('Cancel ends the worker at once and nothing is returned, even if it answers later', async () => {
    const worker = new FakeWorker();
    const cancel = new AbortController();
    const reading = readArchiveOffThread(zip(), cancel.signal, () => worker);
    cancel.abort();
    await expect(reading).rejects.toBeInstanceOf(ArchiveCancelled);
    expect(worker.terminated).toBe(true);
  });

  it('passes a refusal on as the archive refusal it is', async () => {
    const worker = new FakeWorker();
    const reading = readArchiveOffThread(
      new TextEncoder().encode('not an archive').buffer as ArrayBuffer,
      new AbortController().signal,
      () => worker,
    );
    worker.answer();
    await expect(reading).rejects.toThrow(/not a \.zip, \.tar or \.tar\.gz archive/);
  });
});
