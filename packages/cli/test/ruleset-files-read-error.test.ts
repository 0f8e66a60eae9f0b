import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expandRulesetPaths } from '../src/authoring/ruleset-files.js';

const root = mkdtempSync(join(tmpdir(), 'httpsify-read-error-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('reading a ruleset path that fails after it opens', () => {
  // /proc/self/mem is a regular file whose first page is unmapped: reading it fails with EIO.
  it.runIf(process.platform === 'linux')('names the file in the error', () => {
    const link = join(root, 'mem.xml');
    symlinkSync('/proc/self/mem', link);
    expect(() => expandRulesetPaths([link])).toThrow(`${link}: cannot read: EIO`);
  });
});
