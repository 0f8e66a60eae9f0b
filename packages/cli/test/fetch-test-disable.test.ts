import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRulesetXml } from '@httpsify/engine/parse';
import {
  commentSafe,
  disableRulesetFile,
  disableRulesetText,
} from '../src/fetch-test/disable-ruleset.js';
import { sequenceSimilarity, tagSequence } from '../src/fetch-test/page-structure.js';

const ORIGINAL = [
  '<?xml version="1.0" encoding="utf-8"?>\r\n',
  '<!--\r\n\tNotes - about the site.\r\n-->\r\n',
  '<ruleset name=\'Odd &amp; "quoted" > name\'\r\n\tplatform="mixedcontent" >\r\n',
  '\t<target host="example.com" />\r\n',
  '\t<rule from="^http:" to="https:" />\r\n',
  '</ruleset>\r\n',
].join('');

describe('fetch-test --disable-failing edit', () => {
  it('inserts only the attribute and a comment, keeping every other byte', () => {
    const reasons = [
      'http://example.com/a--b- => https://example.com/a--b-: HTTPS answered 404 where HTTP answered 200',
      'ends with a dash -',
    ];
    const edit = disableRulesetText(ORIGINAL, reasons);
    // Removing the insertions gives back the original exactly.
    let rebuilt = edit.text;
    for (const ins of [...edit.insertions].sort((a, b) => b.offset - a.offset)) {
      const at =
        ins.offset +
        edit.insertions.filter((o) => o.offset < ins.offset).reduce((n, o) => n + o.text.length, 0);
      expect(rebuilt.slice(at, at + ins.text.length)).toBe(ins.text);
      rebuilt = rebuilt.slice(0, at) + rebuilt.slice(at + ins.text.length);
    }
    expect(rebuilt).toBe(ORIGINAL);
    expect(edit.insertions.map((i) => i.offset)).toEqual([
      ORIGINAL.indexOf('<ruleset'),
      ORIGINAL.indexOf('"mixedcontent"') + '"mixedcontent"'.length,
    ]);
    expect(edit.insertions[1]?.text).toBe(' default_off="failed ruleset test"');
    const comment = edit.insertions[0]!.text;
    expect(comment.startsWith('<!-- Disabled by httpsify fetch-test because:\r\n')).toBe(true);
    expect(comment.endsWith('\r\n-->\r\n')).toBe(true);
    expect(comment.slice(4, -5)).not.toContain('--');
    expect(comment).toContain('a- -b-');
    const parsed = parseRulesetXml(edit.text, 'x.xml');
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.ruleset?.defaultOff).toBe('failed ruleset test');
    expect(parsed.ruleset?.name).toBe('Odd & "quoted" > name');
  });

  it('leaves an existing default_off alone but still explains', () => {
    const xml =
      '<ruleset name="A" default_off="manual"><target host="a.com"/><rule from="^http:" to="https:"/></ruleset>';
    const edit = disableRulesetText(xml, ['x']);
    expect(edit.attributeAdded).toBe(false);
    expect(edit.text).toBe(`<!-- Disabled by httpsify fetch-test because:\n\tx\n-->\n${xml}`);
  });

  it('sanitises comment text', () => {
    expect(commentSafe('a---b-')).toBe('a- - -b- ');
    expect(commentSafe('x\ny\u0001')).toBe('x y\ufffd');
  });

  it('rewrites the file in place, and refuses files it cannot edit safely', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-disable-'));
    const file = join(dir, 'A.xml');
    writeFileSync(file, ORIGINAL);
    await disableRulesetFile(file, ['reason']);
    expect(parseRulesetXml(readFileSync(file, 'utf8'), file).ruleset?.defaultOff).toBe(
      'failed ruleset test',
    );
    const bad = join(dir, 'B.xml');
    writeFileSync(bad, Buffer.from([0x3c, 0x72, 0xff, 0x3e]));
    await expect(disableRulesetFile(bad, ['r'])).rejects.toThrow(/not valid UTF-8/);
    expect(readFileSync(bad)).toEqual(Buffer.from([0x3c, 0x72, 0xff, 0x3e]));
  });
});

describe('fetch-test page structure', () => {
  it('compares tag sequences, ignoring script bodies and comments', () => {
    expect(
      tagSequence('<!-- <b> --><div><script>if (a<b) document.write("<p>")</script><p>x</P></div>'),
    ).toEqual(['div', 'script', '/script', 'p', '/p', '/div']);
    expect(sequenceSimilarity(['a', 'b', 'c', 'd'], ['a', 'c', 'd', 'e'])).toBe(0.75);
    expect(sequenceSimilarity([], [])).toBe(1);
  });
});
