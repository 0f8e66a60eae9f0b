import { createInterface } from 'node:readline';
import { Option, type Command } from 'commander';
import { formatExplanation, type Engine } from '@httpsify/engine';
import { collect, loadRulesOption } from '../shared/rules-option.js';
import { BufferedOutput } from '../shared/output.js';

interface RewriteOptions {
  rules?: string[];
  format: 'text' | 'jsonl';
  explain?: boolean;
  enable?: string[];
  disable?: string[];
  mixedContent?: boolean;
}

export function registerRewrite(program: Command): void {
  program
    .command('rewrite')
    .description('rewrite URLs to HTTPS with the rulesets (URLs as arguments, or one per line on stdin)')
    .argument('[urls...]', 'URLs to rewrite; read from stdin when none are given')
    .option('--rules <path>', 'a directory of *.xml rulesets, one XML file or a compiled bundle (repeatable; default: the bundled rulesets)', collect)
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'jsonl']).default('text'))
    .option('--explain', 'show for each URL the candidate rulesets in order and what each decided')
    .option('--enable <name>', 'turn a ruleset on (repeatable)', collect)
    .option('--disable <name>', 'turn a ruleset off (repeatable)', collect)
    .option('--mixed-content', 'turn on platform="mixedcontent" rulesets')
    .action(async (urls: string[], options: RewriteOptions) => {
      const { engine } = loadRulesOption(options.rules, { mixedContent: options.mixedContent === true });
      applyToggles(engine, options.enable ?? [], true);
      applyToggles(engine, options.disable ?? [], false);
      const out = new BufferedOutput();
      const handle = async (url: string): Promise<void> => {
        if (options.explain === true) {
          const explanation = engine.explain(url);
          await out.line(options.format === 'jsonl' ? JSON.stringify(explanation) : formatExplanation(explanation));
          return;
        }
        if (options.format === 'jsonl') {
          const r = engine.rewriteWithRuleset(url);
          const record: Record<string, unknown> = { url, rewritten: r.rewritten, ruleset: r.ruleset };
          if (r.error !== undefined) record['error'] = r.error;
          await out.line(JSON.stringify(record));
          return;
        }
        // Text keeps one output line per input line; unparseable input passes through unchanged.
        await out.line(engine.rewrite(url) ?? url);
      };
      if (urls.length > 0) {
        for (const url of urls) await handle(url);
      } else {
        const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
        for await (const line of lines) await handle(line);
      }
      await out.flush();
    });
}

function applyToggles(engine: Engine, names: string[], on: boolean): void {
  for (const name of names) {
    if (engine.rulesetIdsByName(name).length === 0) throw new Error(`--${on ? 'enable' : 'disable'} ${JSON.stringify(name)}: no loaded ruleset has that name`);
    engine.setActive(name, on);
  }
}
