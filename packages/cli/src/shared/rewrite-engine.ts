import { Option, type Command } from './commander.js';
import { type Engine } from '@httpsify/engine';
import { scopedEngineFromChannels, type ScopedEngine } from '@httpsify/engine/channels';
import {
  defaultRulesetsTimestamp,
  defaultStateDir,
  loadInstalledChannels,
} from '@httpsify/engine/node';
import { collect, loadRequiredRules } from './rules-option.js';

/** The options every command that rewrites URLs shares with `rewrite`. */
export interface RewriteEngineOptions {
  rules?: string[];
  enable?: string[];
  disable?: string[];
  mixedContent?: boolean;
  channels: boolean;
  stateDir?: string;
}

/** Declares `--rules`, `--enable`, `--disable`, `--mixed-content`, `--no-channels` and `--state-dir`. */
export function addRewriteEngineOptions(command: Command): Command {
  return command
    .option(
      '--rules <path>',
      'a directory of *.xml rulesets, one XML file or a compiled bundle (repeatable; default: the bundled rulesets)',
      collect,
    )
    .option('--enable <name>', 'turn a ruleset on (repeatable)', collect)
    .option('--disable <name>', 'turn a ruleset off (repeatable)', collect)
    .option('--mixed-content', 'turn on platform="mixedcontent" rulesets')
    .option(
      '--no-channels',
      'with the default rulesets, ignore rulesets installed by `httpsify update`',
    )
    .addOption(
      new Option(
        '--state-dir <dir>',
        'where `httpsify update` keeps installed channels (default: $XDG_STATE_HOME/httpsify)',
      ),
    );
}

/**
 * The engines to rewrite with: the `--rules` given; or the bundled defaults under the rulesets
 * that `httpsify update` installed from signed channels (each confined to its channel's scope).
 * `--enable`/`--disable` are applied to every layer that has the named ruleset.
 */
export async function loadRewriteEngine(options: RewriteEngineOptions): Promise<ScopedEngine> {
  const layered = await loadLayers(options);
  const engines = layered.layers.map((layer) => layer.engine);
  applyToggles(engines, options.enable ?? [], true);
  applyToggles(engines, options.disable ?? [], false);
  return layered;
}

async function loadLayers(options: RewriteEngineOptions): Promise<ScopedEngine> {
  const { engine } = loadRequiredRules(options.rules, {
    mixedContent: options.mixedContent === true,
  });
  const explicit = options.rules !== undefined && options.rules.length > 0;
  if (explicit || !options.channels)
    return scopedEngineFromChannels({ channels: [], useDefaults: true }, engine);
  const installed = await loadInstalledChannels(options.stateDir ?? defaultStateDir(), {
    defaultsTimestamp: defaultRulesetsTimestamp(),
  });
  for (const problem of installed.problems) process.stderr.write(`httpsify: ${problem}\n`);
  // Installed bundles passed signature verification when they were installed.
  return scopedEngineFromChannels(installed, engine, {
    mixedContent: options.mixedContent === true,
  });
}

function applyToggles(engines: Engine[], names: string[], on: boolean): void {
  for (const name of names) {
    const owners = engines.filter((e) => e.rulesetIdsByName(name).length > 0);
    if (owners.length === 0)
      throw new Error(
        `--${on ? 'enable' : 'disable'} ${JSON.stringify(name)}: no loaded ruleset has that name`,
      );
    for (const e of owners) e.setActive(name, on);
  }
}

/**
 * Prints each regex refusal of the engines on stderr, once (takeRegexRefusals hands each over
 * once): patterns are judged when first run, so every command that rewrites calls this as it
 * goes or when done, and goes on.
 */
export function reportRegexRefusals(engines: ScopedEngine | readonly Engine[]): void {
  const list = Array.isArray(engines)
    ? (engines as readonly Engine[])
    : (engines as ScopedEngine).layers.map((layer) => layer.engine);
  for (const e of list) {
    for (const r of e.takeRegexRefusals()) {
      process.stderr.write(
        `httpsify: error unsafe-regex: ruleset "${r.ruleset}" is not used: its pattern ${JSON.stringify(r.pattern)} is refused: ${r.reason}\n`,
      );
    }
  }
}
