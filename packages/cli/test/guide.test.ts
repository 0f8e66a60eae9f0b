import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lintRulesetSource, rulesetCoverage } from '@httpsify/engine';

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
});
