import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { Option, type Command } from '../shared/commander.js';
import { type Engine, type Ruleset } from '@httpsify/engine';
import {
  compileDnr,
  measureDnrCoverage,
  measureTrailingDotCoverage,
  type DnrCompileResult,
  type DnrCoverage,
  type TrailingDotCoverage,
} from '@httpsify/engine/dnr';
import { collect, loadRequiredRules } from '../shared/rules-option.js';
import { checkOutputPath, writeOutputFile } from '../shared/output-file.js';
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
      const rulesJson = JSON.stringify(compiled.rules);
      if (options.output !== undefined) await writeOutputFile(options.output, `${rulesJson}\n`);
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
      if (options.report === true || coverage !== undefined) {
        process.stdout.write(
          options.format === 'json'
            ? `${JSON.stringify({ ...compiled.report, coverage, browserCoverage, trailingDotCoverage })}\n`
            : formatReport(
                compiled,
                coverage,
                options.report === true,
                browserCoverage,
                trailingDotCoverage,
              ),
        );
      } else if (options.output === undefined) {
        process.stdout.write(`${rulesJson}\n`);
      }
      if (compiled.report.overLimits.length > 0) process.exitCode = 1;
    });
}

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

function percent(n: number, d: number): string {
  return d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(2)}%`;
}

function formatReport(
  { report }: DnrCompileResult,
  coverage: DnrCoverage | undefined,
  details: boolean,
  browserCoverage?: DnrCoverage,
  dotted?: TrailingDotCoverage,
): string {
  const lines: string[] = [];
  const actions = Object.entries(report.byAction)
    .map(([a, n]) => `${n} ${a}`)
    .join(', ');
  lines.push(`rules: ${report.ruleCount} (${actions})`);
  lines.push(`regex rules: ${report.regexRuleCount} of ${report.regexLimit}`);
  lines.push(
    `rulesets: ${report.rulesetsConsidered} active; ${report.rulesetsComplete} complete, ${report.rulesetsPartial} partial, ${report.rulesetsSkipped} left out`,
  );
  for (const over of report.overLimits) lines.push(`OVER LIMIT: ${over}`);
  if (coverage) {
    lines.push(
      `oracle: ${coverage.reproduced} of ${coverage.rewrites} rewrites reproduced (${percent(coverage.reproduced, coverage.rewrites)}); ` +
        `${coverage.missed} missed, ${coverage.wrong} different, ${coverage.spurious} rewritten where the reference does not (${coverage.cases} URLs)`,
    );
  }
  if (browserCoverage) {
    const b = browserCoverage;
    lines.push(
      `oracle as the browser sends it (canonical, no fragment): ${b.reproduced} of ${b.rewrites} rewrites reproduced (${percent(b.reproduced, b.rewrites)}); ` +
        `${b.missed} missed, ${b.wrong} different, ${b.spurious} rewritten where the reference does not`,
    );
  }
  if (dotted) {
    lines.push(
      `oracle with a trailing dot on the host, as subresources: ${dotted.reproduced} of ${dotted.rewrites} rewrites reproduced (${percent(dotted.reproduced, dotted.rewrites)}); ` +
        `${dotted.missed} missed, ${dotted.wrong} different, ${dotted.spurious} rewritten where the reference does not; ` +
        `${dotted.dotOnly} of ${dotted.cases} only lost the dot`,
    );
  }
  if (details) {
    if (report.omissions.length > 0) lines.push('', 'not compiled:');
    for (const o of report.omissions) {
      const where = o.file !== undefined ? `${o.file}:${o.line ?? 0}: ` : '';
      lines.push(
        `${where}${o.ruleset}: ${o.what}${o.what === 'ruleset' ? '' : ` #${o.index + 1}`} ${JSON.stringify(o.source)}: ${o.reason}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
