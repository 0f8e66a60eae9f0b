import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { Option, type Command } from '../shared/commander.js';
import { type Engine, type Ruleset } from '@httpsify/engine';
import { compileDnr, measureDnrCoverage, measureTrailingDotCoverage } from '@httpsify/engine/dnr';
import { collect, loadRequiredRules } from '../shared/rules-option.js';
import { checkOutputPath, writeOutputFile } from '../shared/output-file.js';
import { dnrReportJson, dnrRulesJson, type DnrOutput } from '../formats/json/dnr.js';
import { dnrText } from '../formats/text/dnr.js';
import { emitReport, raiseExitCode, type Formatters } from '../shared/emit-report.js';
import { addProgressOptions, ProgressBar } from '../shared/progress.js';

interface DnrOptions {
  rules?: string[];
  output?: string;
  report?: boolean;
  format: 'text' | 'json';
  oracle?: string;
  regexLimit: string;
  trailingDots: boolean;
  progress?: boolean;
}

export function registerDnr(program: Command): void {
  addProgressOptions(program.command('dnr'))
    .description(
      'compile the active rulesets to Chromium declarativeNetRequest rules; report what does not fit',
    )
    .option(
      '--rules <path>',
      'a directory of *.xml rulesets, one XML file or a compiled bundle (repeatable; default: the bundled rulesets)',
      collect,
    )
    .option('-o, --output <file>', 'write the rules (a static ruleset JSON file) here')
    // The name it had first; `-o, --output` is what compile takes.
    .addOption(new Option('--out <file>').hideHelp())
    .option(
      '--report',
      'print counts and every ruleset, rule or exclusion that was left out, and why',
    )
    .option(
      '--oracle <file>',
      'JSON lines {"url","expected"} (optionally .gz): measure how many expected rewrites the rules reproduce',
    )
    .option('--regex-limit <n>', 'regex rules allowed', '1000')
    .option(
      '--no-trailing-dots',
      'leave out the rule that takes trailing dots off hosts (as the dynamic rule sets do)',
    )
    .addOption(
      new Option('--format <format>', 'report format').choices(['text', 'json']).default('text'),
    )
    .action(async (opts: DnrOptions & { out?: string }) => {
      const { out, ...rest } = opts;
      const options: DnrOptions = { ...rest, output: opts.output ?? out };
      if (options.output !== undefined) checkOutputPath(options.output, `-o ${options.output}`);
      const progress = new ProgressBar(process.stderr, 0, 'rulesets', options.progress);
      const loaded = loadRequiredRules(options.rules, {}, progress);
      const rulesets = rulesetsOf(loaded.engine, loaded.rulesets);
      const regexLimit = Number(options.regexLimit);
      if (!Number.isInteger(regexLimit) || regexLimit < 0)
        throw new Error(`--regex-limit ${options.regexLimit}: not a count`);
      const compiled = compileDnr(rulesets, {
        regexLimit,
        trailingDots: options.trailingDots,
        onProgress: progress.steps({
          plan: 'rulesets planned as DNR rules',
          fit: 'rounds fitting the rules to the limits',
        }),
      });
      progress.clear();
      if (options.output !== undefined)
        await writeOutputFile(options.output, dnrRulesJson(compiled.rules));
      const oracle = options.oracle !== undefined ? await readOracle(options.oracle) : undefined;
      const coverage =
        oracle !== undefined ? measureDnrCoverage(compiled.rules, oracle) : undefined;
      // What the browser really requests: canonical URLs without fragments.
      const browserCoverage =
        oracle !== undefined
          ? measureDnrCoverage(compiled.rules, oracle, 20, { asBrowser: true })
          : undefined;
      const trailingDotCoverage =
        oracle !== undefined ? measureTrailingDotCoverage(compiled.rules, oracle) : undefined;
      const output: DnrOutput = {
        compiled,
        coverage,
        browserCoverage,
        trailingDotCoverage,
        details: options.report === true,
      };
      if (options.report === true || coverage !== undefined)
        await emitReport(DNR_FORMATS, options.format, output);
      // No report and no file: the rules themselves are the output.
      else if (options.output === undefined) process.stdout.write(dnrRulesJson(compiled.rules));
      raiseExitCode(compiled.report.overLimits.length > 0 ? 1 : 0);
    });
}

const DNR_FORMATS: Formatters<DnrOutput, 'text' | 'json'> = {
  text: (o) => dnrText(o.compiled, o.coverage, o.details, o.browserCoverage, o.trailingDotCoverage),
  json: dnrReportJson,
};

/** The parsed rulesets (with file positions for the report), or decoded from a bundle. */
function rulesetsOf(engine: Engine, parsed: Ruleset[]): Ruleset[] {
  if (parsed.length === engine.rulesetCount) return parsed;
  return Array.from({ length: engine.rulesetCount }, (_, id) => engine.ruleset(id));
}

async function readOracle(path: string): Promise<{ url: string; expected: string | null }[]> {
  const input = path.endsWith('.gz')
    ? createReadStream(path).pipe(createGunzip())
    : createReadStream(path);
  const out: { url: string; expected: string | null }[] = [];
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    if (line.trim() !== '') out.push(JSON.parse(line) as { url: string; expected: string | null });
  }
  return out;
}
