import { describe, expect, it } from 'vitest';
import { compileBundle, createEngine, loadBundle, type Ruleset } from '../src/index.js';
import { compileRulesetRegex, judgeRegex, checkRulesetRegexes } from '../src/parse/index.js';
import { lintRulesetSource } from '../src/authoring/index.js';
import { compileScope, parseChannelDefinition, ScopedEngine } from '../src/channels/index.js';

/**
 * Hostile patterns through every door the engine has. Without the regex door each of these
 * runs for seconds to years on the pumped inputs below; the per-test timeout is what fails.
 * Every test keeps a benign ruleset beside the hostile one and checks it still rewrites.
 */

/** Shapes that backtrack super-linearly in V8, by class. Each is written after `^http://h\.test/`. */
const HOSTILE: Record<string, string> = {
  'nested quantifier': '(a+)+$',
  'nested quantifier, class': '([\\w.-]+)*x$',
  'overlapping alternation': '(a|aa)+$',
  'overlapping alternation, classes': '(\\w|\\d)+$',
  'alternation of equals': '(a|a)+!',
  'polynomial run of classes': '[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*X',
  'polynomial dot runs': '.*.*.*=.*$',
  'repeated group of runs': '(x+x+)+y',
  'digits then dot': '(\\d+)*\\.',
  'counted nested': '(a{1,1000}){1,1000}$',
  'counted overlap': '(.*a){20}$',
  backreference: '((a)\\2?)+!$',
  'backreference in loop': '(a*)\\1+b',
  'lookahead holding a nested quantifier': '(?=(a+)+$)a',
  'negative lookahead holding a quantifier in a loop': '(?:(?!(a|aa)+!).)*$',
  lookbehind: '(?<=(a+)+)b',
  'optional quantified group': '(a?){30}a{30}',
  'empty loop body': '(a*)*$',
  'nested plus, one automaton state': '(?:(?:a+)+)+$',
  'many ways to match nothing': `${'(?:|)'.repeat(30)}!`,
  'optional of optional': `${'(?:a?)?'.repeat(30)}!`,
  'optional lookaheads': `${'(?=a)?'.repeat(30)}b`,
  'finite but exponential ambiguity': `${'(a|a)'.repeat(30)}!`,
  'quadratic lookahead inside a quadratic lookahead': 'a*(?!.+(?!.+x)y)',
  'overlapping classes in sequence, counted': '[\\w.]{0,200}[a-z.]{0,200}[a.]{0,200}!',
  'lookahead after a run, holding two runs (cubic)': 'a+(?!.+a.+b)',
  'run inside a lookahead inside a run (cubic)': '(?:a(?=a*a*b))+',
  'lookaheads chained on one text (cubic)': 'a*(?=a*(?=a*b))',
};

/** Pumped inputs: long runs of what the shapes above consume, then a character that fails them. */
function pumped(prefix: string): string[] {
  return ['a', 'x', '0', 'a.', 'ab'].map((unit) => `${prefix}${unit.repeat(3000)}!`);
}

const BENIGN: Ruleset = {
  name: 'Benign',
  targets: [{ host: 'benign.test' }],
  rules: [{ from: '^http://benign\\.test/', to: 'https://benign.test/' }],
  exclusions: [],
  secureCookies: [],
  tests: [],
};

function hostile(
  name: string,
  body: string,
  place: 'rule' | 'exclusion' | 'cookie-host' | 'cookie-name',
): Ruleset {
  const pattern = place === 'rule' || place === 'exclusion' ? `^http://h\\.test/${body}` : body;
  return {
    name,
    targets: [{ host: 'h.test' }],
    rules:
      place === 'rule'
        ? [{ from: pattern, to: 'https://h.test/' }]
        : [{ from: '^http:', to: 'https:' }],
    exclusions: place === 'exclusion' ? [{ pattern }] : [],
    secureCookies: place.startsWith('cookie')
      ? [
          {
            host: place === 'cookie-host' ? pattern : '.+',
            name: place === 'cookie-name' ? pattern : '.+',
          },
        ]
      : [],
    tests: [],
  };
}

const TIMEOUT = 20_000;

describe('the regex door decides by analysis', () => {
  it.each(Object.entries(HOSTILE))('%s: never proven for the backtracking matcher', (_, body) => {
    expect(judgeRegex(`^http://h\\.test/${body}`).kind).not.toBe('proven');
    expect(judgeRegex(body).kind).not.toBe('proven');
  });

  it('proves a lookbehind over a short fixed text, and refuses one that reads back without bound', () => {
    expect(judgeRegex('^http://lb\\.example\\.test(?<!x):(\\d+)/old/').kind).toBe('proven');
    expect(judgeRegex('^http://h\\.test/(?<=[ab]{2}|cd)x').kind).toBe('proven');
    const unbounded = judgeRegex('^http://h\\.test/(?<=a+)b');
    expect(unbounded.kind).toBe('refused');
    expect(unbounded.kind === 'refused' && unbounded.reason).toMatch(/lookbehind .* unbounded/);
  });

  it('refuses what it can neither prove nor run in linear time, and says why', () => {
    const backref = judgeRegex('^http://h\\.test/((a)\\2?)+!$');
    expect(backref).toMatchObject({ kind: 'refused' });
    expect(backref.kind === 'refused' && backref.reason).toMatch(/backreference/);
    expect(judgeRegex('^http://h\\.test/(a{1,1000}){1,1000}$')).toMatchObject({ kind: 'refused' });
    expect(judgeRegex('^http://h\\.test/(?=(a+)+$)a')).toMatchObject({ kind: 'refused' });
    // No lookaround, no backreference: linear time instead.
    expect(judgeRegex('^http://(www\\.)?example\\.org/(a|aa)+$')).toMatchObject({ kind: 'linear' });
  });

  it('proves the everyday corpus shapes', () => {
    for (const p of [
      '^http://(?:www\\.)?example\\.com/(.*)$',
      '^http://([\\w-]+\\.)*example\\.com/',
      '^http://(\\w+\\.)?123-reg\\.co\\.uk/',
      '^http://example\\.com/(?!css/|favicon\\.ico$)',
      '^http://www\\.aftenposten\\.no/+(?!.+\\.(?:css|gif|jpg|png)(?:$|\\?)|favicon\\.ico)',
      '\\.example\\.com$',
      '^http://a\\.com/\\d{7}/x',
    ]) {
      expect(judgeRegex(p).kind, p).toBe('proven');
    }
  });

  it('accepts at most quadratic work, and says when it is more', () => {
    // Quadratic: one run, then a lookahead reading to the end from every index of it; or two
    // runs on the same text (an unanchored pattern has a run in front: its start index).
    for (const p of [
      '^http://a\\.test/+(?!.+\\.css)',
      '.*\\.example\\.com$',
      '^http://(?:www\\.)?nhs\\.uk/(?!/*(?:css/|(?:[\\w/-]+/)?PublishingImages/))',
      '^http://(?:www\\.)?northamptonshire\\.gov\\.uk/(?!/*(?:.*/)?(?:_layouts|FooterImages)/)',
    ]) {
      expect(judgeRegex(p), p).toMatchObject({ kind: 'proven', quadratic: true });
    }
    // Linear: each run reads what the one before cannot, so a lookahead gets past its first
    // character at one index only.
    for (const p of [
      '^http://(?:www)\\.seagate\\.com/+(?!files/|ww/+(?!universal/+(?!css/images/)))',
      '^http://a\\.test/+(?!\\w+/wp-content/)',
      '^http://a\\.test/(?!.*\\.css)',
    ]) {
      expect(judgeRegex(p), p).toMatchObject({ kind: 'proven', quadratic: false });
    }
    const cubic = judgeRegex('http://raceforlife\\.test/+(?!\\w+/assets/|.+/groups/.+/documents/)');
    expect(cubic).toMatchObject({ kind: 'refused' });
    expect(cubic.kind === 'refused' && cubic.reason).toMatch(/cube of the input length/);
  });

  it('runs a quadratic pattern natively on URL-sized input and exactly as RegExp beyond', () => {
    const cookie = compileRulesetRegex('.*\\.example\\.com$');
    const rule = compileRulesetRegex('^http://e\\.test/+([^?]*)(?:\\?.*)?', {
      use: 'replace',
      to: 'https://e.test/$1',
    });
    const exclusion = compileRulesetRegex(
      '^http://(?:www\\.)?nhs\\.uk/(?!/*(?:css/|(?:[\\w/-]+/)?PublishingImages/))',
    );
    if (!cookie.ok || !rule.ok || !exclusion.ok) throw new Error('not compiled');
    for (const n of [10, 4000, 5000]) {
      const host = `${'a.'.repeat(n)}example.com`;
      expect(cookie.regex.test(host), host.slice(-20)).toBe(true);
      expect(cookie.regex.test(`${host}.x`)).toBe(false);
      const url = `http://e.test/${'/'.repeat(n)}a?b=/c`;
      expect(rule.regex.replace(url, 'https://e.test/$1')).toBe(
        url.replace(/^http:\/\/e\.test\/+([^?]*)(?:\?.*)?/, 'https://e.test/$1'),
      );
    }
    // The worst case for the lookahead: a run of slashes it reads to the end from every index.
    const worst = `http://www.nhs.uk/${'/'.repeat(4000)}!`;
    expect(exclusion.regex.test(worst)).toBe(true);
    expect(exclusion.regex.test('http://www.nhs.uk//a/b/PublishingImages/x.png')).toBe(false);
    // Beyond the limit, a lookahead has no linear-time form: the exclusion does not match.
    expect(exclusion.regex.test(`http://www.nhs.uk/${'/'.repeat(5000)}!`)).toBe(false);
  });

  it('a very long pattern is judged quickly and not proven by exhaustion', () => {
    const long = `^http://h\\.test/(?:${Array.from({ length: 3000 }, (_, i) => `a${i}`).join('|')})+$`;
    expect(judgeRegex(long).kind).not.toBe('proven');
    expect(judgeRegex(`^http://h\\.test/${'a?'.repeat(5000)}${'a'.repeat(5000)}$`).kind).not.toBe(
      'proven',
    );
  });
});

describe('hostile patterns through every engine door', () => {
  const doors = ['rule', 'exclusion', 'cookie-host', 'cookie-name'] as const;
  for (const door of doors) {
    it(
      `${door}: every hostile shape finishes, and the benign ruleset still rewrites`,
      () => {
        for (const [name, body] of Object.entries(HOSTILE)) {
          const rulesets = [hostile(name, body, door), BENIGN];
          // The user-rule door (createEngine) and the bundle door (loadBundle: --rules, channels).
          for (const engine of [createEngine(rulesets), loadBundle(compileBundle(rulesets))]) {
            for (const input of pumped('http://h.test/')) {
              engine.rewrite(input);
              engine.shouldSecureCookie({ domain: `h.test`, name: input.slice(14) });
              engine.shouldSecureCookie({ domain: input.slice(14), name: 'a' });
            }
            expect(engine.rewrite('http://benign.test/x'), name).toBe('https://benign.test/x');
            for (const r of engine.takeRegexRefusals()) {
              expect(r.ruleset).toBe(name);
              expect(r.reason).toMatch(/linear time/);
            }
          }
        }
      },
      TIMEOUT * 4,
    );
  }

  it('a refused pattern disables its ruleset (reported once), a linear one keeps working exactly', () => {
    const engine = createEngine([
      hostile('Backref', '((a)\\2?)+!$', 'rule'),
      hostile('Linear', '(a|aa)+$', 'rule'),
      BENIGN,
    ]);
    const linear = createEngine([hostile('Linear', '(a|aa)+$', 'rule')]);
    expect(engine.rewrite('http://h.test/aa!')).toBeNull();
    const refusals = engine.takeRegexRefusals();
    expect(refusals).toEqual([
      expect.objectContaining({ ruleset: 'Backref', pattern: '^http://h\\.test/((a)\\2?)+!$' }),
    ]);
    expect(engine.takeRegexRefusals()).toEqual([]);
    expect(linear.rewrite('http://h.test/aaa')).toBe('https://h.test/');
    expect(linear.rewrite(`http://h.test/${'a'.repeat(5000)}!`)).toBeNull();
    expect(
      engine.explain('http://h.test/aa!').candidates.find((c) => c.ruleset === 'Backref')?.outcome,
    ).toBe('refused');
  });

  it('channel scope: a hostile scope never runs, and a definition with it is rejected', () => {
    const bad = '^http://h\\.test/((a)\\2?)+!$';
    const scope = compileScope(bad);
    expect(scope?.test(`http://h.test/${'a'.repeat(3000)}!`)).toBe(false);
    const linear = compileScope('^http://h\\.test/(a|aa)+$');
    for (const input of pumped('http://h.test/')) expect(linear?.test(input)).toBe(false);
    expect(linear?.test('http://h.test/aaaa')).toBe(true);
    const scoped = new ScopedEngine([
      { channel: 'c', scope, engine: createEngine([BENIGN]) },
      { channel: null, scope: null, engine: createEngine([BENIGN]) },
    ]);
    expect(scoped.rewriteWithRuleset('http://benign.test/')).toMatchObject({
      rewritten: 'https://benign.test/',
      channel: null,
    });
    const definition = {
      format: 2,
      name: 'c',
      urlPrefix: 'https://c.test/',
      scope: bad,
      destinations: [],
      minTimestamp: 0,
      maxAgeDays: 14,
      minKeyVersion: 1,
      replacesDefaults: false,
      rootKey: { kty: 'RSA', n: 'x', e: 'AQAB' },
    };
    expect(() => parseChannelDefinition(definition)).toThrow(/scope.*refused/);
  });

  it('check (lint, the extension editor) reports unsafe-regex at the pattern, quickly', () => {
    const xml =
      '<ruleset name="H">\n\t<target host="h.test" />\n\t<exclusion pattern="^http://h\\.test/((a)\\2?)+!$" />\n\t<rule from="^http://h\\.test/(?=(a+)+$)a" to="https://h.test/" />\n</ruleset>\n';
    const { diagnostics } = lintRulesetSource(xml, 'H.xml');
    const unsafe = diagnostics.filter((d) => d.code === 'unsafe-regex');
    expect(unsafe.map((d) => [d.severity, d.line, d.column])).toEqual([
      ['error', 3, 2],
      ['error', 4, 2],
    ]);
    expect(unsafe[0]?.message).toMatch(/ruleset "H" is refused: .*backreference/);
  });

  it('the up-front check (compile, publish) leaves out exactly the rulesets the engine would refuse', () => {
    const rulesets = Object.entries(HOSTILE).map(([name, body]) =>
      hostile(name, body, 'exclusion'),
    );
    const checked = checkRulesetRegexes([...rulesets, BENIGN]);
    const refusedByEngine = new Set<string>();
    for (const rs of rulesets) {
      // One engine each: the first ruleset that rewrites would keep the engine from trying the rest.
      const engine = createEngine([rs]);
      for (const input of pumped('http://h.test/')) engine.rewrite(input);
      for (const r of engine.takeRegexRefusals()) refusedByEngine.add(r.ruleset);
    }
    const leftOut = rulesets.filter((rs) => !checked.rulesets.includes(rs)).map((rs) => rs.name);
    expect(new Set(leftOut)).toEqual(refusedByEngine);
    expect(leftOut.length).toBeGreaterThan(3);
    expect(checked.rulesets).toContain(BENIGN);
  });
});
