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
 * The limit is the file's own parse time: its clock starts when the worker says it began this
 * file, so neither a new worker's start-up nor the end of the one given up counts against it.
 */
export class MarkdownParser {
  private worker: Worker | null = null;
  /** The termination of a worker given up: the next file waits for it to have stopped. */
  private stopping: Promise<unknown> = Promise.resolve();

  constructor(private readonly timeoutMs = DEFAULT_PARSE_TIMEOUT_MS) {}

  async tokens(source: string): Promise<MarkdownToken[]> {
    // Run from TypeScript sources (tests importing src/), there is no compiled worker: parse here.
    if (!existsSync(fileURLToPath(WORKER))) return markdownTokens(source);
    await this.stopping;
    if (this.worker === null) {
      this.worker = new Worker(WORKER, { resourceLimits: { maxOldGenerationSizeMb: 2048 } });
    }
    const worker = this.worker;
    // A pending parse keeps the process alive; an idle worker does not (unref in done()).
    worker.ref();
    return new Promise<MarkdownToken[]>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        worker.unref();
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      const discard = (): void => {
        if (this.worker === worker) this.worker = null;
        this.stopping = worker.terminate();
      };
      const onMessage = (message: {
        started?: true;
        tokens?: MarkdownToken[];
        error?: string;
      }): void => {
        if (message.started === true) {
          timer = setTimeout(() => {
            done();
            discard();
            reject(
              new DocumentError(
                `too complex: Markdown parsing did not finish within ${this.timeoutMs} ms (see --parse-timeout)`,
              ),
            );
          }, this.timeoutMs);
          return;
        }
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
