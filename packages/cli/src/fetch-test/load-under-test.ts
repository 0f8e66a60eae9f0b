import { resolve } from 'node:path';
import { createEngine, type Diagnostic, type Engine, type Ruleset } from '@httpsify/engine';
import { checkRulesetRegexes, parseRulesetXml } from '@httpsify/engine/parse';
import { loadRulesets } from '@httpsify/engine/node';
import { expandRulesetPaths, readRulesetFile } from '../authoring/ruleset-files.js';

export interface LoadedForFetchTest {
  /** The rulesets whose tests are fetched. */
  tested: Ruleset[];
  /** Off-by-default rulesets left out (unless asked for). */
  skippedDefaultOff: Ruleset[];
  /** Every loaded ruleset (tested ones on), for rewriting redirect targets. */
  engine: Engine;
  diagnostics: Diagnostic[];
}

/**
 * Parses the files under test the way `httpsify test` does, and adds `--rules` rulesets (XML or
 * a bundle) that only take part in rewriting redirects. A file given both ways counts once.
 */
export function loadForFetchTest(
  paths: readonly string[],
  rules: readonly string[],
  options: { includeDefaultOff?: boolean } = {},
): LoadedForFetchTest {
  const diagnostics: Diagnostic[] = [];
  const parsed: Ruleset[] = [];
  const files = expandRulesetPaths(paths);
  for (const file of files) {
    const result = parseRulesetXml(readRulesetFile(file), file);
    diagnostics.push(...result.diagnostics);
    if (result.ruleset !== null) parsed.push(result.ruleset);
  }
  const tested = parsed.filter(
    (r) => r.defaultOff === undefined || options.includeDefaultOff === true,
  );
  const skippedDefaultOff = parsed.filter((r) => !tested.includes(r));
  // The engine turns a ruleset with a refused pattern off when it meets the pattern, so its
  // tests cannot pass: an error here, where it names the pattern, not a silent skip later.
  diagnostics.push(...checkRulesetRegexes(tested).diagnostics);

  const testedFiles = new Set(files.map((f) => resolve(f)));
  const extra: Ruleset[] = [];
  if (rules.length > 0) {
    const loaded = loadRulesets(rules);
    diagnostics.push(...loaded.diagnostics);
    // A bundle yields no parsed rulesets; decode them from its engine instead.
    const fromRules =
      loaded.rulesets.length > 0
        ? loaded.rulesets
        : Array.from({ length: loaded.engine.rulesetCount }, (_, id) => loaded.engine.ruleset(id));
    for (const r of fromRules)
      if (r.loc === undefined || !testedFiles.has(resolve(r.loc.file))) extra.push(r);
  }
  const engine = createEngine([...tested, ...skippedDefaultOff, ...extra]);
  for (const r of tested) engine.setActive(r.name, true);
  return { tested, skippedDefaultOff, engine, diagnostics };
}
