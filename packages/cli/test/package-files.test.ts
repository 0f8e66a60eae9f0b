import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const packagesDir = resolve(import.meta.dirname, '../..');

/** What `npm pack` would put in the tarball (dist/ must be built, as `npm test` does). */
function packedFiles(pkg: string): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: join(packagesDir, pkg), encoding: 'utf8' });
  return (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}

describe.each(['engine', 'cli'])('the @httpsify/%s tarball', (pkg) => {
  it('carries README, LICENSE, the compiled code and an engines field', () => {
    const files = packedFiles(pkg);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'package.json', pkg === 'cli' ? 'dist/bin.js' : 'dist/index.js']));
    expect(readFileSync(join(packagesDir, pkg, 'LICENSE'), 'utf8')).toContain('GNU GENERAL PUBLIC LICENSE\n                       Version 3');
    const manifest = JSON.parse(readFileSync(join(packagesDir, pkg, 'package.json'), 'utf8')) as { engines?: { node?: string }; license?: string };
    expect(manifest.engines?.node).toBe('>=20');
    expect(manifest.license).toBe('GPL-3.0-or-later');
    // Tests and sources stay out of the tarball.
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('src/'))).toEqual([]);
  });
});
