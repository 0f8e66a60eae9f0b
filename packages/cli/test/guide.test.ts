import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine } from '@httpsify/engine';
import { lintRulesetSource, rulesetCoverage } from '@httpsify/engine/authoring';

const guide = readFileSync(resolve(__dirname, '../../../docs/writing-rulesets.md'), 'utf8');
const examples = [...guide.matchAll(/```xml\n([\s\S]*?)```/g)].map((m) => m[1] as string);

describe('docs/writing-rulesets.md', () => {
  it('has examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
  });
  it.each(examples.map((x, i) => [i + 1, x]))('example %i passes check and test', (_n, xml) => {
    const lint = lintRulesetSource(xml as string, 'guide.xml');
    expect(lint.diagnostics).toEqual([]);
    expect(rulesetCoverage(lint.ruleset!).diagnostics).toEqual([]);
  });

  it('every "URL → result" line under an example is what the engine does with that example', () => {
    // Split the guide at each example; the expectations follow their example's closing fence.
    const parts = guide.split(/```xml\n/).slice(1);
    let checked = 0;
    for (const part of parts) {
      const [xml, after] = part.split('```') as [string, string];
      const engine = createEngine([lintRulesetSource(xml, 'guide.xml').ruleset!]);
      const prose = after.split(/\n#/)[0] as string;
      for (const m of prose.matchAll(/^- `([^`]+)` → (?:`([^`]+)`|unchanged)/gm)) {
        expect(engine.rewrite(m[1] as string), m[1]).toBe(m[2] ?? null);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(12);
  });
});
