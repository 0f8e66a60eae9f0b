import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliSync } from './support/run-cli.js';

describe('httpsify sweep with nothing to sweep', () => {
  it('says no ruleset could be loaded and exits 2, for an empty or broken library', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-sweep-nothing-'));
    const library = join(dir, 'rules');
    mkdirSync(library);
    const empty = runCliSync(['sweep', library, '--out', join(dir, 'a')]);
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain(
      `httpsify: no ruleset could be loaded from ${library}: nothing was swept\n`,
    );
    writeFileSync(join(library, 'Broken.xml'), '<ruleset');
    const broken = runCliSync(['sweep', library, '--out', join(dir, 'b')]);
    expect(broken.status).toBe(2);
    expect(broken.stderr).toContain('Broken.xml:');
    expect(broken.stderr).toContain('nothing was swept');
  });
});
