// The Node build of @httpsify/engine: every entry point (the main one and each subpath) as an
// esbuild bundle in dist/node-bundle. Types stay tsc's (dist/*.d.ts); the `default` export
// condition (browsers, bundlers) stays tsc's output. It is built for a fresh process's first
// answer (`npm run bench` prints it), which Node and V8 spend mostly on files and bytes:
// - Files: Node's ESM loader pays per file (17 files of tsc's output cost most of a cold start),
//   so the main entry is two files. Every other entry also imports the main one, which puts all
//   of the main entry's code in one shared chunk (esbuild groups modules by the entries that
//   reach them), and all subpaths share one Engine class.
// - Bytes: V8 pre-parses every byte at import. Whitespace and syntax are minified (names are
//   kept, for readable stack traces), and code a rewriting process seldom runs loads on first
//   call, synchronously (rewrite() is synchronous), from CommonJS: the dependencies re2js,
//   regexpp and saxes (the XML parser: a process that loads a bundle needs none), and our own
//   regex analysis and bundle writer (LAZY_OWN).
import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(packageDir, 'dist');
const out = join(dist, 'node-bundle');
const ENTRIES = [
  'index',
  'parse/index',
  'authoring/index',
  'dnr/index',
  'channels/index',
  'library/index',
  'node/index',
];

/** Modules that hand out a heavy dependency; in this build they require it on first call. */
const LAZY_DEPENDENCIES = {
  're2js-module.js': { fn: 're2js', pkg: 're2js', name: 'RE2JS' },
  'regexpp-module.js': {
    fn: 'regexpParser',
    pkg: '@eslint-community/regexpp',
    name: 'RegExpParser',
  },
  'saxes-module.js': { fn: 'saxesParser', pkg: 'saxes', name: 'SaxesParser' },
  // The whole package (name null): the archive readers use two of its classes.
  'fflate-module.js': { fn: 'fflateModule', pkg: 'fflate', name: null },
};

/**
 * Our own modules that only some calls need, by the CommonJS file they move to: the regex
 * door's analysis (a pattern in a finite language needs none) and the bundle writer (loading
 * a bundle needs none). Every export must be a function: it becomes a stub that loads the file.
 */
const LAZY_OWN = {
  'regex-analysis': ['regex/backtracking-proof.js', 'regex/re2-syntax.js'],
  'bundle-writer': ['bundle/write.js'],
};
/** Stands for the directory of the CommonJS files in the stubs; replaced per output file. */
const LAZY_DIR = '@@lazy-dir@@';

/** Each subpath entry, as a module that also imports the main entry (see the top). */
const withMainEntry = {
  name: 'with-main-entry',
  setup(b) {
    b.onResolve({ filter: /^entry:/ }, (args) => ({
      path: args.path.slice('entry:'.length),
      namespace: 'entry',
    }));
    b.onLoad({ filter: /.*/, namespace: 'entry' }, (args) => ({
      contents: `import ${JSON.stringify(join(dist, 'index.js'))};\nexport * from ${JSON.stringify(join(dist, `${args.path}.js`))};\n`,
      resolveDir: dist,
      loader: 'js',
    }));
  },
};

/** Swaps the *-module.js accessors for ones that require the package on first call. */
function lazyDependencies(format) {
  return {
    name: 'lazy-dependencies',
    setup(b) {
      b.onLoad(
        {
          filter:
            /[\\/]dist[\\/](regex[\\/](re2js|regexpp)|parse[\\/]saxes|library[\\/]fflate)-module\.js$/,
        },
        (args) => {
          const lazy = LAZY_DEPENDENCIES[args.path.split(/[\\/]/).pop()];
          // All four packages ship CommonJS, so require is synchronous.
          const load =
            format === 'esm'
              ? `createRequire(import.meta.url)(${JSON.stringify(lazy.pkg)})`
              : `require(${JSON.stringify(lazy.pkg)})`;
          return {
            contents: `${format === 'esm' ? "import { createRequire } from 'node:module';\n" : ''}let loaded;
export function ${lazy.fn}() {
  loaded ??= ${load}${lazy.name === null ? '' : `.${lazy.name}`};
  return loaded;
}
`,
            loader: 'js',
          };
        },
      );
    },
  };
}

/** Swaps each LAZY_OWN module for stubs of its exports that load its CommonJS file on first call. */
async function lazyOwnModules() {
  const stubs = new Map();
  for (const [file, modules] of Object.entries(LAZY_OWN)) {
    for (const module of modules) {
      const exported = Object.entries(await import(join(dist, module)));
      const notFunction = exported.find(([, value]) => typeof value !== 'function');
      if (notFunction)
        throw new Error(
          `${module} exports ${notFunction[0]}, which is not a function: it cannot load lazily`,
        );
      const names = exported.map(([name]) => name);
      stubs.set(
        join(dist, module),
        `import { createRequire } from 'node:module';
let loaded;
const load = () => (loaded ??= createRequire(import.meta.url)(${JSON.stringify(`${LAZY_DIR}/${file}.cjs`)}));
${names.map((n) => `export function ${n}(...args) { return load().${n}(...args); }`).join('\n')}
`,
      );
    }
  }
  return {
    name: 'lazy-own-modules',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, (args) =>
        stubs.has(args.path) ? { contents: stubs.get(args.path), loader: 'js' } : undefined,
      );
    },
  };
}

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  packages: 'external',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
};

rmSync(out, { recursive: true, force: true });
const result = await build({
  ...common,
  entryPoints: ENTRIES.map((e) => ({
    in: e === 'index' ? join(dist, 'index.js') : `entry:${e}`,
    out: e,
  })),
  outdir: out,
  splitting: true,
  format: 'esm',
  chunkNames: 'chunks/[name]-[hash]',
  plugins: [withMainEntry, await lazyOwnModules(), lazyDependencies('esm')],
  write: false,
});
for (const file of result.outputFiles) {
  // A stub may land in any output file: point it at the CommonJS files from where it is.
  const dir = `./${relative(dirname(file.path), join(out, 'lazy')).split('\\').join('/')}`.replace(
    /^\.\/\.\.\//,
    '../',
  );
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, file.text.split(LAZY_DIR).join(dir));
}
for (const [file, modules] of Object.entries(LAZY_OWN)) {
  await build({
    ...common,
    stdin: {
      contents: modules.map((m) => `export * from ${JSON.stringify(join(dist, m))};`).join('\n'),
      resolveDir: dist,
      loader: 'js',
    },
    outfile: join(out, 'lazy', `${file}.cjs`),
    format: 'cjs',
    plugins: [lazyDependencies('cjs')],
  });
}
