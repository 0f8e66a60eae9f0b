import type { Command } from 'commander';
import { registerCheck } from './check.js';
import { registerTest } from './test.js';
import { registerFetchTest } from './fetch-test.js';
import { registerNew } from './new.js';
import { registerCompile } from './compile.js';
import { registerKeygen } from './keygen.js';
import { registerPublish } from './publish.js';
import { registerRotateKey } from './rotate-key.js';
import { registerRewrite } from './rewrite.js';
import { registerUpdate } from './update.js';
import { registerDnr } from './dnr.js';
import { registerLinks } from './links.js';
import { registerSweep } from './sweep.js';

/** Every sub-command registers itself here; one module per command. */
export function registerCommands(program: Command): void {
  registerRewrite(program);
  registerCompile(program);
  registerCheck(program);
  registerTest(program);
  registerFetchTest(program);
  registerNew(program);
  registerKeygen(program);
  registerRotateKey(program);
  registerPublish(program);
  registerUpdate(program);
  registerDnr(program);
  registerLinks(program);
  registerSweep(program);
}
