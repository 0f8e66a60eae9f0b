import { fstatSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { Option, type Command } from '../shared/commander.js';
import type { Engine } from '@httpsify/engine';
import {
  addRewriteEngineOptions,
  loadRewriteEngine,
  reportRegexRefusals,
  type RewriteEngineOptions,
} from '../shared/rewrite-engine.js';
import { BufferedOutput } from '../shared/output.js';
import { explanationRecord, rewriteRecord } from '../formats/jsonl.js';
import { explanationText, rewriteLine } from '../formats/text/rewrite.js';

interface RewriteOptions extends RewriteEngineOptions {
  format: 'text' | 'jsonl';
  explain?: boolean;
}

/** Exit statuses after a signal, as shells report them (128 + the signal's number). */
const SIGNAL_STATUS = { SIGINT: 130, SIGTERM: 143 } as const;

export function registerRewrite(program: Command): void {
  addRewriteEngineOptions(
    program
      .command('rewrite')
      .description(
        'rewrite URLs to HTTPS with the rulesets (URLs as arguments, or one per line on stdin)',
      )
      .argument('[urls...]', 'URLs to rewrite; read from stdin when none are given')
      .addOption(
        new Option('--format <format>', 'output format').choices(['text', 'jsonl']).default('text'),
      )
      .option(
        '--explain',
        'show for each URL the candidate rulesets in order and what each decided',
      ),
  ).action(async (urls: string[], options: RewriteOptions) => {
    if (urls.length === 0) checkStdinReadable();
    const layered = await loadRewriteEngine(options);
    const engine = layered.layers[layered.layers.length - 1]?.engine as Engine;
    const out = new BufferedOutput();
    let lineNumber = 0;
    let invalid = 0;
    // Regexes are judged when first run: report each refusal once, as it happens, and go on.
    const reportRefusals = (): void => reportRegexRefusals(layered);
    const handle = async (url: string): Promise<void> => {
      lineNumber++;
      try {
        await handleOne(url);
      } finally {
        reportRefusals();
      }
    };
    const handleOne = async (url: string): Promise<void> => {
      if (options.explain === true) {
        // Explain with the first layer in scope that rewrites, else the last one in scope.
        const inScope = layered.layersFor(url);
        const layer =
          inScope.find((l) => l.engine.rewrite(url) !== null) ?? inScope[inScope.length - 1];
        const explanation = (layer?.engine ?? engine).explain(url);
        await out.line(
          options.format === 'jsonl'
            ? explanationRecord(explanation)
            : explanationText(explanation),
        );
        return;
      }
      const r = layered.rewriteWithRuleset(url);
      if (options.format === 'jsonl') {
        await out.line(rewriteRecord(url, r));
        return;
      }
      // Text keeps one output line per input line; unparseable input passes through unchanged,
      // and is named on stderr (a blank line is only a separator): the run then exits 1.
      if (r.error !== undefined && url.trim() !== '') {
        invalid++;
        const where = urls.length > 0 ? 'argument' : `line ${lineNumber}`;
        if (invalid <= MAX_NAMED_INVALID)
          process.stderr.write(
            `httpsify: ${where}: ${r.error.length > 240 ? `${r.error.slice(0, 240)}…` : r.error}\n`,
          );
      }
      await out.line(rewriteLine(url, r));
    };
    if (urls.length > 0) {
      for (const url of urls) await handle(url);
    } else {
      await readLines(process.stdin, handle, out);
    }
    await out.flush();
    if (invalid > MAX_NAMED_INVALID)
      process.stderr.write(
        `httpsify: ${invalid} inputs were not valid URLs (the first ${MAX_NAMED_INVALID} are named above)\n`,
      );
    if (invalid > 0) process.exitCode = 1;
  });
}

/** How many invalid inputs text output names on stderr before it only counts them. */
const MAX_NAMED_INVALID = 20;

/**
 * Feeds `input` to `handle` line by line (breaks as readline's: \n, \r\n or \r) and streams the
 * answers: the output is flushed whenever the lines read so far are handled and no more input
 * is waiting, so a slow producer (`tail -f`) sees each answer as soon as it is worked out while a
 * file still goes out in large writes. SIGINT and SIGTERM stop reading, write every answer
 * already worked out, and exit 130 or 143. Binary input (a NUL byte) is refused.
 */
async function readLines(
  input: NodeJS.ReadStream,
  handle: (line: string) => Promise<void>,
  out: BufferedOutput,
): Promise<void> {
  let stopping = false;
  const onSignal = (signal: keyof typeof SIGNAL_STATUS): void => {
    if (stopping) process.exit(SIGNAL_STATUS[signal]); // a second signal: stop waiting for the reader
    stopping = true;
    input.pause();
    out.flushThen(() => process.exit(SIGNAL_STATUS[signal]));
  };
  const onInt = (): void => onSignal('SIGINT');
  const onTerm = (): void => onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let offset = 0;
  const lines = function* (text: string, final: boolean): Generator<string> {
    const re = /\r\n|\n|\r/g;
    let start = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      // A \r at the very end may be the first half of a \r\n split across two reads.
      if (!final && m[0] === '\r' && m.index === text.length - 1) break;
      yield text.slice(start, m.index);
      start = m.index + m[0].length;
    }
    pending = text.slice(start);
    if (final && pending !== '') {
      yield pending;
      pending = '';
    }
  };
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      const nul = chunk.indexOf(0);
      if (nul >= 0)
        throw new Error(
          `stdin is binary, not URLs one per line (a NUL byte at byte ${offset + nul})`,
        );
      offset += chunk.length;
      for (const line of lines(pending + decoder.write(chunk), false)) {
        if (stopping) return;
        await handle(line);
      }
      // Everything read so far is answered: if no more input is waiting, let it out now.
      if (input.readableLength === 0) await out.flush();
    }
    for (const line of lines(pending + decoder.end(), true)) await handle(line);
  } catch (err) {
    await out.flush();
    throw (err as NodeJS.ErrnoException).code !== undefined
      ? new Error(`cannot read stdin: ${(err as Error).message}`)
      : err;
  } finally {
    if (!stopping) {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    }
  }
}

/** `rewrite < DIR` reads nothing and would exit 0: refuse it as the usage error it is. */
function checkStdinReadable(): void {
  let isDirectory: boolean;
  try {
    isDirectory = fstatSync(0).isDirectory();
  } catch {
    return; // no stdin to judge (closed): reading it ends at once, as for an empty file
  }
  if (isDirectory)
    throw new Error(
      'stdin is a directory: give URLs one per line, e.g. httpsify rewrite < urls.txt, or as arguments',
    );
}
