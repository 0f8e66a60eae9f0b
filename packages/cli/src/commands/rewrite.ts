import { createInterface } from 'node:readline';
import { Option, type Command } from 'commander';
import { formatExplanation, scopedEngineFromChannels, type Engine, type ScopedEngine } from '@httpsify/engine';
import { defaultRulesetsTimestamp, defaultStateDir, loadInstalledChannels } from '@httpsify/engine/node';
import { collect, loadRulesOption } from '../shared/rules-option.js';
import { BufferedOutput } from '../shared/output.js';

interface RewriteOptions {
  rules?: string[];
  format: 'text' | 'jsonl';
  explain?: boolean;
  enable?: string[];
  disable?: string[];
  mixedContent?: boolean;
  channels: boolean;
  stateDir?: string;
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
    .option('--no-channels', 'with the default rulesets, ignore rulesets installed by `httpsify update`')
    .option('--state-dir <dir>', 'where `httpsify update` keeps installed channels (default: $XDG_STATE_HOME/httpsify)')
    .action(async (urls: string[], options: RewriteOptions) => {
      const layered = await loadLayers(options);
      const engines = layered.layers.map((layer) => layer.engine);
      applyToggles(engines, options.enable ?? [], true);
      applyToggles(engines, options.disable ?? [], false);
      const engine = engines[engines.length - 1] as Engine;
      const out = new BufferedOutput();
      // Regexes are judged when first run: report each refusal once, as it happens, and go on.
      const reportRefusals = (): void => {
        for (const e of engines) {
          for (const r of e.takeRegexRefusals()) {
            process.stderr.write(`httpsify: error unsafe-regex: ruleset "${r.ruleset}" is not used: its pattern ${JSON.stringify(r.pattern)} is refused: ${r.reason}\n`);
          }
        }
      };
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
          await out.line(JSON.stringify(record));
          return;
        }
        // Text keeps one output line per input line; unparseable input passes through unchanged.
        await out.line(layered.rewrite(url) ?? url);
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

/**
 * The engines to rewrite with: the `--rules` given; or the bundled defaults under the rulesets
 * that `httpsify update` installed from signed channels (each confined to its channel's scope).
 */
async function loadLayers(options: RewriteOptions): Promise<ScopedEngine> {
  const { engine } = loadRulesOption(options.rules, { mixedContent: options.mixedContent === true });
  const explicit = options.rules !== undefined && options.rules.length > 0;
  if (explicit || !options.channels) return scopedEngineFromChannels({ channels: [], useDefaults: true }, engine);
  const installed = await loadInstalledChannels(options.stateDir ?? defaultStateDir(), { defaultsTimestamp: defaultRulesetsTimestamp() });
  for (const problem of installed.problems) process.stderr.write(`httpsify: ${problem}\n`);
  // Installed bundles passed signature verification when they were installed.
  return scopedEngineFromChannels(installed, engine, { mixedContent: options.mixedContent === true });
}

function applyToggles(engines: Engine[], names: string[], on: boolean): void {
  for (const name of names) {
    const owners = engines.filter((e) => e.rulesetIdsByName(name).length > 0);
    if (owners.length === 0) throw new Error(`--${on ? 'enable' : 'disable'} ${JSON.stringify(name)}: no loaded ruleset has that name`);
    for (const e of owners) e.setActive(name, on);
  }
}
