// The Node build of @httpsify/engine: every entry point (the main one and each subpath) as an
// esbuild bundle in dist/node, split into shared chunks so that all subpaths share one Engine
// class. Node's ESM loader pays per file (a fresh process importing the 17 files of tsc's output
// spent most of its cold start there), so a few files load faster than many. Dependencies stay
// dependencies (not inlined), and re2js and the regex parser are loaded on first use: a process
// that loads a bundle and rewrites with literal rules never loads them. Types stay tsc's
// (dist/*.d.ts); the `default` export condition (browsers, bundlers) stays tsc's output.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(packageDir, 'dist');
const ENTRIES = ['index', 'parse/index', 'authoring/index', 'dnr/index', 'channels/index', 'node/index'];

/** Modules that hand out a heavy dependency; in this build they require it on first call. */
const LAZY = {
  're2js-module.js': { fn: 're2js', pkg: 're2js', name: 'RE2JS' },
  'regexpp-module.js': { fn: 'regexpParser', pkg: '@eslint-community/regexpp', name: 'RegExpParser' },
};

const lazyDependencies = {
  name: 'lazy-dependencies',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]regex[\\/](re2js|regexpp)-module\.js$/ }, (args) => {
      const lazy = LAZY[args.path.split(/[\\/]/).pop()];
      // createRequire: synchronous, so rewrite() stays synchronous; both packages ship CommonJS.
      return {
        contents: `import { createRequire } from 'node:module';
let loaded;
export function ${lazy.fn}() {
  loaded ??= createRequire(import.meta.url)(${JSON.stringify(lazy.pkg)}).${lazy.name};
  return loaded;
}
`,
        loader: 'js',
      };
    });
  },
};

rmSync(join(dist, 'node-bundle'), { recursive: true, force: true });
await build({
  entryPoints: ENTRIES.map((e) => ({ in: join(dist, `${e}.js`), out: e })),
  outdir: join(dist, 'node-bundle'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  plugins: [lazyDependencies],
  logLevel: 'warning',
});
