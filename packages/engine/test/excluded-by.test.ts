import { describe, expect, it } from 'vitest';
import { compileBundle } from '../src/bundle/write.js';
import { createEngine } from '../src/match/create-engine.js';
import { loadBundle } from '../src/match/engine.js';
import { compileScope, ScopedEngine } from '../src/channels/scoped-engine.js';
import { parseRulesetXml } from '../src/parse/index.js';
import type { Ruleset } from '../src/model/ruleset.js';

const parse = (xml: string): Ruleset => parseRulesetXml(xml, 'test.xml').ruleset as Ruleset;

const KEPT = parse(`<ruleset name="Kept">
  <target host="kept.test"/><target host="*.kept.test"/>
  <exclusion pattern="^http://kept\\.test/plain/"/>
  <exclusion pattern="^http://(?:www\\.)?kept\\.test/(?:old|legacy)\\.html"/>
  <rule from="^http://kept\\.test/ruled/" to="https://kept.test/ruled/"/>
</ruleset>`);
/** Nine literal exclusions: the engine searches them as one sorted index. */
const MANY = parse(`<ruleset name="Many">
  <target host="many.test"/>
  ${Array.from({ length: 9 }, (_, i) => `<exclusion pattern="^http://many\\.test/p${i}/"/>`).join('')}
  <rule from="^http://many\\.test/ruled/" to="https://many.test/ruled/"/>
</ruleset>`);
const OFF = parse(
  `<ruleset name="Off" default_off="breaks"><target host="off.test"/><exclusion pattern="^http://off\\.test/"/><rule from="^http://off\\.test/x" to="https://off.test/x"/></ruleset>`,
);
/** Its exclusion has a backreference, which the regex door refuses: the ruleset is not used. */
const REFUSED = parse(
  `<ruleset name="Refused"><target host="refused.test"/><exclusion pattern="^http://refused\\.test/((a)\\2?)+!$"/><rule from="^http://refused\\.test/x" to="https://refused.test/x"/></ruleset>`,
);
/** A second ruleset on kept.test that does rewrite what Kept excludes. */
const OVERLAP = parse(
  `<ruleset name="Overlap"><target host="kept.test"/><rule from="^http://kept\\.test/plain/secure" to="https://kept.test/plain/secure"/></ruleset>`,
);

describe('Engine.excludedBy: an active ruleset covering the host excludes the URL', () => {
  for (const [door, engine] of [
    ['createEngine', createEngine([KEPT, MANY, OFF, REFUSED])],
    ['loadBundle', loadBundle(compileBundle([KEPT, MANY, OFF, REFUSED]))],
  ] as const) {
    it(`${door}: names the ruleset whose exclusion matches, and nothing else`, () => {
      expect(engine.excludedBy('http://kept.test/plain/page?q=1')).toBe('Kept');
      expect(engine.excludedBy('http://www.kept.test/legacy.html')).toBe('Kept');
      // Not excluded, and no rule either: the protection mode may upgrade it.
      expect(engine.rewrite('http://kept.test/other')).toBeNull();
      expect(engine.excludedBy('http://kept.test/other')).toBeNull();
      // The URL as browsers send it and as rewrite normalises it: credentials, trailing dot, case.
      expect(engine.excludedBy('http://user:pw@KEPT.test./plain/x')).toBe('Kept');
      // Another host, another scheme, not a URL.
      expect(engine.excludedBy('http://notkept.test/plain/')).toBeNull();
      expect(engine.excludedBy('https://kept.test/plain/')).toBeNull();
      expect(engine.excludedBy('not a url')).toBeNull();
      // Many exclusions go through the sorted index.
      expect(engine.excludedBy('http://many.test/p7/x')).toBe('Many');
      expect(engine.excludedBy('http://many.test/p9/x')).toBeNull();
      // A ruleset that is off excludes nothing, until switched on.
      expect(engine.excludedBy('http://off.test/a')).toBeNull();
      engine.setActive('Off', true);
      expect(engine.excludedBy('http://off.test/a')).toBe('Off');
      engine.setActive('Off', undefined);
      // A ruleset the regex door refuses is not used at all: its exclusions do not count.
      expect(engine.excludedBy('http://refused.test/aa!')).toBeNull();
      expect(engine.takeRegexRefusals().map((r) => r.ruleset)).toEqual(['Refused']);
      expect(engine.rewrite('http://refused.test/x')).toBeNull();
    });
  }

  it('hasExclusions tells rulesets with exclusions apart without running them', () => {
    const engine = createEngine([KEPT, OVERLAP]);
    const id = (name: string) => engine.rulesetIdsByName(name)[0] as number;
    expect(engine.hasExclusions(id('Kept'))).toBe(true);
    expect(engine.hasExclusions(id('Overlap'))).toBe(false);
  });

  it('is independent of rewrite: another ruleset may still rewrite an excluded URL', () => {
    const engine = createEngine([KEPT, OVERLAP]);
    expect(engine.rewrite('http://kept.test/plain/secure')).toBe('https://kept.test/plain/secure');
    expect(engine.excludedBy('http://kept.test/plain/secure')).toBe('Kept');
  });

  it('ScopedEngine asks only the layers whose scope covers the URL', () => {
    const channel = createEngine([KEPT]);
    const defaults = createEngine([MANY]);
    const scoped = new ScopedEngine([
      { channel: 'Narrow', scope: compileScope('^http://kept\\.test/plain/a'), engine: channel },
      { channel: null, scope: null, engine: defaults },
    ]);
    expect(scoped.excludedBy('http://kept.test/plain/a1')).toBe('Kept');
    // Outside the channel's scope, its exclusion does not apply.
    expect(scoped.excludedBy('http://kept.test/plain/b1')).toBeNull();
    expect(scoped.excludedBy('http://many.test/p0/')).toBe('Many');
  });
});
