import { describe, expect, it } from 'vitest';
import { parseRefusals } from '../src/dnr/rule-limits.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { RuleStores } from './support/rule-stores.js';

/**
 * Attack (d): dnrRefusals as damaged storage. parseRefusals bounds the message (2,000
 * characters) but copies an outcome's `without` / `partial` text whole; the writer restores
 * it and stores it back after every batch (refusalsChanged), so a damaged value of megabytes
 * is kept, and written to storage again on every rule change, for as long as the layer is not
 * rewritten.
 */
describe('attack: a damaged dnrRefusals value', () => {
  it('is bounded as it is read, outcome text included', async () => {
    const huge = 'x'.repeat(4_000_000);
    const stored = [
      { layer: 'overrides', message: 'm', outcome: { without: huge } },
      { layer: 'protection', message: 'm', outcome: { partial: huge } },
    ];
    const written: unknown[] = [];
    const writer = new RuleWriter(new RuleStores(), undefined, {
      refusalsChanged: (r) => written.push(r),
    });
    writer.restoreRefusals(parseRefusals(stored));
    // Any other layer's batch stores the refusals again.
    await writer.setLayer('loops', []);
    expect(written).toHaveLength(1);
    expect(JSON.stringify(written[0]).length).toBeLessThan(10_000);
  });
});
