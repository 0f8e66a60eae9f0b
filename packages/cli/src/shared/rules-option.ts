import {
  defaultRulesetsDir,
  loadPrebuiltDefaults,
  loadRulesets,
  type LoadedRulesets,
  type LoadOptions,
} from '@httpsify/engine/node';
import { formatDiagnostic } from '@httpsify/engine';
import { count } from './plural.js';
import type { ProgressBar } from './progress.js';

/** commander collector for repeatable options such as `--rules A --rules B`. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * Loads `--rules` paths (or the bundled defaults), printing every broken-ruleset diagnostic on
 * stderr: broken rulesets are reported and left out, the rest keep working.
 */
export function loadRulesOption(
  paths: readonly string[] | undefined,
  options: LoadOptions = {},
  /** Drawn as files are parsed; cleared before any diagnostic is printed. */
  progress?: ProgressBar,
): LoadedRulesets {
  const defaults = paths === undefined || paths.length === 0;
  // The defaults as the build compiled them (checksums verified); compiled here when stale.
  if (defaults && options.checkRegexes !== true) {
    const prebuilt = loadPrebuiltDefaults(options);
    if (prebuilt !== null) return prebuilt;
  }
  const loaded = loadRulesets(
    paths !== undefined && paths.length > 0 ? paths : [defaultRulesetsDir()],
    progress === undefined
      ? options
      : {
          ...options,
          onProgress: progress.steps({ read: 'rulesets read', compile: 'compiling the rulesets' }, [
            'compile',
          ]),
        },
  );
  progress?.clear();
  for (const d of loaded.diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error').length;
  if (errors > 0)
    process.stderr.write(
      `httpsify: ${count(errors, 'error')}; the affected rulesets were not loaded, ${count(loaded.engine.rulesetCount, 'ruleset')} ${loaded.engine.rulesetCount === 1 ? 'is' : 'are'} in use\n`,
    );
  return loaded;
}

/**
 * `loadRulesOption` for commands that are pointless without rulesets (rewrite, compile, dnr):
 * rewriting with nothing would pass every URL through as if it had been checked.
 */
export function loadRequiredRules(
  paths: readonly string[] | undefined,
  options: LoadOptions = {},
  progress?: ProgressBar,
): LoadedRulesets {
  const loaded = loadRulesOption(paths, options, progress);
  if (loaded.engine.rulesetCount === 0) {
    const where = paths !== undefined && paths.length > 0 ? paths.join(', ') : defaultRulesetsDir();
    const broken = loaded.diagnostics.some((d) => d.severity === 'error');
    throw new Error(
      `no ruleset could be loaded from ${where}${broken ? ' (errors above)' : ': no *.xml rulesets there'}`,
    );
  }
  return loaded;
}
