import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRulesetXml } from '../src/parse/index.js';
import { corpusXmlFiles } from './support/corpus.js';

const codes = (xml: string) =>
  parseRulesetXml(xml, 'x.xml').diagnostics.map((d) => `${d.line}:${d.column} ${d.code}`);

describe('parseRulesetXml', () => {
  it('reads every child in document order with positions', () => {
    const xml = [
      '<!-- header -->',
      '<ruleset name="Example" default_off="broken" platform="mixedcontent">',
      '\t<target host="example.com" />',
      '\t<exclusion pattern="^http://example\\.com/x" />',
      '\t<rule from="^http://example\\.com/" to="https://www.example.com/" />',
      '\t<rule from="^http:" to="https:" />',
      '\t<securecookie host=".+" name="^sid$" />',
      '\t<test url="http://example.com/a?b=1&amp;c=2" />',
      '</ruleset>',
    ].join('\n');
    const { ruleset, diagnostics } = parseRulesetXml(xml, 'Example.xml');
    expect(diagnostics).toEqual([]);
    expect(ruleset).toMatchObject({
      name: 'Example',
      defaultOff: 'broken',
      platform: 'mixedcontent',
      targets: [{ host: 'example.com', loc: { file: 'Example.xml', line: 3, column: 2 } }],
      exclusions: [{ pattern: '^http://example\\.com/x', loc: { line: 4 } }],
      rules: [
        { from: '^http://example\\.com/', to: 'https://www.example.com/', loc: { line: 5 } },
        { from: '^http:', to: 'https:', loc: { line: 6 } },
      ],
      secureCookies: [{ host: '.+', name: '^sid$', loc: { line: 7 } }],
      tests: [{ url: 'http://example.com/a?b=1&c=2', loc: { line: 8 } }],
    });
  });

  it('names the line and problem for each kind of error', () => {
    expect(
      codes('<ruleset name="A">\n<target host="a.com"/>\n<rule from="^http:"/>\n</ruleset>'),
    ).toEqual(['3:1 missing-attribute', '1:1 no-rule']);
    expect(
      codes(
        '<ruleset name="A">\n<target host="a.com"/>\n<rule from="^http://(a.com/" to="https://a.com/"/>\n</ruleset>',
      ),
    ).toEqual(['3:1 invalid-regex']);
    expect(codes('<ruleset name="A">\n  <rule from="^http:" to="https:"/>\n</ruleset>')).toEqual([
      '1:1 no-target',
    ]);
    expect(
      codes(
        '<ruleset name="A">\n<target host="a.com"/><rule from="^http:" to="https:"/>\n<bogus/>\n</ruleset>',
      ),
    ).toEqual(['3:1 unknown-element']);
    expect(codes('<rules name="A"/>')).toEqual(['1:1 root-element']);
    expect(
      codes('<ruleset>\n<target host="a.com"/><rule from="^http:" to="https:"/></ruleset>'),
    ).toEqual(['1:1 missing-attribute']);
    const broken = parseRulesetXml(
      '<ruleset name="A">\n<target host="a.com">\n</ruleset>',
      'B.xml',
    );
    expect(broken.ruleset).toBeNull();
    expect(broken.diagnostics[0]).toMatchObject({
      file: 'B.xml',
      line: 3,
      code: 'xml-syntax',
      severity: 'error',
    });
    expect(codes('')).toEqual(['1:1 xml-syntax']);
  });

  it('parses all 24,264 corpus files without an error', () => {
    const files = corpusXmlFiles();
    expect(files.length).toBe(24264);
    let targets = 0;
    let rules = 0;
    for (const file of files) {
      const { ruleset, diagnostics } = parseRulesetXml(readFileSync(file, 'utf8'), file);
      expect(diagnostics, file).toEqual([]);
      targets += ruleset!.targets.length;
      rules += ruleset!.rules.length;
    }
    // Counts stated in ../shared/corpus/README.md.
    expect(targets).toBe(149413);
    expect(rules).toBe(32054);
  });
});

/** Deterministic PRNG so a failing mutation can be reproduced from its seed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PIECES = [
  '<',
  '>',
  '"',
  "'",
  '&',
  '&amp;',
  '&#x0;',
  ']]>',
  '<!--',
  '-->',
  '/>',
  '</ruleset>',
  '<rule from="(" to="x"/>',
  '<target host=""/>',
  '\u0000',
  '\uFFFF',
  '(?<=',
  '\\',
  '$1',
  'é',
];

describe('parser fuzzing with mutated corpus files', () => {
  it('never throws and always says why a ruleset was rejected', () => {
    const files = corpusXmlFiles().filter((_, i) => i % 97 === 0);
    const random = prng(20181011);
    let rejected = 0;
    let mutations = 0;
    for (const file of files) {
      const original = readFileSync(file, 'utf8');
      for (let k = 0; k < 12; k++) {
        let xml = original;
        const at = Math.floor(random() * xml.length);
        const op = Math.floor(random() * 4);
        if (op === 0) xml = xml.slice(0, at);
        else if (op === 1) xml = xml.slice(0, at) + xml.slice(at + 1 + Math.floor(random() * 20));
        else if (op === 2)
          xml = xml.slice(0, at) + PIECES[Math.floor(random() * PIECES.length)] + xml.slice(at);
        else xml = xml.slice(0, at) + xml.slice(at).replace(/"/, '');
        mutations++;
        const result = parseRulesetXml(xml, file);
        if (result.ruleset === null) {
          rejected++;
          expect(
            result.diagnostics.some(
              (d) =>
                d.severity === 'error' && d.file === file && d.line >= 1 && d.message.length > 0,
            ),
          ).toBe(true);
        }
      }
    }
    expect(mutations).toBeGreaterThan(2000);
    expect(rejected).toBeGreaterThan(mutations / 4);
  });
});

describe('positions', () => {
  it('points at the "<" of an element even when a newline follows its name', () => {
    const xml =
      '<ruleset\n\tname="A">\n  <target\n    host="a.com"/>\n\t\t<rule from="^http:" to="https:"/>\n</ruleset>';
    const { ruleset } = parseRulesetXml(xml, 'A.xml');
    expect(ruleset?.loc).toMatchObject({ line: 1, column: 1 });
    expect(ruleset?.targets[0]?.loc).toMatchObject({ line: 3, column: 3 });
    expect(ruleset?.rules[0]?.loc).toMatchObject({ line: 5, column: 3 });
  });
});
