import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from '../shared/commander.js';
import { formatDiagnostic } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { lintRulesetSource, rulesetCoverage, targetKeysFor } from '@httpsify/engine/authoring';
import { defaultRulesetsDir, listRulesetFiles } from '@httpsify/engine/node';
import { checkNewDomain, newRuleset } from '../authoring/new-ruleset.js';
import { readRulesetFile } from '../authoring/ruleset-files.js';

/** Rulesets in `dir` that already cover one of `hosts` (exactly or by a wildcard), as "file: target". */
export function existingCoverage(dir: string, hosts: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of listRulesetFiles(dir)) {
    const { ruleset } = parseRulesetXml(readRulesetFile(file), file);
    if (ruleset === null) continue;
    const targets = new Set(ruleset.targets.map((t) => t.host));
    for (const host of hosts) {
      const key = targetKeysFor(host).find((k) => targets.has(k));
      if (key !== undefined) found.push(`${file}: target ${key} covers ${host}`);
    }
  }
  return found;
}

/**
 * Writes the new ruleset after checking the domain, the file name and the other rulesets (those
 * of `dir`, and the bundled defaults unless `force`); returns its path.
 */
export function runNew(
  domain: string,
  options: { www?: boolean; dir: string; force?: boolean },
): string {
  const problem = checkNewDomain(domain);
  if (problem !== null) throw new Error(problem);
  const made = newRuleset(domain, options);
  // Said plainly, before any search of it (readdir's ENOENT named only a syscall).
  const dir = statSync(options.dir, { throwIfNoEntry: false });
  if (dir === undefined)
    throw new Error(
      `--dir ${options.dir}: no such directory (create it first: mkdir -p ${options.dir})`,
    );
  if (!dir.isDirectory()) throw new Error(`--dir ${options.dir}: not a directory`);
  const path = join(options.dir, made.fileName);
  if (existsSync(path)) throw new Error(`${path} already exists`);
  const taken = existingCoverage(options.dir, made.targets);
  if (taken.length > 0)
    throw new Error(
      `another ruleset already targets this site; edit it instead:\n  ${taken.join('\n  ')}`,
    );
  // A second ruleset for a host the defaults cover is shadowed by, or shadows, the bundled one.
  const bundled = defaultRulesetsDir();
  if (options.force !== true && resolve(bundled) !== resolve(options.dir)) {
    const inDefaults = existingCoverage(bundled, made.targets);
    if (inDefaults.length > 0)
      throw new Error(
        `a ruleset bundled with httpsify already targets this site:\n  ${inDefaults.join('\n  ')}\n` +
          'improve that one instead, or pass --force to write your own (e.g. for an update channel)',
      );
  }
  // The template must pass our own checks; anything else is a bug here, not the user's.
  const lint = lintRulesetSource(made.xml, path);
  const coverage = lint.ruleset === null ? [] : rulesetCoverage(lint.ruleset).diagnostics;
  const findings = [...lint.diagnostics, ...coverage];
  if (findings.length > 0)
    throw new Error(
      `internal error: the new ruleset does not pass its checks:\n${findings.map(formatDiagnostic).join('\n')}`,
    );
  writeFileSync(path, made.xml, { flag: 'wx' });
  return path;
}

export function registerNew(program: Command): void {
  program
    .command('new')
    .description(
      'write a new trivial ruleset for a domain, unless another ruleset already targets it',
    )
    .argument('<domain>', 'the site, e.g. example.com')
    .option('--www', 'also target www.<domain>')
    .option(
      '-d, --dir <dir>',
      'rulesets directory to write into and search for existing targets',
      '.',
    )
    .option('--force', 'write it even though a ruleset bundled with httpsify targets the site')
    .action((domain: string, opts: { www?: boolean; dir: string; force?: boolean }) => {
      const path = runNew(domain, opts);
      process.stdout.write(`wrote ${path}\n`);
    });
}
