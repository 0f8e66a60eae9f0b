import type { Command } from 'commander';
import { formatDiagnostic, type Diagnostic } from '@httpsify/engine';
import { lintCollection, lintRulesetSource, PSL_SNAPSHOT, type LintedFile } from '@httpsify/engine/authoring';
import { expandRulesetPaths, readRulesetFile } from '../authoring/ruleset-files.js';
import { count } from '../shared/plural.js';

export interface CheckReport {
  files: number;
  diagnostics: Diagnostic[];
  counts: Record<string, number>;
  errors: number;
  warnings: number;
  publicSuffixList: string;
}

/** Lints every file, then the cross-file checks over the ones that parsed. */
export function runCheck(paths: readonly string[]): CheckReport {
  const files = expandRulesetPaths(paths);
  const diagnostics: Diagnostic[] = [];
  const parsed: LintedFile[] = [];
  for (const file of files) {
    const result = lintRulesetSource(readRulesetFile(file), file);
    diagnostics.push(...result.diagnostics);
    if (result.ruleset !== null) parsed.push({ file, ruleset: result.ruleset });
  }
  diagnostics.push(...lintCollection(parsed));
  const counts: Record<string, number> = {};
  for (const d of diagnostics) counts[d.code] = (counts[d.code] ?? 0) + 1;
  return {
    files: files.length,
    diagnostics,
    counts: Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1))),
    errors: diagnostics.filter((d) => d.severity === 'error').length,
    warnings: diagnostics.filter((d) => d.severity === 'warning').length,
    publicSuffixList: PSL_SNAPSHOT.source,
  };
}

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description('validate and lint ruleset files: structure, targets, rules, exclusions, secure cookies, and checks across files')
    .argument('<paths...>', 'ruleset files or directories of *.xml')
    .option('--format <format>', 'text or json', 'text')
    .option('--counts', 'print the number of findings per code')
    .option('-q, --quiet', 'print errors only')
    .action((paths: string[], opts: { format: string; counts?: boolean; quiet?: boolean }) => {
      if (opts.format !== 'text' && opts.format !== 'json') throw new Error(`--format must be text or json, not "${opts.format}"`);
      const report = runCheck(paths);
      if (opts.format === 'json') {
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } else {
        const shown = opts.quiet === true ? report.diagnostics.filter((d) => d.severity === 'error') : report.diagnostics;
        process.stdout.write(shown.map((d) => `${formatDiagnostic(d)}\n`).join(''));
        if (opts.counts === true) {
          for (const [code, n] of Object.entries(report.counts)) process.stdout.write(`${String(n).padStart(7)} ${code}\n`);
        }
        process.stderr.write(
          `${count(report.files, 'file')}: ${count(report.errors, 'error')}, ${count(report.warnings, 'warning')} (public suffix list: ${report.publicSuffixList})\n`,
        );
      }
      if (report.errors > 0) process.exitCode = 1;
    });
}
