import { gzipSync } from 'node:zlib';
import type { Command } from '../shared/commander.js';
import { compileBundle, readBundleHeader } from '@httpsify/engine';
import { collect, loadRequiredRules } from '../shared/rules-option.js';
import { count } from '../shared/plural.js';
import { checkOutputPath, writeOutputFile } from '../shared/output-file.js';
import { addProgressOptions, ProgressBar } from '../shared/progress.js';

interface CompileCommandOptions {
  rules?: string[];
  output: string;
  timestamp?: string;
  progress?: boolean;
}

export function registerCompile(program: Command): void {
  addProgressOptions(program.command('compile'))
    .description(
      'compile rulesets into one binary bundle (loads with no parsing; accepted wherever XML is)',
    )
    .option(
      '--rules <path>',
      'rulesets to compile: directory of *.xml, XML file or bundle (repeatable; default: the bundled rulesets)',
      collect,
    )
    .requiredOption('-o, --output <file>', 'where to write the bundle')
    .option(
      '--timestamp <seconds>',
      'unix time recorded in the bundle header (default: 0, so output is reproducible)',
    )
    .action(async (options: CompileCommandOptions) => {
      const timestamp = options.timestamp === undefined ? 0 : Number(options.timestamp);
      if (!Number.isInteger(timestamp) || timestamp < 0)
        throw new Error(
          `--timestamp must be a whole number of seconds, got ${JSON.stringify(options.timestamp)}`,
        );
      checkOutputPath(options.output, `-o ${options.output}`);
      const loaded = loadRequiredRules(
        options.rules,
        { checkRegexes: true, timestamp },
        new ProgressBar(process.stderr, 0, 'rulesets', options.progress),
      );
      // XML input was compiled with this timestamp already; a single bundle given as input is
      // recompiled only when its own timestamp differs.
      const bundle =
        loaded.engine.header.timestamp === timestamp
          ? loaded.bundle
          : compileBundle(
              Array.from({ length: loaded.engine.rulesetCount }, (_, id) =>
                loaded.engine.ruleset(id),
              ),
              { timestamp },
            );
      // A failed run never leaves a half-written bundle behind.
      await writeOutputFile(options.output, bundle);
      const header = readBundleHeader(bundle);
      process.stderr.write(
        `${options.output}: ${count(header.rulesetCount, 'ruleset')}, ${count(bundle.length, 'byte')} (${gzipSync(bundle).length} gzipped), format version ${header.formatVersion}\n`,
      );
      if (loaded.diagnostics.some((d) => d.severity === 'error')) process.exitCode = 1;
    });
}
