import type { Command } from 'commander';
import { registerCompile } from './compile.js';
import { registerRewrite } from './rewrite.js';

/** Every sub-command registers itself here; one module per command. */
export function registerCommands(program: Command): void {
  registerRewrite(program);
  registerCompile(program);
}
