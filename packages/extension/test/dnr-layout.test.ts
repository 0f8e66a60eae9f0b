import { describe, expect, it } from 'vitest';
import * as L from '../src/dnr/layout.js';
import {
  decideHandoff,
  handoffOnceRule,
  handoffRules,
  type HandoffInputs,
} from '../src/dnr/handoff-rules.js';

describe('DNR priorities and ids', () => {
  it('orders every kind of rule as the table in dnr-layout.ts says', () => {
    const lastChannelTop =
      L.CHANNEL_PRIORITY_BASE +
      (L.MAX_DNR_CHANNELS - 1) * L.CHANNEL_PRIORITY_STEP +
      L.MAX_COMPILED_PRIORITY;
    const order = [
      L.GLOBAL_OFF_PRIORITY,
      L.OWN_REQUESTS_PRIORITY,
      L.SITE_DISABLED_PRIORITY,
      L.LOOP_ALLOW_PRIORITY,
      L.HANDOFF_ONCE_PRIORITY,
      L.HANDOFF_FORMS_PRIORITY,
      L.USER_RULE_PRIORITY_OFFSET + L.MAX_COMPILED_PRIORITY,
      L.USER_RULE_PRIORITY_OFFSET,
      lastChannelTop,
      L.CHANNEL_PRIORITY_BASE,
      L.HANDOFF_PRIORITY,
      L.MAX_COMPILED_PRIORITY,
      L.HTTPS_FIRST_EXEMPT_PRIORITY,
      L.PROTECTION_PRIORITY,
      L.HTTPS_FIRST_PRIORITY,
    ];
    expect(order).toEqual([...order].sort((a, b) => b - a));
    expect(new Set(order).size).toBe(order.length);
    // A channel's band holds a whole compiled rule set.
    expect(L.CHANNEL_PRIORITY_STEP).toBeGreaterThan(L.MAX_COMPILED_PRIORITY);
  });

  it('gives every layer its own id range, in one store', () => {
    const ranges = Object.entries(L.LAYERS);
    for (const [name, l] of ranges) {
      expect(l.limit).toBeGreaterThan(l.base);
      expect(L.layerOf(l.store, l.base)).toBe(name);
      expect(L.layerOf(l.store, l.limit - 1)).toBe(name);
      for (const [other, o] of ranges)
        if (other !== name && o.store === l.store)
          expect(o.base >= l.limit || o.limit <= l.base).toBe(true);
    }
    expect(L.layerOf('dynamic', 0)).toBeNull();
    expect(L.layerOf('session', L.LAYERS.tabOnce.limit)).toBeNull();
  });
});

describe('main-frame handoff', () => {
  // decide() itself is tested in decision.test.ts; here, what the page does with its answer.
  const inputs: HandoffInputs = {
    decide: (u) =>
      u.includes('/rw')
        ? {
            action: 'upgrade',
            url: u.replace('http://a.test/rw', 'https://b.test/'),
            reason: 'ruleset',
          }
        : { action: 'leave', reason: 'no-rule' },
  };

  it('redirects the scope, trailing dots and credentials to the page, at the handoff priority', () => {
    const rules = handoffRules(
      { domains: ['a.test'], patterns: ['www.g.*'] },
      'chrome-extension://x/ui/handoff.html',
    );
    expect(rules.map((r) => r.condition.regexFilter)).toEqual([
      '^http://.*',
      '^http://(?:www\\.g\\.[^./?#:@]+)(:[0-9]+)?/.*',
      '^http://[^/]*@.*',
      '^http://[^/@:]*\\.(:[0-9]+)?/.*',
    ]);
    expect(rules.every((r) => r.condition.resourceTypes?.join() === 'main_frame')).toBe(true);
    // Credentials and trailing dots go to the page above user rules and channels too.
    expect(rules.map((r) => r.priority)).toEqual([
      L.HANDOFF_PRIORITY,
      L.HANDOFF_PRIORITY,
      L.HANDOFF_FORMS_PRIORITY,
      L.HANDOFF_FORMS_PRIORITY,
    ]);
    const trailing = new RegExp(rules[3]!.condition.regexFilter!);
    expect(trailing.test('http://www.example.com./x')).toBe(true);
    expect(trailing.test('http://www.example.com/x.')).toBe(false);
  });

  it('decides: the rewrite, else the URL once; nothing for what is not http://', () => {
    expect(decideHandoff('http://a.test/rw?q', inputs)).toEqual({
      ok: true,
      target: 'https://b.test/?q',
      once: false,
    });
    expect(decideHandoff('http://a.test/keep', inputs)).toEqual({
      ok: true,
      target: 'http://a.test/keep',
      once: true,
    });
    const first: HandoffInputs = {
      decide: (u) => ({
        action: 'upgrade',
        url: u.replace('http:', 'https:'),
        reason: 'https-first',
      }),
    };
    expect(decideHandoff('http://a.test/keep', first)).toEqual({
      ok: true,
      target: 'https://a.test/keep',
      once: false,
    });
    const loop: HandoffInputs = { decide: () => ({ action: 'allowHttp', reason: 'loop-guard' }) };
    expect(decideHandoff('http://a.test/rw', loop)).toEqual({
      ok: true,
      target: 'http://a.test/rw',
      once: true,
    });
    for (const bad of ['javascript:alert(1)', 'chrome://settings', '', 42, null])
      expect(decideHandoff(bad, inputs).ok).toBe(false);
  });

  it('sends a URL with credentials where the decision says, credentials and all', () => {
    expect(decideHandoff('http://u:p@a.test/keep', inputs)).toEqual({
      ok: true,
      target: 'http://u:p@a.test/keep',
      once: true,
    });
    const up: HandoffInputs = {
      decide: (u) => ({ action: 'upgrade', url: u.replace('http:', 'https:'), reason: 'ruleset' }),
    };
    expect(decideHandoff('http://u:p@a.test/x', up)).toEqual({
      ok: true,
      target: 'https://u:p@a.test/x',
      once: false,
    });
    // The page's own once-rule must outrank the credentials handoff, or the URL comes back.
    expect(handoffOnceRule(1, 'http://u:p@a.test/keep').priority).toBeGreaterThan(
      L.HANDOFF_FORMS_PRIORITY,
    );
  });

  it('lets exactly one URL through, in one tab', () => {
    const rule = handoffOnceRule(7, 'http://a.test/p?x=(1)');
    expect(rule.condition.tabIds).toEqual([7]);
    const re = new RegExp(rule.condition.regexFilter!);
    expect(re.test('http://a.test/p?x=(1)')).toBe(true);
    expect(re.test('http://a.test/p?x=(1)&y')).toBe(false);
    expect(rule.priority).toBe(L.HANDOFF_ONCE_PRIORITY);
  });
});
