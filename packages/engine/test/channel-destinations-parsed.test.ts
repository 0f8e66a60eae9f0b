import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../src/index.js';
import {
  checkBundleDestinations,
  ChannelError,
  channelLayer,
  destinationPolicy,
  readDestination,
  ScopedEngine,
} from '../src/channels/index.js';
import type { Ruleset } from '../src/model/ruleset.js';

/** A scope that owns example.org and its subdomains, written the way channel owners write them. */
const SCOPE = '^http://([^/]*\\.)?example\\.org/';

/** Literal destinations a plain reading puts under example.org, but the WHATWG parser does not. */
const HOSTILE = [
  'https://attacker.example\\.example.org/',
  'https://attacker.example?.example.org/',
  'https://attacker.example#.example.org/',
  'https://www.example.org@attacker.example/',
  'https://attacker.example\t.example.org/',
  'https://x:y@www.example.org/',
  'https://www.ex%61mple.org/',
  'https://0x7f.1/.example.org/',
];

function ruleset(to: string): Ruleset {
  return {
    name: 'Hostile',
    targets: [{ host: 'www.example.org' }],
    rules: [{ from: '^http://www\\.example\\.org/', to }],
    exclusions: [],
    secureCookies: [],
    tests: [],
  };
}

describe('destinations are judged as the URL parser reads them', () => {
  it.each(HOSTILE)('refuses %j', (url) => {
    expect(destinationPolicy(SCOPE, []).allows(url)).toBe(false);
    // Whatever the scope says, a URL the two readings disagree on is never followed.
    if (!/[?#]/.test(url)) expect(destinationPolicy('', []).allows(url)).toBe(false);
  });

  it.each(HOSTILE.filter((u) => !u.includes('%') && !u.includes('0x7f')))(
    'refuses a release whose rule sends to %j',
    (to) => {
      const engine = createEngine([ruleset(to)]);
      expect(() => checkBundleDestinations(engine, destinationPolicy(SCOPE, []))).toThrow(
        ChannelError,
      );
    },
  );

  it('does not follow a computed rewrite that lands outside once parsed', () => {
    const sneaky: Ruleset = {
      name: 'Sneaky',
      targets: [{ host: '*.example.org' }],
      rules: [{ from: '^http://([a-z]+)\\.example\\.org/(.*)$', to: 'https://$2.example.org/' }],
      exclusions: [],
      secureCookies: [],
      tests: [],
    };
    const scoped = new ScopedEngine([channelLayer('c', SCOPE, [], createEngine([sneaky]))]);
    // $2 = "attacker.example\" makes the string end in example.org, the parsed host attacker.example.
    const out = scoped.rewriteWithRuleset('http://www.example.org/attacker.example%5C');
    expect(out.rewritten).toBeNull();
    const bare = scoped.rewriteWithRuleset('http://www.example.org/attacker.example\\');
    expect(bare.rewritten).toBeNull();
    expect(scoped.rewrite('http://www.example.org/static')).toBe('https://static.example.org/');
  });

  it('keeps ordinary destinations, ports and listed hosts', () => {
    const policy = destinationPolicy(SCOPE, ['cdn.example.net']);
    expect(policy.allows('https://www.example.org/a?b#c')).toBe(true);
    expect(policy.allows('https://WWW.Example.org/')).toBe(true);
    expect(policy.allows('https://cdn.example.net:8443/x')).toBe(true);
    expect(readDestination('https://example.org:443/')).toEqual({
      href: 'https://example.org/',
      hostname: 'example.org',
    });
    expect(readDestination('https://example.org:0443/')).toBeNull();
    expect(readDestination('https://1.2.3/')).toBeNull();
  });
});

/** Characters the WHATWG parser treats specially in an authority, and ordinary ones. */
const HOSTILE_ALPHABET = [
  ...'abexmplorg.-_0123456789:@\\/?#%[]\t\n\r !$&\'()*+,;=~`^{}|"<>',
  '\u00ad',
  '\u3002',
  '\uff0e',
  'ß',
  'A',
  'E',
  '%2e',
  '%40',
  '%5c',
  '0x',
  'xn--',
  'example.org',
  '.example.org',
  'attacker.example',
  'www.',
];

describe('fuzz: the plain reading and the URL parser agree', () => {
  const authority = fc
    .array(fc.constantFrom(...HOSTILE_ALPHABET), { minLength: 1, maxLength: 24 })
    .map((parts) => parts.join(''));
  const suffix = fc.constantFrom(
    '',
    '/',
    '/p?q#f',
    '?x',
    '#y',
    '.example.org/',
    '\\.example.org/',
    '@example.org/',
  );

  it('whenever a URL is read at all, its parsed host is its plain authority', () => {
    fc.assert(
      fc.property(fc.constantFrom('http', 'https'), authority, suffix, (scheme, auth, rest) => {
        const url = `${scheme}://${auth}${rest}`;
        const read = readDestination(url);
        if (read === null) return;
        const parsed = new URL(url);
        const plainAuthority = url.slice(scheme.length + 3).split(/[/?#]/)[0] as string;
        expect(parsed.username + parsed.password).toBe('');
        expect(parsed.protocol).toBe(`${scheme}:`);
        expect(plainAuthority.toLowerCase().startsWith(parsed.hostname)).toBe(true);
        expect(plainAuthority.slice(parsed.hostname.length)).toMatch(/^(:[0-9]+)?$/);
        expect(read.hostname).toBe(parsed.hostname);
      }),
      { numRuns: 4000, seed: 24 },
    );
  });

  it('a scope of example.org never lets a parsed host elsewhere through', () => {
    const policy = destinationPolicy(SCOPE, []);
    let allowed = 0;
    fc.assert(
      fc.property(fc.constantFrom('http', 'https'), authority, suffix, (scheme, auth, rest) => {
        const url = `${scheme}://${auth}${rest}`;
        if (!policy.allows(url)) return;
        allowed++;
        const host = new URL(url).hostname;
        expect(host === 'example.org' || host.endsWith('.example.org')).toBe(true);
      }),
      { numRuns: 4000, seed: 2424 },
    );
    // The property is not empty: some generated URLs do land in the scope.
    expect(allowed).toBeGreaterThan(20);
  });
});
