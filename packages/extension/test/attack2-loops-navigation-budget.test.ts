import { describe, expect, it } from 'vitest';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { RUNTIME_LIMITS, usageOf } from '../src/dnr/rules.js';
import { LOOP_RULES_MAX, LoopGuard } from '../src/https-first/loop-guard.js';
import { LoopLayer } from '../src/https-first/loop-rules.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { RuleStores } from './support/rule-stores.js';

/**
 * Attack (A x B): commit 8fb5561 bounds subresource verdicts (20 a tab, 50 in all) because each
 * is a regex rule from the budget every layer shares. Page verdicts are regex rules too, bounded
 * only at 200, with no bound per tab. A hostile site's page sends its own tab on: each of its
 * URLs answers HTTPS with a redirect to its http:// form (HTTPS-first upgrades it again), and
 * once it loads over HTTP its script goes to the next. One tab then holds 200 regex rules of
 * the 1,000 that the user's rules, the library and the channels share (see
 * attack2-loops-squeeze-user-rules for what 50 already push out).
 */
describe('attack: one tab holds many regex rules as page loop verdicts', () => {
  it('keeps what one tab takes of the shared regex budget within the subresource bound', async () => {
    const stores = new RuleStores();
    const writer = new RuleWriter(stores, RUNTIME_LIMITS);
    const guard = new LoopGuard();
    const layer = new LoopLayer(guard, writer, new MemoryStorageArea());
    const tabId = 9;
    for (let n = 0; n < 200; n++) {
      const http = `http://evil.test/${n}`;
      const https = `https://evil.test/${n}`;
      const requestId = `nav-${n}`;
      for (let round = 0; round < 3; round++) {
        // HTTPS-first's upgrade (DNR's internal redirect), then the site's answer.
        guard.noteRedirect({ requestId, tabId, type: 'main_frame', url: http, redirectUrl: https });
        const v = guard.noteRedirect({
          requestId,
          tabId,
          type: 'main_frame',
          url: https,
          redirectUrl: http,
        });
        if (v !== null) await layer.changed();
      }
      guard.finish(requestId);
    }
    // The tab's verdicts are bounded per tab; every verdict's rule within the loops' reserve.
    expect(guard.live().length).toBeLessThanOrEqual(LOOP_RULES_MAX);
    expect(usageOf(stores.session).regexRules).toBeLessThanOrEqual(LOOP_RULES_MAX);
  });
});
