import { describe, expect, it } from 'vitest';
import { compileBundle, loadBundle, type Ruleset } from '../src/index.js';
import { Form, holdsRequired, prepareRule, prepareTest } from '../src/regex/prepared-pattern.js';
import { loadRulesets } from '../src/node/index.js';
import { corpusRulesDir } from './support/corpus.js';

/**
 * The regex door judges a pattern the first time a URL could match it: a URL without the
 * pattern's literal prefix, or without a literal text every match contains, never reaches it.
 * So a foreign bundle's first URL pays only for the patterns that URL needs, and a refused
 * pattern only counts for the URLs it could decide.
 */

describe('texts every match contains', () => {
  it('are read from the tree: plain runs, groups of one alternative, a character under +', () => {
    expect(
      prepareRule('^http://(docs\\d)\\.google\\.com/', 'https://$1.google.com/').required,
    ).toEqual(['http://docs', '.google.com/']);
    expect(
      prepareRule('^http://([\\w-]+)\\.clients\\.google\\.com/', 'https://$1.clients.google.com/')
        .required,
    ).toEqual(['.clients.google.com/']);
    // Cookie hosts are unanchored: the whole run is required, wherever it is.
    expect(prepareTest('.+\\.example\\.com$').required).toEqual(['.example.com']);
    // `ab+c`: one `b` at least, then the run ends.
    expect(prepareTest('^x(\\w)yab+cde').required).toEqual(['yab', 'cde']);
  });

  it('leave out what a match may skip: optional, repeated or alternative parts, lookarounds', () => {
    const none = [
      '^http://a(bcd)?e(\\w)',
      '^http://a(?:bcd|bce)(\\w)',
      '^http://a(?:bcd)*(\\w)',
      '^http://a(?:bcd){0,2}(\\w)',
      '^http://a(?=bcd)(\\w)',
      '^http://a(?!bcd)(\\w)',
      '^http://(\\w)(?<=bcd)',
      '^http://(\\w)x?y?z?',
      'abc|def(\\w)',
      '^http://a\\.com(\\w)',
    ];
    for (const source of none) {
      const p = prepareTest(source);
      expect(p.form, source).toBe(Form.Regex);
      expect(p.required, source).toBeNull();
    }
  });

  it('are in every input a corpus pattern matches', () => {
    const { rulesets } = loadRulesets([corpusRulesDir()]);
    let withTexts = 0;
    let matched = 0;
    const wrong: string[] = [];
    for (const rs of rulesets) {
      const inputs = [
        ...rs.tests.map((t) => t.url),
        ...rs.targets.filter((t) => !t.host.includes('*')).map((t) => `http://${t.host}/`),
      ];
      const patterns = [
        ...rs.rules.map((r) => prepareRule(r.from, r.to)),
        ...rs.exclusions.map((e) => prepareTest(e.pattern)),
        ...rs.secureCookies.flatMap((c) => [prepareTest(c.host), prepareTest(c.name)]),
      ];
      for (const p of patterns) {
        if (p.form !== Form.Regex || p.required === null) continue;
        withTexts++;
        const re = new RegExp(p.source);
        for (const input of [...inputs, ...inputs.map((u) => u.replace(/^http:/, 'https:'))]) {
          if (!re.test(input)) continue;
          matched++;
          if (!holdsRequired(p, input) && wrong.length < 20)
            wrong.push(
              `${p.source} matches ${input} but lacks one of ${JSON.stringify(p.required)}`,
            );
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(withTexts).toBeGreaterThan(1_000);
    expect(matched).toBeGreaterThan(withTexts);
  });
});

describe('a refused pattern counts only for the URLs it could decide', () => {
  // `((a)\3?)+!$` has a backreference in a loop: the door refuses it.
  const refusedFrom = '^http://h\\.test/(\\w+)/late/((a)\\3?)+!$';
  const ruleset: Ruleset = {
    name: 'Late refusal',
    targets: [{ host: 'h.test' }],
    rules: [
      { from: '^http://h\\.test/(early)/', to: 'https://h.test/$1/' },
      { from: refusedFrom, to: 'https://h.test/$1/' },
      { from: '^http:', to: 'https:' },
    ],
    exclusions: [],
    secureCookies: [],
    tests: [],
  };

  it('as the reference: an earlier rule that rewrites wins, a URL that cannot match goes on', () => {
    const engine = loadBundle(compileBundle([ruleset]));
    // The reference stops at the first rule that changes the URL: the refused rule is not read.
    expect(engine.rewrite('http://h.test/early/x')).toBe('https://h.test/early/x');
    // Its prefix holds but its `/late/` does not: it cannot match, so the next rule decides.
    expect(engine.rewrite('http://h.test/x/other')).toBe('https://h.test/x/other');
    expect(engine.takeRegexRefusals()).toEqual([]);
    // A URL the refused rule could decide: refused, reported once, the ruleset stops (as before).
    expect(engine.rewrite('http://h.test/x/late/aa!')).toBeNull();
    expect(engine.takeRegexRefusals()).toEqual([
      expect.objectContaining({ ruleset: 'Late refusal', pattern: refusedFrom }),
    ]);
    expect(engine.rewrite('http://h.test/early/x')).toBeNull();
    expect(engine.explain('http://h.test/x/other').candidates[0]?.outcome).toBe('refused');
  });

  it('explain judges the same patterns as rewrite', () => {
    const engine = loadBundle(compileBundle([ruleset]));
    expect(engine.explain('http://h.test/x/other').rewritten).toBe('https://h.test/x/other');
    expect(engine.takeRegexRefusals()).toEqual([]);
  });

  it('an exclusion the URL cannot match neither vetoes nor refuses', () => {
    const engine = loadBundle(
      compileBundle([
        {
          ...ruleset,
          name: 'Excl',
          rules: [{ from: '^http:', to: 'https:' }],
          exclusions: [{ pattern: refusedFrom }],
        },
      ]),
    );
    expect(engine.rewrite('http://h.test/x/other')).toBe('https://h.test/x/other');
    expect(engine.excludedBy('http://h.test/x/other')).toBeNull();
    expect(engine.takeRegexRefusals()).toEqual([]);
    expect(engine.rewrite('http://h.test/x/late/a!')).toBeNull();
    expect(engine.takeRegexRefusals()).toHaveLength(1);
  });
});
