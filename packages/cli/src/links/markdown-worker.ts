import { parentPort } from 'node:worker_threads';
import { markdownTokens } from './scan-markdown.js';

/** Runs micromark off the main thread, so that a document it cannot finish in time can be given up. */
parentPort?.on('message', (message: { source: string }) => {
  // The parent's clock for this file starts now, not when the worker was created.
  parentPort?.postMessage({ started: true });
  try {
    parentPort?.postMessage({ tokens: markdownTokens(message.source) });
  } catch (err) {
    parentPort?.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
