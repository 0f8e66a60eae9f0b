import { describe, expect, it } from 'vitest';
import { createEngine, type Ruleset } from '../src/index.js';

/** Matching semantics on tiny hand-written rulesets: milliseconds, where the corpus run takes 85 s. */
function rs(
  name: string,
  targets: string[],
  rules: [string, string][],
  exclusions: string[] = [],
): Ruleset {
  return {
    name,
    targets: targets.map((host) => ({ host })),
    rules: rules.map(([from, to]) => ({ from, to })),
    exclusions: exclusions.map((pattern) => ({ pattern })),
    secureCookies: [],
    tests: [],
  };
}

describe('matching on tiny rulesets', () => {
  it('an exclusion vetoes its own ruleset only; a later candidate may still rewrite', () => {
    const engine = createEngine([
      rs(
        'Exact',
        ['a.example.com'],
        [['^http://a\\.example\\.com/', 'https://exact.example.com/']],
        ['^http://a\\.example\\.com/skip'],
      ),
      rs('Wild', ['*.example.com'], [['^http://a\\.example\\.com/', 'https://wild.example.com/']]),
    ]);
    expect(engine.rewrite('http://a.example.com/x')).toBe('https://exact.example.com/x');
    expect(engine.rewriteWithRuleset('http://a.example.com/skip/1')).toMatchObject({
      rewritten: 'https://wild.example.com/skip/1',
      ruleset: 'Wild',
    });
  });

  it('many exclusions (the sorted index) veto like a few', () => {
    const exclusions = Array.from({ length: 12 }, (_, i) => `^http://m\\.test/p${i}/`);
    const engine = createEngine([
      rs('Many', ['m.test'], [['^http:', 'https:']], [...exclusions, '^http://m\\.test/(?:a|b)+z']),
    ]);
    expect(engine.rewrite('http://m.test/p3/x')).toBeNull();
    expect(engine.rewrite('http://m.test/p12/x')).toBe('https://m.test/p12/x');
    expect(engine.rewrite('http://m.test/ababz')).toBeNull();
    expect(engine.rewrite('http://m.test/abab')).toBe('https://m.test/abab');
  });

  it('candidates are tried exact host, then each label as * left to right, then *.suffix', () => {
    const to = (name: string): [string, string] => ['^http://[^/]+/', `https://${name}.test/`];
    const rulesets = [
      rs('Exact', ['x.y.example.com'], [to('exact')]),
      rs('Label1', ['*.y.example.com'], [to('label1')]),
      rs('Label2', ['x.*.example.com'], [to('label2')]),
      rs('Right', ['x.y.example.*'], [to('right')]),
      rs('Suffix', ['*.example.com'], [to('suffix')]),
    ];
    const engine = createEngine(rulesets);
    const order: string[] = [];
    for (let i = 0; i < rulesets.length; i++) {
      const outcome = engine.rewriteWithRuleset('http://x.y.example.com/');
      order.push(outcome.ruleset ?? 'none');
      if (outcome.ruleset !== null) engine.setActive(outcome.ruleset, false);
    }
    expect(order).toEqual(['Exact', 'Label1', 'Label2', 'Right', 'Suffix']);
    expect(engine.rewrite('http://x.y.example.com/')).toBeNull();
    expect(engine.candidateRulesets('x.y.example.com').map((id) => engine.rulesetName(id))).toEqual(
      ['Exact', 'Label1', 'Label2', 'Right', 'Suffix'],
    );
    // `*.example.com` does not cover example.com itself.
    expect(engine.candidateRulesets('example.com')).toEqual([]);
  });

  it('a trivial-only ruleset changes the scheme and nothing else', () => {
    const engine = createEngine([rs('Trivial', ['t.test', '*.t.test'], [['^http:', 'https:']])]);
    expect(engine.rewrite('http://t.test:8080/a/b?c=d#e')).toBe('https://t.test:8080/a/b?c=d#e');
    expect(engine.rewrite('http://u:p@deep.sub.t.test/')).toBe('https://u:p@deep.sub.t.test/');
    expect(engine.rewrite('https://t.test/')).toBeNull();
    expect(engine.rewrite('http://other.test/')).toBeNull();
  });

  it('the first rule that changes the URL wins; one that matches without changing it does not', () => {
    const engine = createEngine([
      rs(
        'Rules',
        ['r.test'],
        [
          ['^http://r\\.test/same', 'http://r.test/same'],
          ['^http://r\\.test/(a)', 'https://first.test/$1'],
          ['^http://r\\.test/', 'https://second.test/'],
        ],
      ),
    ]);
    expect(engine.rewrite('http://r.test/abc')).toBe('https://first.test/abc');
    expect(engine.rewrite('http://r.test/xyz')).toBe('https://second.test/xyz');
    expect(engine.rewrite('http://r.test/same')).toBe('https://second.test/same');
  });
});
