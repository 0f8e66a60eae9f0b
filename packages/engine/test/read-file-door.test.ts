import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileRefused, FileTooLarge, loadRulesets, readRegularFile } from '../src/node/index.js';

const RULESET = (name: string) =>
  `<ruleset name="${name}">\n\t<target host="${name.toLowerCase()}.example" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n`;

// Devices and FIFOs are Unix things; so is /proc, whose files stat as empty but are not.
const unix = process.platform !== 'win32';
const linux = existsSync('/proc/self/status');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'httpsify-door-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mkfifo = (path: string): void => void execFileSync('mkfifo', [path]);

describe('readRegularFile: the one door for rulesets, bundles and channel files', () => {
  it.runIf(unix)(
    'refuses devices, FIFOs (without waiting for a writer), directories, and links to them',
    () => {
      mkfifo(join(dir, 'fifo.xml'));
      symlinkSync('/dev/zero', join(dir, 'zero.xml'));
      for (const path of ['/dev/zero', join(dir, 'zero.xml'), join(dir, 'fifo.xml'), dir]) {
        expect(() => readRegularFile(path, 1024)).toThrow(new FileRefused('not a regular file'));
      }
    },
  );

  it('reads a regular file, and a link to one, up to its bound', () => {
    writeFileSync(join(dir, 'a.xml'), 'twelve bytes');
    symlinkSync(join(dir, 'a.xml'), join(dir, 'link.xml'));
    expect(readRegularFile(join(dir, 'link.xml'), 12).toString()).toBe('twelve bytes');
    expect(() => readRegularFile(join(dir, 'a.xml'), 11)).toThrow(FileTooLarge);
  });

  it.runIf(linux)(
    'bounds what it reads, not what stat says: a file stat calls empty is cut at the bound',
    () => {
      // /proc/self/status has stat size 0 and some hundred bytes, like a file that grew after fstat.
      let err: unknown;
      try {
        readRegularFile('/proc/self/status', 16);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FileTooLarge);
      expect((err as FileTooLarge).size).toBe(17);
      expect(readRegularFile('/proc/self/status', 1 << 20).toString()).toMatch(/^Name:/);
    },
  );
});

describe('loadRulesets reads files through the door', () => {
  it.runIf(unix)(
    'a rules folder with a link to /dev/zero and a FIFO: both named as not regular files, the rest loads',
    () => {
      writeFileSync(join(dir, 'A.xml'), RULESET('A'));
      symlinkSync('/dev/zero', join(dir, 'B-zero.xml'));
      mkfifo(join(dir, 'C-fifo.xml'));
      const loaded = loadRulesets([dir]);
      expect(loaded.rulesets.map((r) => r.name)).toEqual(['A']);
      expect(loaded.diagnostics).toEqual([
        {
          severity: 'error',
          code: 'read-error',
          message: 'cannot read: not a regular file',
          file: join(dir, 'B-zero.xml'),
          line: 1,
          column: 1,
        },
        {
          severity: 'error',
          code: 'read-error',
          message: 'cannot read: not a regular file',
          file: join(dir, 'C-fifo.xml'),
          line: 1,
          column: 1,
        },
      ]);
    },
  );

  it.runIf(unix)('a device or FIFO given as the rules path is an error naming it', () => {
    mkfifo(join(dir, 'rules.xml'));
    expect(() => loadRulesets(['/dev/zero'])).toThrow(
      'cannot read rulesets from /dev/zero: not a regular file',
    );
    expect(() => loadRulesets([join(dir, 'rules.xml')])).toThrow(
      `cannot read rulesets from ${join(dir, 'rules.xml')}: not a regular file`,
    );
  });

  it('a file that is not UTF-8 is left out, reported at the line of its first bad byte; a BOM is fine', () => {
    writeFileSync(
      join(dir, 'A.xml'),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(RULESET('A'))]),
    );
    writeFileSync(
      join(dir, 'B.xml'),
      Buffer.from(RULESET('B').replace('\t<rule ', '\t<!-- \u00e9 -->\n\t<rule '), 'latin1'),
    );
    const loaded = loadRulesets([dir]);
    expect(loaded.rulesets.map((r) => r.name)).toEqual(['A']);
    expect(loaded.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'read-error',
        message: 'not UTF-8 text (first bad byte on line 3)',
        file: join(dir, 'B.xml'),
        line: 3,
        column: 1,
      },
    ]);
  });
});
