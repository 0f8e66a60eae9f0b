import { defaultRulesetsDir, loadRulesets, type LoadedRulesets, type LoadOptions } from '@httpsify/engine/node';
import { formatDiagnostic } from '@httpsify/engine';

/** commander collector for repeatable options such as `--rules A --rules B`. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * Loads `--rules` paths (or the bundled defaults), printing every broken-ruleset diagnostic on
 * stderr: broken rulesets are reported and left out, the rest keep working.
 */
export function loadRulesOption(paths: readonly string[] | undefined, options: LoadOptions = {}): LoadedRulesets {
  const loaded = loadRulesets(paths !== undefined && paths.length > 0 ? paths : [defaultRulesetsDir()], options);
  for (const d of loaded.diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error').length;
  if (errors > 0) process.stderr.write(`httpsify: ${errors} error(s); the affected rulesets were not loaded, ${loaded.engine.rulesetCount} rulesets are in use\n`);
  return loaded;
}
