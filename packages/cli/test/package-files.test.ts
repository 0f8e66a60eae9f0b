import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const packagesDir = resolve(import.meta.dirname, '../..');

/** What `npm pack` would put in the tarball (dist/ must be built, as `npm test` does). */
function packedFiles(pkg: string): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: join(packagesDir, pkg),
    encoding: 'utf8',
  });
  return (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}

describe.each(['engine', 'cli'])('the @httpsify/%s tarball', (pkg) => {
  it('carries README, LICENSE, the compiled code and an engines field', () => {
    const files = packedFiles(pkg);
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'LICENSE',
        'package.json',
        pkg === 'cli' ? 'dist/bin.js' : 'dist/index.js',
      ]),
    );
    expect(readFileSync(join(packagesDir, pkg, 'LICENSE'), 'utf8')).toContain(
      'GNU GENERAL PUBLIC LICENSE\n                       Version 3',
    );
    const manifest = JSON.parse(readFileSync(join(packagesDir, pkg, 'package.json'), 'utf8')) as {
      engines?: { node?: string };
      license?: string;
    };
    expect(manifest.engines?.node).toBe('>=20');
    expect(manifest.license).toBe('GPL-3.0-or-later');
    // Tests and sources stay out of the tarball.
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('src/'))).toEqual([]);
  });
});

describe.each(['engine', 'cli', 'fetch'])('the @httpsify/%s package on the registry', (pkg) => {
  it('ships no source maps (they point at src/*.ts, which is not shipped)', () => {
    expect(packedFiles(pkg).filter((f) => f.endsWith('.map'))).toEqual([]);
  });

  it('is public on its first publish (a scoped package is private by default) and says it is ESM', () => {
    const manifest = JSON.parse(readFileSync(join(packagesDir, pkg, 'package.json'), 'utf8')) as {
      type?: string;
      publishConfig?: { access?: string };
    };
    expect(manifest.publishConfig?.access).toBe('public');
    expect(manifest.type).toBe('module');
    // A library with engines >=20 and no CommonJS build: its README says how to load it.
    if (pkg !== 'cli')
      expect(readFileSync(join(packagesDir, pkg, 'README.md'), 'utf8')).toContain(
        'An ES module only',
      );
  });

  it('ships no code that points at a source map (a debugger or bundler would look for it)', () => {
    const pointing = packedFiles(pkg)
      .filter((f) => f.endsWith('.js'))
      .filter((f) => readFileSync(join(packagesDir, pkg, f), 'utf8').includes('sourceMappingURL'));
    expect(pointing).toEqual([]);
  });

  it('says where its repository, home page and issue tracker are, and its README links there', () => {
    const manifest = JSON.parse(readFileSync(join(packagesDir, pkg, 'package.json'), 'utf8')) as {
      repository?: { type?: string; url?: string; directory?: string };
      homepage?: string;
      bugs?: { url?: string };
    };
    expect(manifest.repository).toMatchObject({ type: 'git', directory: `packages/${pkg}` });
    expect(manifest.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
    const repo = manifest.repository!.url!.replace(/^git\+/, '').replace(/\.git$/, '');
    expect(manifest.homepage?.startsWith(repo)).toBe(true);
    expect(manifest.bugs?.url).toBe(`${repo}/issues`);
    // "See the repository's docs" with no link is a dead end on the registry's page.
    const readme = readFileSync(join(packagesDir, pkg, 'README.md'), 'utf8');
    expect(readme).not.toMatch(/the repository's/);
    if (pkg !== 'fetch') expect(readme).toContain(repo);
  });
});

describe('the workspace install', () => {
  it('reviewed every dependency install script: allowScripts covers them, so npm ci warns of none', () => {
    const out = execFileSync('npm', ['install-scripts', 'ls'], {
      cwd: resolve(packagesDir, '..'),
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('No packages with unreviewed install scripts.');
  });
});

describe('prepack (scripts/prune-stale-dist.mjs)', () => {
  it('removes build output whose source is gone, and nothing else', () => {
    const pkg = mkdtempSync(join(tmpdir(), 'httpsify-prepack-'));
    try {
      const write = (path: string) => {
        mkdirSync(dirname(join(pkg, path)), { recursive: true });
        writeFileSync(join(pkg, path), '//\n');
      };
      const kept = ['src/a.ts', 'src/sub/b.ts', 'dist/a.js', 'dist/a.d.ts', 'dist/sub/b.js'];
      const generated = ['dist/node-bundle/chunk.js', 'dist/defaults/bundle.js', 'dist/data.json'];
      const stale = ['dist/gone.js', 'dist/gone.d.ts', 'dist/sub/moved.js'];
      for (const f of [...kept, ...generated, ...stale, 'dist/a.js.map']) write(f);
      const { stderr } = spawnSync(
        process.execPath,
        [join(packagesDir, '../scripts/prune-stale-dist.mjs')],
        {
          cwd: pkg,
          encoding: 'utf8',
        },
      );
      expect(stderr).toBe(
        ['dist/gone.d.ts', 'dist/gone.js', 'dist/sub/moved.js']
          .map((f) => `prepack: removed ${f} (its source is gone)\n`)
          .join(''),
      );
      for (const f of [...kept, ...generated, 'dist/a.js.map'])
        expect(existsSync(join(pkg, f))).toBe(true);
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });
});
