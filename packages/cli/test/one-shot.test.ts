import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCliSync } from './support/run-cli.js';

/**
 * Runs the CLI with a preload that records every module it loads: ES modules through a resolve
 * hook, CommonJS from require.cache at exit. How fast that is lives in `npm run bench`; what
 * loads is a fact this test can check on any machine.
 */
function modulesLoadedBy(args: string[]): { stdout: string; modules: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-one-shot-'));
  const log = join(dir, 'loaded.log');
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
  return r;
}
`,
  );
  const preload = join(dir, 'preload.mjs');
  writeFileSync(
    preload,
    `import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const require = createRequire(import.meta.url);
process.on('exit', () => appendFileSync(${JSON.stringify(log)}, Object.keys(require.cache).join('\\n') + '\\n'));
`,
  );
  const run = runCliSync(args, { nodeArgs: ['--import', pathToFileURL(preload).href] });
  expect(run.status).toBe(0);
  return {
    stdout: run.stdout,
    modules: readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l !== ''),
  };
}

describe('a one-shot call', () => {
  it('rewrite URL loads only its own command, the prebuilt defaults, and no XML, Markdown or queue code', () => {
    const { stdout, modules } = modulesLoadedBy([
      'rewrite',
      'http://www.eff.org/',
      '--no-channels',
    ]);
    expect(stdout).toBe('https://www.eff.org/\n');
    const commands = modules
      .filter((m) => /\/cli\/dist\/commands\//.test(m))
      .map((m) => m.split('/').pop());
    expect([...new Set(commands)].sort()).toEqual(['index.js', 'rewrite.js']);
    const heavy = [
      'saxes',
      'fflate',
      'micromark',
      'parse5',
      'bullmq',
      'ioredis',
      'diff',
      'bundle-writer',
      'regexpp',
      're2js',
    ];
    expect(heavy.filter((h) => modules.some((m) => m.includes(`/${h}`)))).toEqual([]);
    expect(modules.some((m) => m.endsWith('/rulesets/EFF.xml'))).toBe(false);
  });

  it('--help still lists every command', () => {
    const { status, stdout: help } = runCliSync(['--help']);
    expect(status).toBe(0);
    for (const name of [
      'rewrite',
      'compile',
      'check',
      'test',
      'links',
      'sweep',
      'dnr',
      'publish',
      'update',
    ])
      expect(help).toContain(`  ${name}`);
  });

  it('a mistyped command still gets a suggestion', () => {
    const { status, stderr } = runCliSync(['rewrit', 'http://a.test/']);
    expect(status).not.toBe(0);
    expect(stderr).toContain('Did you mean rewrite?');
  });
});
