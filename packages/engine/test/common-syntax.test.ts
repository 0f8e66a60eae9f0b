import { RegExpParser, type AST } from '@eslint-community/regexpp';
import { describe, expect, it } from 'vitest';
import { loadRulesets } from '../src/node/index.js';
import { parseCommonPattern } from '../src/regex/common-syntax.js';
import { parsePatternOrThrow } from '../src/regex/pattern-ast.js';
import { corpusRulesDir } from './support/corpus.js';

const regexpp = new RegExpParser({ ecmaVersion: 2025 });

/** regexpp's tree, or null when it rejects the pattern. */
function reference(source: string): AST.Pattern | null {
  try {
    return regexpp.parsePattern(source, 0, source.length, { unicode: false });
  } catch {
    return null;
  }
}

/** A tree as plain data: each parent named by its type and position, since both trees are cyclic. */
function plain(node: AST.Pattern): string {
  return JSON.stringify(node, (key, value: unknown) => {
    if (key === 'parent')
      return value === null
        ? null
        : `${(value as AST.Node).type}@${(value as AST.Node).start}-${(value as AST.Node).end}`;
    return value === Infinity ? 'Infinity' : value;
  });
}

/** Where the common parser reads `source` differently from regexpp (accepting is optional, agreeing is not). */
function disagreement(source: string): string | null {
  const ours = parseCommonPattern(source);
  if (ours === null) return null;
  const theirs = reference(source);
  if (theirs === null) return `${JSON.stringify(source)}: accepted here, rejected by regexpp`;
  return plain(ours) === plain(theirs)
    ? null
    : `${JSON.stringify(source)}:\n  ours   ${plain(ours)}\n  theirs ${plain(theirs)}`;
}

describe('the common-syntax parser', () => {
  it('reads every corpus pattern it accepts exactly as regexpp does, and accepts nearly all', () => {
    const { rulesets } = loadRulesets([corpusRulesDir()]);
    const sources = new Set<string>();
    for (const rs of rulesets) {
      for (const r of rs.rules) sources.add(r.from);
      for (const e of rs.exclusions) sources.add(e.pattern);
      for (const c of rs.secureCookies) sources.add(c.host).add(c.name);
    }
    const wrong: string[] = [];
    let accepted = 0;
    for (const source of sources) {
      if (parseCommonPattern(source) !== null) accepted++;
      const why = disagreement(source);
      if (why !== null && wrong.length < 10) wrong.push(why);
    }
    expect(wrong).toEqual([]);
    // The point of the parser: a cold process reads the corpus without loading regexpp.
    expect(accepted / sources.size).toBeGreaterThan(0.99);
  });

  it('agrees with regexpp on the corners of the syntax', () => {
    const corners = [
      '',
      '|',
      'a||b',
      '^$',
      '(?:)',
      '()',
      '(|a)',
      'a{2}',
      'a{2,}',
      'a{2,3}?',
      'a{3,2}',
      'a{,2}',
      'a{',
      'a{1',
      'a{1,',
      '{1}',
      'x{1}{2}',
      'a**',
      'a*?',
      '^*',
      '$+',
      '(?=a)*',
      '(?!a)?',
      '(?=a|b)c',
      '(?<=a)b',
      '(?<!a)b',
      '(?<n>a)\\k<n>',
      '(?i:a)',
      '(?',
      '(a',
      'a)',
      '[a-z]',
      '[z-a]',
      '[-a]',
      '[a-]',
      '[a-b-c]',
      '[\\d-z]',
      '[a-\\d]',
      '[\\-]',
      '[]',
      '[^]',
      '[]a]',
      '[a',
      '[\\]]',
      '[[]',
      '[^\\/?#]+',
      '\\d\\D\\w\\W\\s\\S',
      '[\\w.-]',
      '\\b',
      '\\B',
      '\\1',
      '(a)\\1',
      '\\0',
      '\\n',
      '\\x41',
      '\\u0041',
      '\\cA',
      '\\_',
      '\\-',
      '\\.',
      '\\/',
      '\\ ',
      '[\\ a]',
      '\\',
      'a\\',
      ']',
      '}',
      'a}',
      '\u00e9\\.',
      '\ud83d\ude00',
      '[\ud83d\ude00]',
      '.*',
      '^http://(www\\.)?example\\.com/(?!foo|bar/)',
      '^https?://([\\w-]+\\.)?example\\.(?:com|net)(:\\d+)?/',
    ];
    const wrong = corners.map(disagreement).filter((w) => w !== null);
    expect(wrong).toEqual([]);
    // The common forms are read here, not handed to regexpp.
    for (const source of [
      '^http://(www\\.)?example\\.com/(?!foo|bar/)',
      '[a-b-c]',
      'a{2,3}?',
      '\\-',
    ])
      expect(parseCommonPattern(source)).not.toBeNull();
  });

  it('agrees with regexpp on generated patterns', () => {
    // Deterministic pseudo-random strings over the characters that matter to the syntax.
    const alphabet = [
      'a',
      'b',
      '.',
      '\\',
      '-',
      '^',
      '$',
      '|',
      '(',
      ')',
      '(?:',
      '(?=',
      '(?!',
      '[',
      ']',
      '[^',
      '{',
      '}',
      ',',
      '1',
      '2',
      '*',
      '+',
      '?',
      'd',
      'w',
      '/',
    ];
    let seed = 12345;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const wrong: string[] = [];
    let accepted = 0;
    for (let n = 0; n < 30_000; n++) {
      let source = '';
      const length = 1 + (next() % 12);
      for (let k = 0; k < length; k++) source += alphabet[next() % alphabet.length];
      if (parseCommonPattern(source) !== null) accepted++;
      const why = disagreement(source);
      if (why !== null && wrong.length < 10) wrong.push(why);
    }
    expect(wrong).toEqual([]);
    expect(accepted).toBeGreaterThan(1_000);
  });

  it('leaves what it does not read to regexpp, errors included', () => {
    expect(parsePatternOrThrow('(?<=a)b').alternatives[0]?.elements[0]?.type).toBe('Assertion');
    expect(() => parsePatternOrThrow('a{3,2}')).toThrow(SyntaxError);
    expect(() => parsePatternOrThrow('(a')).toThrow(SyntaxError);
  });
});
