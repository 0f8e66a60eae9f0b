#!/usr/bin/env node
import { Command, CommanderError } from './shared/commander.js';
import { registerCommands } from './commands/index.js';

// A reader that stops early (`httpsify rewrite ... | head -1`) closes the pipe: that ends the
// job, it is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const program = new Command();
program
  .name('httpsify')
  .description(
    'Keep web traffic on HTTPS: rewrite URLs with HTTPS Everywhere-format rulesets, and tools for ruleset authors',
  )
  .version('0.1.0')
  // Exit statuses: 0 done, 1 done but problems found, 2 could not run (usage errors, whether
  // commander or a command finds them, and unreadable or unusable input). Inherited by every
  // sub-command registered below.
  .exitOverride();
registerCommands(program, process.argv.slice(2))
  .then(() => program.parseAsync(process.argv))
  .catch((err: unknown) => {
    if (err instanceof CommanderError) {
      // commander has printed its message already; --help and --version exit 0.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    process.stderr.write(`httpsify: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  });
