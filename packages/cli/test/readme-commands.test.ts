import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { expect, it } from 'vitest';
import { registerCommands } from '../src/commands/index.js';

it('the README shows every command that --help lists, and the options it shows exist', async () => {
  const program = new Command('httpsify');
  await registerCommands(program, []);
  const commands = program.commands.map((c) => c.name());
  expect(commands).toContain('dnr');
  const readme = readFileSync(resolve(__dirname, '../../../README.md'), 'utf8');
  const usage = readme.slice(readme.indexOf('## Usage'), readme.indexOf('## The extension'));
  expect(commands.filter((c) => !usage.includes(`httpsify ${c} `))).toEqual([]);
  // Each long option a usage line gives is one that its command's --help lists.
  const unknown: string[] = [];
  let lines = 0;
  for (const line of usage.split('\n')) {
    const words = /^httpsify ([a-z-]+)(?: ([a-z]+))?/.exec(line);
    if (words === null) continue;
    let command = program.commands.find((c) => c.name() === words[1]);
    if (command !== undefined && command.commands.length > 0)
      command = command.commands.find((c) => c.name() === words[2]);
    const help = command?.helpInformation() ?? '';
    for (const [option] of line.replace(/#.*/, '').matchAll(/--[a-z][a-z-]*/g))
      if (!help.includes(option)) unknown.push(`${line}: ${option}`);
    lines++;
  }
  expect(lines).toBeGreaterThan(20);
  expect(unknown).toEqual([]);
});
