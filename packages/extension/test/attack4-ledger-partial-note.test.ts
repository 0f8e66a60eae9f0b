/**
 * Attack on the writer's record of the dynamic store (rule-ledger.ts): a layer a waking worker
 * declares as recorded is not written, and is settled as if wholly in force. A layer whose rules
 * leave part of their input out (DnrPartialError: the user's rulesets DNR cannot express, whose
 * page loads go to the handoff page; rulesets switched on, likewise) loses that note at every
 * wake, and the refusals stored for the options page are written again without it: "Rule
 * limits" stops saying that part of the user's rules is not a DNR rule. Before the record, the
 * layer was fitted again at each start and the note kept.
 */
import { describe, expect, it } from 'vitest';
import { LEDGER_KEY, ledgerIn } from '../src/dnr/rule-ledger.js';
import { type LayerRefusal, RuleWriter } from '../src/dnr/rule-writer.js';
import { ruleLimitsOf } from '../src/dnr/rule-limits.js';
import { type RuleBody, RUNTIME_LIMITS } from '../src/dnr/rules.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { RuleStores } from './support/rule-stores.js';

const PARTIAL =
  "part of 1 of the user's own rulesets, which DNR cannot express (their page loads go to the rulesets)";
const settings: RuleBody[] = [
  {
    priority: 100_010,
    action: { type: 'upgradeScheme' },
    condition: { urlFilter: '||user.test/', resourceTypes: ['main_frame'] },
  },
];

/** A browser whose worker wrote the settings with a note, then stopped; refusals as stored. */
async function browser() {
  const session = new MemoryStorageArea();
  const stores = new RuleStores();
  let stored: LayerRefusal[] = [];
  const start = () =>
    new RuleWriter(stores, RUNTIME_LIMITS, {
      ledger: ledgerIn(session, LEDGER_KEY),
      refusalsChanged: (r) => (stored = structuredClone(r)),
    });
  const first = start();
  await first.setLayer('settings', settings, [], PARTIAL);
  expect(ruleLimitsOf(first.refusals()).map((l) => l.part)).toEqual(['userRules']);
  return { start, stored: () => stored };
}

describe('a layer declared as recorded keeps what its rules leave out', () => {
  it('when the stored refusals are read before the layer is declared', async () => {
    const { start, stored } = await browser();
    const woken = start();
    woken.restoreRefusals(stored());
    await woken.setLayer('settings', settings, [], PARTIAL);
    expect(ruleLimitsOf(woken.refusals()).map((l) => l.part)).toEqual(['userRules']);
    expect(stored().map((r) => r.outcome)).toEqual([{ partial: PARTIAL }]);
  });

  it('when the layer is declared before the stored refusals are read', async () => {
    const { start, stored } = await browser();
    const woken = start();
    const before = stored();
    await woken.setLayer('settings', settings, [], PARTIAL);
    woken.restoreRefusals(before);
    expect(ruleLimitsOf(woken.refusals()).map((l) => l.part)).toEqual(['userRules']);
    expect(stored().map((r) => r.outcome)).toEqual([{ partial: PARTIAL }]);
  });
});
