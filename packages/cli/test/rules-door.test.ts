import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRulesetSource } from '../src/authoring/ruleset-files.js';
import { libraryRulesets } from '../src/sweep/job-source.js';
import { workTimeout } from '../../engine/test/support/work-timeout.js';
import { runCliSync } from './support/run-cli.js';

// A bound against the old behaviour (reading /dev/zero for ever, waiting on a FIFO): a hang
// fails. Each run reads a few small rulesets.
const BOUNDED = { timeout: workTimeout(1, 1_000) };

const RULESET = (name: string) =>
  `<ruleset name="${name}">\n\t<target host="${name.toLowerCase()}.example" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n`;
const LATIN1 = (name: string) =>
  Buffer.from(RULESET(name).replace('\t<rule ', '\t<!-- caf\u00e9 -->\n\t<rule '), 'latin1');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'httpsify-rules-door-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe.runIf(process.platform !== 'win32')(
  'rulesets are read only from regular files, within bounds',
  () => {
    it('rewrite --rules /dev/zero, a FIFO, or a folder linking to /dev/zero: an error naming the file, at once', () => {
      execFileSync('mkfifo', [join(dir, 'fifo.xml')]);
      for (const rules of ['/dev/zero', join(dir, 'fifo.xml')]) {
        const r = runCliSync(['rewrite', '--rules', rules, 'http://a.example/'], BOUNDED);
        expect(r.signal).toBeNull();
        expect(r.status).toBe(2);
        expect(r.stderr).toBe(`httpsify: cannot read rulesets from ${rules}: not a regular file\n`);
      }
      rmSync(join(dir, 'fifo.xml'));
      writeFileSync(join(dir, 'A.xml'), RULESET('A'));
      symlinkSync('/dev/zero', join(dir, 'zero.xml'));
      const r = runCliSync(['rewrite', '--rules', dir, 'http://a.example/'], BOUNDED);
      expect(r.signal).toBeNull();
      expect(r.stderr).toContain(
        `${join(dir, 'zero.xml')}:1:1: error read-error: cannot read: not a regular file\n`,
      );
      expect(r.stdout).toBe('https://a.example/\n');
    });

    it('the sweep reports a folder file that is a device, a FIFO or not UTF-8, and sweeps the rest', async () => {
      writeFileSync(join(dir, 'A.xml'), RULESET('A'));
      writeFileSync(join(dir, 'B.xml'), LATIN1('B'));
      symlinkSync('/dev/zero', join(dir, 'C.xml'));
      execFileSync('mkfifo', [join(dir, 'D.xml')]);
      const bad: string[] = [];
      const names: string[] = [];
      for await (const r of libraryRulesets([dir], (m) => bad.push(m))) names.push(r.name);
      expect(names).toEqual(['A']);
      expect(bad).toEqual([
        `${join(dir, 'B.xml')}:3:1: not UTF-8 text (first bad byte on line 3)`,
        `${join(dir, 'C.xml')}: cannot read: not a regular file`,
        `${join(dir, 'D.xml')}: cannot read: not a regular file`,
      ]);
      const given = libraryRulesets(['/dev/zero'], () => undefined);
      await expect(given.next()).rejects.toThrow(
        'cannot read rulesets from /dev/zero: not a regular file',
      );
      // An archive is told by its bytes: a path given is read through the same door first.
      execFileSync('mkfifo', [join(dir, 'lib.tar.gz')]);
      const tar = libraryRulesets([join(dir, 'lib.tar.gz')], () => undefined);
      await expect(tar.next()).rejects.toThrow(
        `cannot read rulesets from ${join(dir, 'lib.tar.gz')}: not a regular file`,
      );
    });

    it('check and test read ruleset files the same way; a BOM stays in the text they diff', () => {
      execFileSync('mkfifo', [join(dir, 'fifo.xml')]);
      expect(() => readRulesetSource(join(dir, 'fifo.xml'))).toThrow(
        `${join(dir, 'fifo.xml')}: cannot read: not a regular file`,
      );
      writeFileSync(join(dir, 'B.xml'), LATIN1('B'));
      expect(() => readRulesetSource(join(dir, 'B.xml'))).toThrow(
        `${join(dir, 'B.xml')}:3: not UTF-8 text (first bad byte on line 3)`,
      );
      writeFileSync(join(dir, 'A.xml'), `\uFEFF${RULESET('A')}`);
      expect(readRulesetSource(join(dir, 'A.xml')).text).toBe(`\uFEFF${RULESET('A')}`);
      const r = runCliSync(['check', join(dir, 'B.xml'), '--no-baseline'], BOUNDED);
      expect(r.signal).toBeNull();
      expect(r.stderr).toContain('B.xml:3: not UTF-8 text');
    });
  },
);
