import { createRequire } from 'node:module';
import type * as Commander from 'commander';

// commander ships CommonJS. Imported from ES modules, Node would run its ESM lexer over it on
// every start; required, it loads as CommonJS directly (a one-shot call feels the difference).
const commander = createRequire(import.meta.url)('commander') as typeof Commander;

export const { Command, CommanderError, Option } = commander;
export type Command = Commander.Command;
export type CommanderError = Commander.CommanderError;
export type Option = Commander.Option;
