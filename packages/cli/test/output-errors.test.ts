import { mkdtempSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliSync } from './support/run-cli.js';

describe('files a command writes, and stdin it reads', () => {
  it('compile -o: a directory or a missing directory is a plain error, and nothing is written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-out-'));
    const intoDir = runCliSync(['compile', '-o', dir]);
    expect([intoDir.status, intoDir.stderr]).toEqual([
      2,
      `httpsify: -o ${dir}: ${dir} is a directory; give the name of a file to write\n`,
    ]);
    const missing = join(dir, 'missing', 'x.bundle');
    const noDir = runCliSync(['compile', '-o', missing]);
    expect([noDir.status, noDir.stderr]).toEqual([
      2,
      `httpsify: -o ${missing}: the directory ${join(dir, 'missing')} does not exist (create it first)\n`,
    ]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('dnr takes -o, --output like compile (and still --out), with the same errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-out-'));
    for (const option of ['-o', '--output', '--out']) {
      const file = join(dir, `rules${option}.json`);
      expect(runCliSync(['dnr', option, file]).status).toBe(0);
      expect(JSON.parse(readFileSync(file, 'utf8')).length).toBeGreaterThan(10);
    }
    expect(runCliSync(['dnr', '-o', join(dir, 'missing', 'r.json')]).stderr).toContain(
      'does not exist (create it first)',
    );
    expect(runCliSync(['dnr', '--help']).stdout).toContain('-o, --output <file>');
  });

  it('rewrite with a directory as stdin is a usage error, not silence', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-stdin-'));
    const result = runCliSync(['rewrite'], { stdin: openSync(dir, 'r') });
    expect([result.status, result.stdout]).toEqual([2, '']);
    expect(result.stderr).toContain('stdin is a directory');
  });
});
