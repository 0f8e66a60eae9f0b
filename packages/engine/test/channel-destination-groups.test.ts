/**
 * Capture groups as the destination check reads them (through the engine's regex parser), on
 * `from` patterns where a scanner of parentheses goes wrong: named groups, lookarounds, classes
 * and escapes holding parentheses, backreferences, `\Q`, `\u{..}` without the unicode flag.
 * Every claim is also checked against what JavaScript's own replace does to real URLs.
 */
import { describe, expect, it } from 'vitest';
import { ruleDestination, type RuleDestination } from '../src/channels/index.js';

interface Case {
  why: string;
  from: string;
  to: string;
  expected: RuleDestination;
}

const literal = (...hosts: string[]): RuleDestination => ({
  kind: 'literal',
  urls: hosts.map((h) => `https://${h}/`),
});

const CASES: Case[] = [
  {
    why: 'a named group counts: $2 is (www\\.)?, not what follows it',
    from: '^http://(?<pre>attacker\\.test/)?(www\\.)?example\\.org/',
    to: 'https://$2example.org/',
    expected: literal('example.org', 'www.example.org'),
  },
  {
    why: 'a named group is $1',
    from: '^http://(?<h>attacker\\.test)/(www\\.)?',
    to: 'https://$1example.org/',
    expected: literal('attacker.testexample.org'),
  },
  {
    why: 'a named group inside an optional non-capturing group',
    from: '^http://(?:(?<x>evil)\\.)?(www|cdn)\\.example\\.org/',
    to: 'https://$1.example.org/',
    expected: literal('.example.org', 'evil.example.org'),
  },
  {
    why: 'a parenthesis in a character class opens no group',
    from: '^http://[(]?(www\\.)?example\\.org/',
    to: 'https://$1example.org/',
    expected: literal('example.org', 'www.example.org'),
  },
  {
    why: 'an escaped bracket does not end the class',
    from: '^http://[\\](]?(www\\.)?example\\.org/',
    to: 'https://$1example.org/',
    expected: literal('example.org', 'www.example.org'),
  },
  {
    why: 'an escaped parenthesis opens no group',
    from: '^http://\\(?(www\\.)?example\\.org/',
    to: 'https://$1example.org/',
    expected: literal('example.org', 'www.example.org'),
  },
  {
    why: 'a group in a quantified lookahead may not take part',
    from: '^http://(?=(evil\\.test))?(www\\.)example\\.org/',
    to: 'https://$1/',
    expected: literal('', 'evil.test'),
  },
  {
    why: 'a group in a negative lookahead never takes part',
    from: '^http://(?!(evil))(www|cdn)\\.example\\.org/',
    to: 'https://$1.example.org/',
    expected: literal('.example.org', 'evil.example.org'),
  },
  {
    why: 'a group in a lookbehind counts, after the groups before it',
    from: '^http://(www|cdn)\\.(?<=(w)\\.)example\\.org/',
    to: 'https://$2.example.org/',
    expected: literal('w.example.org'),
  },
  {
    why: 'a backreference is no group',
    from: '^http://(www)\\.\\1?example\\.org/',
    to: 'https://$1.example.org/',
    expected: literal('www.example.org'),
  },
  {
    why: '\\Q is the letter Q: what follows is a group',
    from: '^http://\\Q(www)\\E\\.example\\.org/',
    to: 'https://$1.example.org/',
    expected: literal('www.example.org'),
  },
  {
    why: 'without the unicode flag \\u{77} is 77 letters u, not a w',
    from: '^http://(\\u{77}ww\\.)example\\.org/',
    to: 'https://$1example.org/',
    expected: { kind: 'computed' },
  },
  {
    why: 'a pattern that does not parse has no groups to rely on',
    from: '^http://(www\\.)?example\\.org/(',
    to: 'https://$1example.org/',
    expected: { kind: 'computed' },
  },
];

/** URLs some of the patterns match, with the hosts a misreading would let through. */
const URLS = [
  'http://www.example.org/',
  'http://cdn.example.org/',
  'http://example.org/',
  'http://(www.example.org/',
  'http://(example.org/',
  'http://]example.org/',
  'http://www.www.example.org/',
  'http://evil.www.example.org/',
  'http://evil.test/',
  'http://attacker.test/',
  'http://attacker.test/www.',
  'http://attacker.test/www.example.org/',
  'http://QwwwE.example.org/',
  `http://${'u'.repeat(77)}ww.example.org/`,
];

/** The host JavaScript's replace sends `url` to, or null when the pattern does not match. */
function actualHost(from: string, to: string, url: string): string | null {
  const regex = new RegExp(from);
  if (!regex.test(url)) return null;
  try {
    return new URL(url.replace(regex, to)).hostname;
  } catch {
    return '';
  }
}

describe('capture groups read by the regex parser', () => {
  it.each(CASES)('$why', ({ from, to, expected }) => {
    expect(ruleDestination(to, from)).toEqual(expected);
  });

  // JavaScript cannot run the pattern that does not parse either.
  const runnable = CASES.filter((c) => !c.from.endsWith('('));
  it.each(runnable)('claims every host JavaScript sends to: $from', ({ from, to }) => {
    const claim = ruleDestination(to, from);
    let matched = 0;
    for (const url of URLS) {
      const host = actualHost(from, to, url);
      if (host === null) continue;
      matched++;
      if (claim.kind === 'literal')
        expect(claim.urls.map((u) => /^https:\/\/([^/]*)\//.exec(u)?.[1])).toContain(host);
      if (claim.kind === 'subdomain') expect(host.endsWith(`.${claim.of}`)).toBe(true);
    }
    expect(matched).toBeGreaterThan(0);
  });
});
