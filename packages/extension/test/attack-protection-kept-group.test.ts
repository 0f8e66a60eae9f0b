import { DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { describe, expect, it } from 'vitest';
import { decide } from '../src/decision/decide.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { knownHttpsRules } from '../src/protection/protection-dnr.js';
import { RuleStores } from './support/rule-stores.js';
import { decisionState } from './support/decision-state.js';

/**
 * Attack: the known hosts' rules are one regex rule per label count, its domain list holding
 * every host of that count. The protection layer has no smaller set to fall back on; refused,
 * it keeps its rules whose bodies are unchanged. Two hosts learned in one batch (one page's
 * subresources; the runtime batches its writes), one of a new label count, under regex
 * pressure: the layer does not fit, the changed two-label rule is not "still asked", and the
 * host known for long loses its upgrade. decide() still upgrades it (known-host): the refusal
 * made the browser laxer than decide(), and for a host that was already protected.
 */
describe('attack: a refused protection layer drops hosts it protected before', () => {
  it("keeps upgrading an old known host's subresources", async () => {
    const stores = new RuleStores();
    const writer = new RuleWriter(stores);
    // A library holds every regex rule but the one the first group needs.
    await writer.setLayer(
      'channels',
      Array.from({ length: 999 }, (_, i) => ({
        priority: 20_000,
        action: { type: 'upgradeScheme' as const },
        condition: {
          regexFilter: `^http://f${i}\\.lib\\.test/`,
          resourceTypes: ['main_frame' as const],
        },
      })),
    );
    await writer.setLayer('protection', knownHttpsRules(['old.test']));
    const url = 'http://old.test/app.js';
    const outcome = () =>
      new DnrEmulator([...stores.dynamic, ...stores.session] as DnrRule[]).match({
        url,
        type: 'script',
      }).redirectUrl;
    expect(outcome()).toBe('https://old.test/app.js');

    // One page teaches two hosts at once: new.test (two labels) and cdn.new.test (three).
    const known = ['old.test', 'new.test', 'cdn.new.test'];
    await writer.setLayer('protection', knownHttpsRules(known)).catch(() => undefined);
    const state = decisionState({
      knownHttps: (host) => known.includes(host),
    });
    expect(decide({ url, kind: 'subresource', tab: { tabId: 1 }, state })).toMatchObject({
      action: 'upgrade',
      reason: 'known-host',
    });
    expect(outcome()).toBe('https://old.test/app.js');
  });
});
