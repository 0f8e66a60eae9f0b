import { describe, expect, it } from 'vitest';
import { rewriteRecord, sweepResultLine } from '../../src/formats/jsonl.js';
import { sweepResult } from './reports.js';

// A JSONL record is one line (a reader splits on "\n") that parses back to what was written.
describe('JSON Lines formats', () => {
  it('rewrite: url, rewritten and ruleset always; channel, error and refused only when set', () => {
    const plain = rewriteRecord('http://a.test/', {
      rewritten: 'https://a.test/',
      ruleset: 'A',
      channel: null,
    });
    expect(plain).toBe('{"url":"http://a.test/","rewritten":"https://a.test/","ruleset":"A"}');
    const refused = {
      url: 'http://b.test/\n',
      rewritten: null,
      ruleset: null,
      channel: 'beta',
      error: 'not a URL',
      refused: { channel: 'beta', rewritten: 'https://evil.test/', ruleset: 'B' },
    };
    const { url, ...outcome } = refused;
    const line = rewriteRecord(url, outcome);
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toEqual(refused);
  });

  it('sweep journal: one line per result, read back equal', () => {
    const line = sweepResultLine(sweepResult());
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toEqual(sweepResult());
  });
});
