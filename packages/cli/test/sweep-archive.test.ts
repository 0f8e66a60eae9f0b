import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { libraryRulesets } from '../src/sweep/job-source.js';
import { tar } from '../../extension/test/support/tar.js';

const root = mkdtempSync(join(tmpdir(), 'httpsify-sweep-archive-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ruleset = (name: string, padding = 0): string =>
  `<ruleset name="${name}"><target host="${name}"/><rule from="^http:" to="https:"/><!--${' '.repeat(padding)}--></ruleset>`;

async function read(path: string): Promise<{ names: string[]; bad: string[] }> {
  const names: string[] = [];
  const bad: string[] = [];
  for await (const r of libraryRulesets([path], (m) => bad.push(m))) names.push(r.name);
  return { names, bad };
}

describe('sweep reads archives through the shared library reader', () => {
  it('refuses an entry past the per-file limit, naming archive and entry, and keeps the rest', async () => {
    // 3 MB: past LIBRARY_LIMITS.fileBytes (2 MB), as `rewrite --rules` refuses it.
    const path = join(root, 'big.tar.gz');
    writeFileSync(
      path,
      gzipSync(
        tar([
          { name: 'Big.xml', data: ruleset('big.example.com', 3 * 1024 * 1024) },
          { name: 'Small.xml', data: ruleset('small.example.com') },
        ]),
      ),
    );
    const { names, bad } = await read(path);
    expect(names).toEqual(['small.example.com']);
    expect(bad).toHaveLength(1);
    expect(bad[0]).toContain(`${path}/Big.xml`);
    expect(bad[0]).toContain('larger than 2 MB');
  });

  it('refuses a whole archive whose entries declare more than the library limit, naming it', async () => {
    const path = join(root, 'lie.tar');
    writeFileSync(path, tar([{ name: 'Huge.xml', data: '', declaredSize: 100 * 1024 * 1024 }]));
    await expect(read(path)).rejects.toThrow(`${path}: more than 64 MB once unpacked`);
  });
});
