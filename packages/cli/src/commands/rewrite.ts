import { fstatSync } from 'node:fs';
import { Option, type Command } from '../shared/commander.js';
import { formatExplanation, type Engine } from '@httpsify/engine';
import { addRewriteEngineOptions, loadRewriteEngine, reportRegexRefusals, type RewriteEngineOptions } from '../shared/rewrite-engine.js';
import { BufferedOutput } from '../shared/output.js';

interface RewriteOptions extends RewriteEngineOptions {
  format: 'text' | 'jsonl';
  explain?: boolean;
}

export function registerRewrite(program: Command): void {
  addRewriteEngineOptions(
    program
      .command('rewrite')
      .description('rewrite URLs to HTTPS with the rulesets (URLs as arguments, or one per line on stdin)')
      .argument('[urls...]', 'URLs to rewrite; read from stdin when none are given')
      .addOption(new Option('--format <format>', 'output format').choices(['text', 'jsonl']).default('text'))
      .option('--explain', 'show for each URL the candidate rulesets in order and what each decided'),
  ).action(async (urls: string[], options: RewriteOptions) => {
    if (urls.length === 0) checkStdinReadable();
    const layered = await loadRewriteEngine(options);
    const engine = layered.layers[layered.layers.length - 1]?.engine as Engine;
    const out = new BufferedOutput();
    // Regexes are judged when first run: report each refusal once, as it happens, and go on.
    const reportRefusals = (): void => reportRegexRefusals(layered);
    const handle = async (url: string): Promise<void> => {
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
        const layer = inScope.find((l) => l.engine.rewrite(url) !== null) ?? inScope[inScope.length - 1];
        const explanation = (layer?.engine ?? engine).explain(url);
        await out.line(options.format === 'jsonl' ? JSON.stringify(explanation) : formatExplanation(explanation));
        return;
      }
      if (options.format === 'jsonl') {
        const r = layered.rewriteWithRuleset(url);
        const record: Record<string, unknown> = { url, rewritten: r.rewritten, ruleset: r.ruleset };
        if (r.channel !== null) record['channel'] = r.channel;
        if (r.error !== undefined) record['error'] = r.error;
        // A channel rule that would have sent the URL outside its channel's scope and destinations.
        if (r.refused !== undefined) record['refused'] = r.refused;
        await out.line(JSON.stringify(record));
        return;
      }
      // Text keeps one output line per input line; unparseable input passes through unchanged.
      await out.line(layered.rewrite(url) ?? url);
    };
    if (urls.length > 0) {
      for (const url of urls) await handle(url);
    } else {
      // Loaded here: a call with URLs as arguments does not need it.
      const { createInterface } = await import('node:readline');
      const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
      // readline ends quietly on a read error: surface it instead of exiting 0 with nothing done.
      let readError: Error | undefined;
      process.stdin.once('error', (err) => (readError = err));
      for await (const line of lines) await handle(line);
      if (readError !== undefined) throw new Error(`cannot read stdin: ${readError.message}`);
    }
    await out.flush();
  });
}

/** `rewrite < DIR` reads nothing and would exit 0: refuse it as the usage error it is. */
function checkStdinReadable(): void {
  let isDirectory: boolean;
  try {
    isDirectory = fstatSync(0).isDirectory();
  } catch {
    return; // no stdin to judge (closed): reading it ends at once, as for an empty file
  }
  if (isDirectory) throw new Error('stdin is a directory: give URLs one per line, e.g. httpsify rewrite < urls.txt, or as arguments');
}
