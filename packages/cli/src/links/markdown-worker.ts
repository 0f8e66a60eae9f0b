import { parentPort } from 'node:worker_threads';
import { markdownTokens } from './scan-markdown.js';

/** Runs micromark off the main thread, so that a document it cannot finish in time can be given up. */
parentPort?.on('message', (message: { source: string }) => {
  try {
    parentPort?.postMessage({ tokens: markdownTokens(message.source) });
  } catch (err) {
    parentPort?.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
