import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  branchCount,
  dollarUses,
  lintCollection,
  suppressionsOf,
  lintRulesetSource,
  parsePattern,
  PSL_SNAPSHOT,
  publicSuffix,
  registrableDomain,
  type LintedFile,
} from '../src/authoring/index.js';
import { corpusRulesDir } from './support/corpus.js';

const codes = (xml: string): string[] =>
  lintRulesetSource(xml, 'T.xml').diagnostics.map((d) => d.code);
const wrap = (body: string, attrs = 'name="T"'): string =>
  `<ruleset ${attrs}>\n${body}\n</ruleset>\n`;
const trivial = '<rule from="^http:" to="https:" />';

describe('structure', () => {
  it('accepts a clean trivial ruleset without findings', () => {
    expect(
      codes(wrap(`<target host="example.com" />\n<target host="www.example.com" />\n${trivial}`)),
    ).toEqual([]);
  });
  it('reports unknown attributes, text content and bad platform with positions', () => {
    const xml = wrap(
      `<target host="example.com" port="80" />\n  stray text\n${trivial}`,
      'name="T" platform="firefox"',
    );
    const d = lintRulesetSource(xml, 'T.xml').diagnostics;
    expect(d.map((x) => [x.code, x.line, x.column])).toEqual([
      ['platform-value', 1, 1],
      ['unknown-attribute', 2, 1],
      ['text-content', 3, 3],
    ]);
  });
  it('keeps the parser errors (no target, no rule) and does not duplicate them', () => {
    expect(codes(wrap(''))).toEqual(['no-rule', 'no-target']);
  });
});

describe('targets', () => {
  const t = (host: string): string[] => codes(wrap(`<target host="${host}" />\n${trivial}`));
  it.each([
    ['Example.com', 'target-case'],
    ['example.com.', 'target-trailing-dot'],
    ['example.com:8080', 'target-port'],
    ['ex*.example.com', 'target-wildcard'],
    ['*.*.example.com', 'target-wildcard'],
    ['bücher.de', 'target-non-ascii'],
    ['exa$mple.com', 'target-chars'],
    ['co.uk', 'target-public-suffix'],
    ['*.com', 'target-public-suffix'],
    ['files.*.example.com', 'target-middle-wildcard'],
  ])('%s -> %s', (host, code) => {
    expect(t(host)).toEqual([code]);
  });
  it.each([
    'example.com',
    '*.example.com',
    'www.google.*',
    'xn--bcher-kva.de',
    'a_b.example.com',
    'github.io',
  ])('%s is fine', (host) => {
    expect(t(host)).toEqual([]);
  });
  it('allows the public suffixes that are sites by name only, not by wildcard', () => {
    expect(t('gov.uk')).toEqual([]);
    expect(t('police.uk')).toEqual([]);
    expect(t('*.gov.uk')).toEqual(['target-public-suffix']);
  });
  it('EFF checks: a target without a public suffix, a target a wildcard already covers', () => {
    expect(t('intranet')).toEqual(['target-no-public-suffix']);
    expect(t('www.example.intranet')).toEqual(['target-no-public-suffix']);
    expect(t('10.0.0.1')).toEqual([]);
    // Special-use names (RFC 6761/7686) are not private-network names: test suites and examples use them.
    expect(t('www.example.test')).toEqual([]);
    expect(t('*.example.test')).toEqual([]);
    expect(t('duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion')).toEqual([]);
    const two = (a: string, b: string): string[] =>
      codes(wrap(`<target host="${a}" />\n<target host="${b}" />\n${trivial}`));
    expect(two('*.d.example.com', 'www.d.example.com')).toEqual(['target-covered']);
    expect(two('*.example.com', '*.a.example.com')).toEqual(['target-covered']);
    expect(two('*.example.com', 'example.com')).toEqual([]);
    expect(two('*.com', 'a.example.com')).toEqual(['target-public-suffix']);
  });
  it('uses a pinned list and knows its sections', () => {
    // The snapshot names the exactly pinned tldts release that is installed.
    const pinned = (
      JSON.parse(readFileSync(join(import.meta.dirname, '../package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      }
    ).dependencies.tldts;
    const installed = (
      JSON.parse(
        readFileSync(createRequire(import.meta.url).resolve('tldts/package.json'), 'utf8'),
      ) as { version: string }
    ).version;
    expect(pinned).toBe(installed);
    expect(PSL_SNAPSHOT.source).toBe(`npm tldts@${installed}`);
    expect(publicSuffix('www.example.co.uk')).toEqual({ suffix: 'co.uk', section: 'icann' });
    expect(publicSuffix('foo.github.io').section).toBe('private');
    expect(registrableDomain('a.b.example.co.uk')).toBe('example.co.uk');
    expect(registrableDomain('www.city.kawasaki.jp')).toBe('city.kawasaki.jp');
    // Wildcard and exception rules (`*.ck`, `!www.ck`), IDN suffixes in punycode, the implicit `*` rule.
    expect(publicSuffix('a.b.ck')).toEqual({ suffix: 'b.ck', section: 'icann' });
    expect(publicSuffix('www.ck')).toEqual({ suffix: 'ck', section: 'icann' });
    expect(publicSuffix('foo.xn--55qx5d.cn')).toEqual({
      suffix: 'xn--55qx5d.cn',
      section: 'icann',
    });
    expect(publicSuffix('foo.github.io', { privateDomains: false })).toEqual({
      suffix: 'io',
      section: 'icann',
    });
    expect(publicSuffix('a.example.unknowntld')).toEqual({ suffix: 'unknowntld', section: null });
    expect(registrableDomain('co.uk')).toBe(null);
  });
});

describe('rules', () => {
  const r = (
    from: string,
    to: string,
    targets = '<target host="example.com" />\n<target host="*.example.com" />',
  ): string[] => codes(wrap(`${targets}\n<rule from="${from}" to="${to}" />`));
  it('checks from and to prefixes', () => {
    expect(r('^https?://example\\.com/', 'https://example.com/')).toEqual(['from-prefix']);
    expect(r('^http://example\\.com', 'https://example.com/')).toEqual(['from-prefix']);
    expect(r('^http://example\\.com/', 'https:')).toEqual(['to-https-colon']);
    expect(r('^http://example\\.com/', 'https://example.com')).toEqual(['to-prefix']);
  });
  it('checks $N against the groups of from, with JavaScript semantics', () => {
    expect(r('^http://example\\.com/', 'https://example.com/$1')).toEqual(['to-missing-group']);
    expect(r('^http://(www\\.)?example\\.com/', 'https://$1example.com/')).toEqual([]);
    expect(r('^http://(www\\.)?example\\.com/', 'https://example.com/$u')).toEqual([
      'to-literal-dollar',
    ]);
    expect(dollarUses('$12', 1)).toEqual([{ kind: 'group', group: 1, offset: 0, text: '$1' }]);
    expect(dollarUses('$12', 12)[0]).toMatchObject({ kind: 'group', group: 12 });
  });
  it('flags a to that copies a group reaching into the #fragment more than once or before more text', () => {
    expect(r('^http://example\\.com/([^?]*)(.*)', 'https://example.com/$1$2$2')).toEqual([
      'to-copies-fragment',
    ]);
    expect(r('^http://example\\.com/(.*)', 'https://example.com/$1/')).toEqual([
      'to-copies-fragment',
    ]);
    // Copied once, at the end, in order: the fragment ends the result as it ends the URL.
    expect(r('^http://example\\.com/([^?]*)(.*)', 'https://example.com/$1$2')).toEqual([]);
    // The group stops at "#", or what follows it must match something: it never reaches the fragment.
    expect(r('^http://example\\.com/([^#]*)', 'https://example.com/$1$1')).toEqual([]);
    expect(r('^http://example\\.com/(\\w+)\\.html', 'https://example.com/$1/$1.html')).toEqual([]);
  });
  it('finds unescaped host dots in from and in exclusions, not in the path or classes', () => {
    expect(r('^http://www.example\\.com/', 'https://www.example.com/')).toEqual(['unescaped-dot']);
    expect(r('^http://www\\.example\\.com/a.b', 'https://www.example.com/a.b')).toEqual([]);
    expect(r('^http://[\\w.]+\\.example\\.com/', 'https://example.com/')).toEqual([]);
    const xml = wrap(
      `<target host="*.example.com" />\n<exclusion pattern="^http://foo.example\\.com/" />\n${trivial}`,
    );
    expect(codes(xml)).toEqual(['unescaped-dot']);
  });
  it('finds rules and exclusions no target reaches', () => {
    expect(r('^http://www\\.other\\.com/', 'https://www.other.com/')).toEqual(['unreachable-rule']);
    expect(
      r(
        '^http://(\\w+)\\.example\\.com/',
        'https://$1.example.com/',
        '<target host="www.example.com" />',
      ),
    ).toEqual([]);
    expect(
      r(
        '^http://(?:www\\.)?example\\.com/',
        'https://example.com/',
        '<target host="example.com" />',
      ),
    ).toEqual([]);
  });
  it('judges reachability by evaluation: character classes in the host part under *.x targets reach', () => {
    // Shapes of Yahoo.xml:2405, City_of_Seattle.xml:52, XiTi.com.xml:84, Target.xml:165, Kobo.xml:159.
    const reach: [string, string][] = [
      ['^http://[pv]e\\.video\\.yahoo\\.com/+', '<target host="*.yahoo.com" />'],
      [
        '^http://web[56]\\.seattle\\.gov/',
        '<target host="seattle.gov" />\n<target host="*.seattle.gov" />',
      ],
      ['^http://logc20[56]\\.xiti\\.com/', '<target host="*.xiti.com" />'],
      [
        '^http://([\\w-]+)-secure(-perf|-stg)?\\.targetimg(\\d)\\.com/',
        '<target host="*.targetimg1.com" />',
      ],
      [
        '^http://s(ecure(?:stage[2456]?|t)?|tage[36]?)\\.kobobooks\\.(\\w\\w)/',
        '<target host="*.kobobooks.de" />',
      ],
      ['^http://log[ci]\\d+\\.xiti\\.com/', '<target host="*.xiti.com" />'],
      ['^http://(?:www\\.)?example\\.com:209[56]/', '<target host="example.com" />'],
    ];
    for (const [from, targets] of reach)
      expect([
        from,
        r(from, 'https://example.com/', targets).filter((c) => c.startsWith('unreachable')),
      ]).toEqual([from, []]);
    // Still unreachable: the class never yields a covered host, or `*.com` covers one label only.
    expect(
      r(
        '^http://[pv]e\\.video\\.yahoo\\.com/',
        'https://yahoo.com/',
        '<target host="*.yahoo.net" />',
      ),
    ).toEqual(['unreachable-rule']);
    expect(
      r(
        '^http://img\\d\\.example\\.com/',
        'https://example.com/',
        '<target host="*.example.org" />\n<target host="img.example.com" />',
      ),
    ).toEqual(['unreachable-rule']);
    expect(
      r('^http://a\\.[\\w-]+\\.com/', 'https://example.com/', '<target host="*.com" />'),
    ).toEqual(['target-public-suffix', 'unreachable-rule']);
    expect(
      r(
        '^http://a\\.[\\w-]+\\.co\\.uk/',
        'https://example.com/',
        '<target host="*.co.uk" />',
      ).filter((c) => c.startsWith('unreachable')),
    ).toEqual([]);
  });
  it('warns when to changes the registrable domain, naming the new one', () => {
    const d = lintRulesetSource(
      wrap(
        '<target host="example.com" />\n<rule from="^http://example\\.com/" to="https://example.cdn.net/" />',
      ),
      'T.xml',
    ).diagnostics;
    expect(d.map((x) => x.code)).toEqual(['changes-domain']);
    expect(d[0]?.message).toContain('to cdn.net');
    expect(r('^http://example\\.com/', 'https://www.example.com/')).toEqual([]);
  });
  it('marks rules after a trivial rule as dead', () => {
    const xml = wrap(
      `<target host="example.com" />\n${trivial}\n<rule from="^http://example\\.com/" to="https://www.example.com/" />`,
    );
    expect(codes(xml)).toEqual(['dead-rule']);
  });
  it('asks for the "/" after a bare host in a test url', () => {
    const test = (url: string): string[] =>
      codes(wrap(`<target host="example.com" />\n<test url="${url}" />\n${trivial}`));
    expect(test('http://example.com')).toEqual(['test-url-slash']);
    expect(test('http://example.com?x=1')).toEqual(['test-url-slash']);
    expect(test('http://example.com/?x=1')).toEqual([]);
  });
  it('asks for .+ in secure cookies', () => {
    expect(
      codes(wrap(`<target host="example.com" />\n${trivial}\n<securecookie host=".*" name="." />`)),
    ).toEqual(['securecookie-wildcard', 'securecookie-wildcard']);
  });
});

describe('suppressions', () => {
  const body =
    '<target host="example.com" />\n<rule from="^http://example\\.com/" to="https://example.com/$1" />\n<test url="http://example.com" />';
  it('hide the listed codes of their file, wherever the comment is, with the reason kept', () => {
    const xml = `<!-- httpsify-ignore to-missing-group, test-url-slash: kept as EFF had it;\n\tsee issue 7 -->\n${wrap(body)}`;
    const r = lintRulesetSource(xml, 'T.xml');
    expect(r.diagnostics).toEqual([]);
    expect(r.suppressed.map((d) => d.code).sort()).toEqual(['test-url-slash', 'to-missing-group']);
    expect(r.suppressions).toEqual([
      {
        codes: ['to-missing-group', 'test-url-slash'],
        reason: 'kept as EFF had it; see issue 7',
        line: 1,
        column: 1,
      },
    ]);
    expect(codes(wrap(`<!-- httpsify-ignore test-url-slash: ok -->\n${body}`))).toEqual([
      'to-missing-group',
    ]);
  });
  it('without a reason or codes are an error at the comment, and hide nothing', () => {
    for (const comment of [
      'httpsify-ignore to-missing-group',
      'httpsify-ignore to-missing-group:  ',
      'httpsify-ignore: because',
    ]) {
      const d = lintRulesetSource(wrap(`\t<!-- ${comment} -->\n${body}`), 'T.xml').diagnostics;
      expect([comment, d.map((x) => [x.code, x.line, x.column])]).toEqual([
        comment,
        [
          ['suppression-reason', 2, 2],
          ['to-missing-group', 4, 1],
          ['test-url-slash', 5, 1],
        ],
      ]);
    }
    expect(suppressionsOf('<!-- just a comment about httpsify-ignore -->', 'T.xml')).toEqual({
      suppressions: [],
      diagnostics: [],
    });
  });
});

describe('branch count', () => {
  it.each([
    ['^http:', 1],
    ['^http://(www\\.)?example\\.com/', 2],
    ['^http://(?:www\\.)?example\\.com/', 2],
    ['^http://([\\w-]+\\.)?example\\.com/', 3],
    ['^http://(foo|bar|baz)\\.example\\.com/', 3],
    ['^http://example\\.com/(?!foo|bar)', 1],
    ['^http://example\\.com/\\?a=b', 1],
    ['^http://[\\w-]+\\.example\\.com/', 2],
    ['^http://a{3}\\.example\\.com/', 1],
    ['^http://example\\.com/(?=a|b)', 1],
    ['^http://(a|b(c)?)\\.x\\.com/', 3],
  ])('%s needs %i', (source, n) => {
    const ast = parsePattern(source);
    expect(ast).not.toBeNull();
    expect(branchCount(ast!)).toBe(n);
  });
});

describe('collection', () => {
  it('reports hosts in two rulesets, duplicate names and bad file names', () => {
    const parse = (file: string, xml: string): LintedFile => ({
      file,
      ruleset: lintRulesetSource(xml, file).ruleset!,
    });
    const a = parse(
      'rules/A.xml',
      wrap(`<target host="example.com" />\n${trivial}`, 'name="Same"'),
    );
    const b = parse(
      'rules/B c.xml',
      wrap(`<target host="example.com" />\n${trivial}`, 'name="Same"'),
    );
    const found = lintCollection([a, b]).map((d) => `${d.file} ${d.code}`);
    expect(found.sort()).toEqual([
      'rules/A.xml duplicate-name',
      'rules/A.xml duplicate-target',
      'rules/B c.xml duplicate-name',
      'rules/B c.xml duplicate-target',
      'rules/B c.xml file-name',
    ]);
  });
});

describe('known findings in the 2018 corpus', () => {
  const dir = corpusRulesDir();
  const lint = (name: string) =>
    lintRulesetSource(readFileSync(join(dir, name), 'utf8'), name).diagnostics;
  it('Motorola.xml: the trivial rule is not last, so later rules are dead', () => {
    expect(lint('Motorola.xml').filter((d) => d.code === 'dead-rule').length).toBeGreaterThan(0);
  });
  it('University_of_Mainz.xml: $u is literal', () => {
    expect(lint('University_of_Mainz.xml').map((d) => d.code)).toContain('to-literal-dollar');
  });
  it('Opera.com.xml: a group that reaches the #fragment, copied twice', () => {
    expect(lint('Opera.com.xml').find((d) => d.code === 'to-copies-fragment')?.message).toContain(
      'copies $3',
    );
  });
  it('DEMO.xml: $1 without a group', () => {
    expect(lint('DEMO.xml').map((d) => d.code)).toContain('to-missing-group');
  });
  it('SSSup.it.xml: the ^http;// typo', () => {
    expect(lint('SSSup.it.xml').find((d) => d.code === 'from-prefix')?.message).toContain(
      '^http;//',
    );
  });
  it('General-Electric.xml: the one middle wildcard', () => {
    expect(
      lint('General-Electric.xml').find((d) => d.code === 'target-middle-wildcard')?.message,
    ).toContain('files.*.geblogs.com');
  });
  it('Akamai.xml: an unescaped host dot in an exclusion that the old validator missed', () => {
    expect(
      lint('Akamai.xml').some((d) => d.code === 'unescaped-dot' && d.message.includes('zynga')),
    ).toBe(true);
  });
});
