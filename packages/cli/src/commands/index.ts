import type { Command } from '../shared/commander.js';

type Register = (program: Command) => void;

/**
 * Every sub-command, one module each, loaded only when it runs: a one-shot `httpsify rewrite URL`
 * must not pay for the Markdown parser, the sweep or the signing code. In help order.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  rewrite: async () => (await import('./rewrite.js')).registerRewrite,
  compile: async () => (await import('./compile.js')).registerCompile,
  check: async () => (await import('./check.js')).registerCheck,
  test: async () => (await import('./test.js')).registerTest,
  'fetch-test': async () => (await import('./fetch-test.js')).registerFetchTest,
  new: async () => (await import('./new.js')).registerNew,
  keygen: async () => (await import('./keygen.js')).registerKeygen,
  'rotate-key': async () => (await import('./rotate-key.js')).registerRotateKey,
  publish: async () => (await import('./publish.js')).registerPublish,
  update: async () => (await import('./update.js')).registerUpdate,
  dnr: async () => (await import('./dnr.js')).registerDnr,
  links: async () => (await import('./links.js')).registerLinks,
  sweep: async () => (await import('./sweep.js')).registerSweep,
};

/**
 * Registers the command that `args` (the arguments after the program) names, or every command
 * when they name none (no arguments, `help`, `--help`, a typo): help and commander's "did you
 * mean" suggestions then see them all. The program itself has no options that take a value, so
 * the first argument that is not an option is the command.
 */
export async function registerCommands(program: Command, args: readonly string[]): Promise<void> {
  const named = args.find((a) => !a.startsWith('-'));
  const only =
    named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
  const registers = await Promise.all(
    only.map((name) => (COMMANDS[name] as () => Promise<Register>)()),
  );
  for (const register of registers) register(program);
}
