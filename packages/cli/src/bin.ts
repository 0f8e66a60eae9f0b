#!/usr/bin/env node
import { Command } from 'commander';
import { registerCommands } from './commands/index.js';

const program = new Command();
program
  .name('httpsify')
  .description('Keep web traffic on HTTPS: rewrite URLs with HTTPS Everywhere-format rulesets, and tools for ruleset authors')
  .version('0.1.0');
registerCommands(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`httpsify: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
});
