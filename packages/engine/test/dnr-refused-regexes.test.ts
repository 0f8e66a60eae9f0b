import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { isDefaultActive, type Ruleset } from '../src/index.js';
import { parseRulesetXml } from '../src/parse/index.js';
import { compileDnr } from '../src/dnr/index.js';
import { corpusXmlFiles } from './support/corpus.js';

/**
 * A dynamic set is checked with Chromium's `isRegexSupported` before it is written; what the
 * browser refuses is compiled again without it. No refused regex may come back, merged or not,
 * and only the rulesets that needed one may be lost.
 */
describe('regexes the browser refuses', () => {
  let rulesets: Ruleset[];

  beforeAll(() => {
    rulesets = corpusXmlFiles().flatMap((file) => {
      const { ruleset } = parseRulesetXml(readFileSync(file, 'utf8'), file);
      return ruleset && isDefaultActive(ruleset) ? [ruleset] : [];
    });
  });

  it('never come back, and cost only the rulesets that need them', () => {
    const options = {
      isActive: () => true,
      regexLimit: 900,
      ruleLimit: 30_000,
      redirectLimit: 5_000,
    };
    const first = compileDnr(rulesets, options);
    const regexes = [
      ...new Set(
        first.rules.flatMap((r) =>
          r.condition.regexFilter === undefined ? [] : [r.condition.regexFilter],
        ),
      ),
    ];
    // Every 9th regex that names a host (a ruleset's own or merged ones). The shared host-shape
    // groups (`^http://[^./?#:@]+(?:\.[^./?#:@]+){2}/`) are a handful of fixed forms that the
    // corpus test in Chromium checks; a refusal of one fails the write, and the rules before stay.
    const refused = new Set(regexes.filter((re, i) => i % 9 === 0 && /\\\.[a-z0-9]/i.test(re)));
    expect(refused.size).toBeGreaterThan(50);
    let again = compileDnr(rulesets, { ...options, refusedRegexes: refused });
    // A merge or group made anew may meet another refusal: a few rounds, as the extension does.
    for (let round = 0; round < 3; round++) {
      const back = again.rules.filter((r) => refused.has(r.condition.regexFilter ?? ''));
      if (back.length === 0) break;
      again = compileDnr(rulesets, { ...options, refusedRegexes: refused });
    }
    expect(
      again.rules
        .filter((r) => refused.has(r.condition.regexFilter ?? ''))
        .map((r) => r.condition.regexFilter),
    ).toEqual([]);
    const lost = again.report.omissions.filter(
      (o) => o.reason === 'the browser refuses one of its regexes',
    );
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.length).toBeLessThanOrEqual(refused.size);
    expect(again.report.rulesetsComplete).toBeGreaterThan(
      first.report.rulesetsComplete - refused.size - 50,
    );
  });
});
