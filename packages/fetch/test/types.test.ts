import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// The built package (dist, as `npm test` builds it) type-checked as a user's project sees it: a
// temporary project whose node_modules links this package, undici and @types/node, nothing else.
const here = dirname(fileURLToPath(import.meta.url));
const packageDir = dirname(here);
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const moduleDir = async (name: string): Promise<string> =>
  realpath(dirname(require.resolve(`${name}/package.json`)));

const projects: string[] = [];
afterAll(async () => {
  await Promise.all(projects.map((dir) => rm(dir, { recursive: true, force: true })));
});

/**
 * A consumer project for `compilerOptions`, with test/type-consumer/consumer.ts as its code.
 * `dom`: the target's default lib, DOM included, as in the report and a `tsc --init`
 * project (the global fetch is then the DOM's and @types/node's); otherwise a Node-only lib
 * (@types/node's globals alone), where declaration files go unchecked to keep the test short.
 */
async function consumerProject(dom: boolean, compilerOptions: object): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'httpsify-fetch-types-'));
  projects.push(dir);
  const modules = join(dir, 'node_modules');
  await mkdir(join(modules, '@httpsify'), { recursive: true });
  await mkdir(join(modules, '@types'));
  // 'junction': a link Windows makes without privileges; elsewhere the type is ignored.
  await symlink(packageDir, join(modules, '@httpsify', 'fetch'), 'junction');
  await symlink(await moduleDir('undici'), join(modules, 'undici'), 'junction');
  await symlink(await moduleDir('@types/node'), join(modules, '@types', 'node'), 'junction');
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  await copyFile(join(here, 'type-consumer', 'consumer.ts'), join(dir, 'consumer.ts'));
  const options = dom ? {} : { lib: ['ES2022'], skipLibCheck: true };
  const tsconfig = {
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      types: ['node'],
      ...options,
      ...compilerOptions,
    },
    files: ['consumer.ts'],
  };
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  return dir;
}

/** tsc's report on the projects (one process builds them all), empty when they type-check. */
async function typeErrors(dirs: string[]): Promise<string> {
  try {
    await promisify(execFile)(process.execPath, [tsc, '-b', ...dirs, '--pretty', 'false']);
    return '';
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    return `${stdout ?? ''}${stderr ?? ''}` || String(err);
  }
}

describe('the published types', () => {
  it.each([
    ['node16', { module: 'Node16', moduleResolution: 'Node16' }],
    ['bundler', { module: 'ESNext', moduleResolution: 'Bundler' }],
  ])(
    "under %s resolution: the wrapper is a typeof fetch and takes undici's RequestInit",
    async (_name, options) => {
      const dirs = [await consumerProject(true, options), await consumerProject(false, options)];
      expect(await typeErrors(dirs)).toBe('');
    },
  );
});
