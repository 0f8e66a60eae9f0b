import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createEngine, type Ruleset } from '../src/index.js';
import { parseRulesetXml } from '../src/parse/index.js';
import { collectionFacts, targetKeysFor, fixRuleset } from '../src/authoring/index.js';
import { corpusXmlFiles, readOracle } from './support/corpus.js';
import { CORPUS_RULESETS, workTimeout } from './support/work-timeout.js';

const parse = (xml: string): Ruleset => {
  const r = parseRulesetXml(xml, 'T.xml').ruleset;
  if (r === null) throw new Error('does not parse');
  return r;
};
const active = (r: Ruleset): Ruleset => ({ ...r, defaultOff: undefined, platform: undefined });
const ownUrls = (r: Ruleset): string[] => [
  ...r.tests.map((t) => t.url),
  ...r.targets.filter((t) => !t.host.includes('*')).map((t) => `http://${t.host}/`),
];

describe('fixRuleset', () => {
  it('trivialises rules that only upgrade their own targets, touching only the rule lines', () => {
    const xml = [
      '<ruleset name="T">',
      '\t<target host="example.com" />',
      '\t<target host="www.example.com" />',
      '\t<!-- keep me -->',
      '\t<rule from="^http://(www\\.)?example\\.com/" to="https://$1example.com/" />',
      '\t<rule from="^http://cdn\\.example\\.com/" to="https://cdn.example.com/" />',
      '</ruleset>',
      '',
    ].join('\n');
    const r = fixRuleset(xml, 'T.xml');
    expect(r.fixes.map((f) => [f.code, f.line])).toEqual([['trivialize', 5]]);
    expect(r.fixed).toBe(
      xml
        .replace(
          '<rule from="^http://(www\\.)?example\\.com/" to="https://$1example.com/" />',
          '<rule from="^http:" to="https:" />',
        )
        .replace(
          '\t<rule from="^http://cdn\\.example\\.com/" to="https://cdn.example.com/" />\n',
          '',
        ),
    );
  });
  it('does not trivialise when a rule moves hosts, has a path, or a target has no rule', () => {
    const base = (
      rules: string,
      targets = '<target host="example.com" /><target host="www.example.com" />',
    ): string => `<ruleset name="T">${targets}${rules}</ruleset>`;
    expect(
      fixRuleset(
        base('<rule from="^http://(?:www\\.)?example\\.com/" to="https://www.example.com/" />'),
        'T.xml',
      ).fixes,
    ).toEqual([]);
    expect(
      fixRuleset(
        base('<rule from="^http://(www\\.)?example\\.com/a" to="https://$1example.com/a" />'),
        'T.xml',
      ).fixes,
    ).toEqual([]);
    expect(
      fixRuleset(base('<rule from="^http://example\\.com/" to="https://example.com/" />'), 'T.xml')
        .fixes,
    ).toEqual([]);
    expect(
      fixRuleset(
        base('<rule from="^http://(\\w+\\.)?example\\.com/" to="https://$1example.com/" />'),
        'T.xml',
      ).fixes,
    ).toEqual([]);
  });
  it('escapes a lone host dot but not .+ or path dots, and normalises secure cookies', () => {
    const xml = `<ruleset name="T">
	<target host="*.example.com" />
	<exclusion pattern="^http://foo.example\\.com/a.b" />
	<rule from="^http://(.+)\\.example\\.com/" to="https://$1.example.com/" />
	<securecookie host=".*" name="." />
	<test url="http://foo.example.com/a.b" /><test url="http://a.example.com/" /><test url="http://b.example.com/" /><test url="http://c.example.com/" />
</ruleset>`;
    const r = fixRuleset(xml, 'T.xml');
    expect(r.fixes.map((f) => f.code)).toEqual(['escape-dot', 'securecookie-any']);
    expect(r.fixed).toBe(
      xml
        .replace('^http://foo.example', '^http://foo\\.example')
        .replace('host=".*" name="."', 'host=".+" name=".+"'),
    );
  });
  it('drops a fix that would change how a test URL is rewritten', () => {
    // The unescaped dot lets the exclusion hold for fooXexample.com, which a test relies on.
    const xml = `<ruleset name="T"><target host="*.com" /><exclusion pattern="^http://foo.example\\.com/" /><rule from="^http:" to="https:" /><test url="http://fooxexample.com/" /></ruleset>`;
    const r = fixRuleset(xml, 'T.xml');
    expect(r.fixes).toEqual([]);
    expect(r.rejected.map((f) => f.code)).toEqual(['escape-dot']);
    expect(r.fixed).toBe(xml);
  });
});

describe('fixes on the 2018 corpus', () => {
  it(
    "keep every fixed ruleset's results on its own test URLs and on the oracle URLs of its hosts",
    async () => {
      // Oracle URLs by every target key that makes a ruleset a candidate for their host.
      const byKey = new Map<string, string[]>();
      for (const { url } of await readOracle()) {
        for (const key of targetKeysFor(new URL(url).hostname)) {
          const list = byKey.get(key) ?? [];
          list.push(url);
          byKey.set(key, list);
        }
      }
      const counts: Record<string, number> = {};
      let checkedUrls = 0;
      for (const file of corpusXmlFiles()) {
        const xml = readFileSync(file, 'utf8');
        const result = fixRuleset(xml, file);
        if (result.fixes.length === 0) continue;
        for (const f of result.fixes) counts[f.code] = (counts[f.code] ?? 0) + 1;
        const before = active(parse(xml));
        const after = active(parse(result.fixed));
        const urls = [
          ...new Set([
            ...ownUrls(before),
            ...before.targets.flatMap((t) => byKey.get(t.host) ?? []),
          ]),
        ];
        const a = createEngine([before]);
        const b = createEngine([after]);
        for (const url of urls)
          expect([file, url, b.rewrite(url)]).toEqual([file, url, a.rewrite(url)]);
        checkedUrls += urls.length;
      }
      expect(counts['trivialize']).toBeGreaterThanOrEqual(20);
      expect(counts['escape-dot']).toBeGreaterThanOrEqual(50);
      expect(checkedUrls).toBeGreaterThan(1000);
    },
    workTimeout(CORPUS_RULESETS, 25),
  );
  it(
    'collectionFacts reads the same name and targets as the parser in every file',
    () => {
      for (const file of corpusXmlFiles()) {
        const xml = readFileSync(file, 'utf8');
        const parsed = parseRulesetXml(xml, file).ruleset as Ruleset;
        expect([file, collectionFacts(xml)]).toEqual([
          file,
          { name: parsed.name, targets: parsed.targets.map((t) => ({ host: t.host })) },
        ]);
      }
    },
    workTimeout(CORPUS_RULESETS, 10),
  );
});
