import type { Command } from 'commander';
import { createEngine, formatDiagnostic, type Diagnostic, type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { rulesetCoverage } from '@httpsify/engine/authoring';
import { expandRulesetPaths, readRulesetFile } from '../authoring/ruleset-files.js';
import { count } from '../shared/plural.js';

export interface TestSummary {
  file: string;
  name: string;
  tests: number;
  problems: number;
}

export interface TestReport {
  rulesets: TestSummary[];
  skippedDefaultOff: number;
  diagnostics: Diagnostic[];
  counts: Record<string, number>;
  errors: number;
}

/** Offline coverage over the given files; other rulesets in the same run are checked against excluded URLs. */
export function runTest(paths: readonly string[], options: { includeDefaultOff?: boolean } = {}): TestReport {
  const diagnostics: Diagnostic[] = [];
  const rulesets: Ruleset[] = [];
  for (const file of expandRulesetPaths(paths)) {
    const parsed = parseRulesetXml(readRulesetFile(file), file);
    diagnostics.push(...parsed.diagnostics);
    if (parsed.ruleset !== null) rulesets.push(parsed.ruleset);
  }
  const engine = createEngine(rulesets);
  const summaries: TestSummary[] = [];
  let skipped = 0;
  for (const ruleset of rulesets) {
    if (ruleset.defaultOff !== undefined && options.includeDefaultOff !== true) {
      skipped++;
      continue;
    }
    const result = rulesetCoverage(ruleset, engine);
    diagnostics.push(...result.diagnostics);
    summaries.push({ file: ruleset.loc?.file ?? '', name: ruleset.name, tests: result.tests.length, problems: result.diagnostics.length });
  }
  const counts: Record<string, number> = {};
  for (const d of diagnostics) counts[d.code] = (counts[d.code] ?? 0) + 1;
  return { rulesets: summaries, skippedDefaultOff: skipped, diagnostics, counts, errors: diagnostics.filter((d) => d.severity === 'error').length };
}

export function registerTest(program: Command): void {
  program
    .command('test')
    .description('offline test coverage of rulesets: every test owned by a rule or exclusion, enough tests per branch, no network')
    .argument('<paths...>', 'ruleset files or directories of *.xml')
    .option('--include-default-off', 'also test rulesets that are off by default')
    .option('--format <format>', 'text or json', 'text')
    .action((paths: string[], opts: { includeDefaultOff?: boolean; format: string }) => {
      if (opts.format !== 'text' && opts.format !== 'json') throw new Error(`--format must be text or json, not "${opts.format}"`);
      const report = runTest(paths, { includeDefaultOff: opts.includeDefaultOff === true });
      if (opts.format === 'json') {
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } else {
        for (const d of report.diagnostics) process.stdout.write(`${formatDiagnostic(d)}\n`);
        for (const s of report.rulesets) {
          process.stdout.write(`${s.problems === 0 ? 'ok  ' : 'FAIL'} ${s.name} (${s.file}): ${count(s.tests, 'test')}, ${count(s.problems, 'problem')}\n`);
        }
        const failed = report.rulesets.filter((s) => s.problems > 0).length;
        const tests = report.rulesets.reduce((n, s) => n + s.tests, 0);
        process.stdout.write(
          `${count(report.rulesets.length, 'ruleset')}, ${count(tests, 'test')}: ${report.rulesets.length - failed} ok, ${failed} with problems` +
            `${report.skippedDefaultOff > 0 ? ` (${report.skippedDefaultOff} off by default skipped)` : ''}\n`,
        );
        for (const [code, n] of Object.entries(report.counts).sort()) process.stdout.write(`${String(n).padStart(7)} ${code}\n`);
      }
      if (report.errors > 0) process.exitCode = 1;
    });
}
