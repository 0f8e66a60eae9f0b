import { describe, expect, it } from 'vitest';
import { compileBundle, createEngine, loadBundle, type Ruleset } from '../src/index.js';
import { ReferenceModel } from './support/reference-model.js';

/**
 * A host of dots only (`http://./`, `http://../`): the reference strips trailing dots down to
 * one, so the host is `.`, two empty labels, and the targets `.`, `*.` and `.*` match it, in
 * that order (exact, then each label replaced by `*`). No library has such targets; peers'
 * test suites do.
 */

function ruleset(name: string, host: string, to: string): Ruleset {
  return {
    name,
    targets: [{ host }],
    rules: [{ from: '^http://\\./', to }],
    exclusions: [],
    secureCookies: [],
    tests: [],
  };
}

const URLS = [
  'http://./',
  'http://../x?q=1',
  'http://.../a/b#f',
  'http://.%2e/',
  'http://.:8080/',
  'http://user:pw@../p',
  'https://./',
  'http://a./',
  'http://a../',
  'http://..a/',
  'http://a.b./',
];

describe('a host of dots only', () => {
  const exact = ruleset('Dot', '.', 'https://exact./');
  const left = ruleset('Star dot', '*.', 'https://left./');
  const right = ruleset('Dot star', '.*', 'https://right./');

  it('is `.`, which the targets `.`, `*.` and `.*` match in the reference order', () => {
    for (const set of [[exact, left, right], [right, left, exact], [left, right], [right]]) {
      const model = new ReferenceModel(set);
      for (const engine of [createEngine(set), loadBundle(compileBundle(set))]) {
        for (const url of URLS)
          expect(engine.rewrite(url), `${set.map((r) => r.name).join(', ')}: ${url}`).toBe(
            model.rewrite(url, () => true),
          );
      }
    }
    const all = loadBundle(compileBundle([right, left, exact]));
    expect(all.rewrite('http://../x?q=1')).toBe('https://exact./x?q=1');
    expect(all.rewrite('http://.:8080/')).toBeNull();
    expect(all.rewrite('http://user:pw@.../p')).toBe('https://user:pw@exact./p');
    expect(all.candidateRulesets('.').map((id) => all.rulesetName(id))).toEqual([
      'Dot',
      'Star dot',
      'Dot star',
    ]);
    expect(loadBundle(compileBundle([right, left])).rewrite('http://./')).toBe('https://left./');
    expect(loadBundle(compileBundle([right])).rewrite('http://../')).toBe('https://right./');
    expect(all.explain('http://.../').host).toBe('.');
  });

  it('is not a host with a name: `a.` and `a..` are `a`, `..a` matches nothing', () => {
    const named: Ruleset = {
      name: 'A',
      targets: [{ host: 'a' }],
      rules: [{ from: '^http:', to: 'https:' }],
      exclusions: [],
      secureCookies: [],
      tests: [],
    };
    const engine = loadBundle(compileBundle([exact, left, right, named]));
    expect(engine.rewrite('http://a../')).toBe('https://a/');
    expect(engine.rewrite('http://..a/')).toBeNull();
    expect(engine.rewrite('http://a.b./')).toBeNull();
  });
});
