import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DocumentError } from './document.js';
import { markdownTokens, type MarkdownToken } from './scan-markdown.js';

const WORKER = new URL('./markdown-worker.js', import.meta.url);

/** Time one Markdown file may take to parse. micromark reads a few MB/s, but some inputs make it quadratic. */
export const DEFAULT_PARSE_TIMEOUT_MS = 60_000;

/**
 * micromark in a worker thread, reused across files: a file that takes longer than the limit
 * (or exhausts the worker's memory) is given up, the worker replaced, and the run goes on.
 */
export class MarkdownParser {
  private worker: Worker | null = null;

  constructor(private readonly timeoutMs = DEFAULT_PARSE_TIMEOUT_MS) {}

  tokens(source: string): Promise<MarkdownToken[]> {
    // Run from TypeScript sources (tests importing src/), there is no compiled worker: parse here.
    if (!existsSync(fileURLToPath(WORKER))) return Promise.resolve(markdownTokens(source));
    if (this.worker === null) {
      this.worker = new Worker(WORKER, { resourceLimits: { maxOldGenerationSizeMb: 2048 } });
      // An idle worker does not keep the process alive; a pending parse keeps its timer.
      this.worker.unref();
    }
    const worker = this.worker;
    return new Promise<MarkdownToken[]>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      const discard = (): void => {
        if (this.worker === worker) this.worker = null;
        void worker.terminate();
      };
      const timer = setTimeout(() => {
        done();
        discard();
        reject(new DocumentError(`too complex: Markdown parsing did not finish within ${this.timeoutMs} ms (see --parse-timeout)`));
      }, this.timeoutMs);
      const onMessage = (message: { tokens?: MarkdownToken[]; error?: string }): void => {
        done();
        if (message.tokens !== undefined) resolve(message.tokens);
        else reject(new Error(message.error ?? 'the Markdown parser failed'));
      };
      const onError = (err: Error): void => {
        done();
        discard();
        reject(new Error(`the Markdown parser stopped: ${err.message}`));
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.postMessage({ source });
    });
  }
}
