import type { Ruleset } from '@httpsify/engine';
import { DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import type { ProtectionSnapshot } from '../src/decision/snapshot.js';
import { ruleLimitsOf } from '../src/dnr/rule-limits.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { RUNTIME_LIMITS, type RuleBody } from '../src/dnr/rules.js';
import { settingsReserve, syncSettingsRules } from '../src/dnr/settings-rules.js';
import { LOOP_RULES_MAX } from '../src/https-first/loop-guard.js';
import { RuleStores } from './support/rule-stores.js';

const HANDOFF = 'chrome-extension://ext/handoff.html';

/** One ruleset of the user's with `n` right-wildcard targets (`www.shopN.*`): plain upgrades. */
function wildcardRuleset(n: number): Ruleset {
  const targets = Array.from({ length: n }, (_, i) => `<target host="www.shop${i}.*"/>`).join('');
  return parseRulesetXml(
    `<ruleset name="My shops">${targets}<rule from="^http:" to="https:"/></ruleset>`,
    'shops.xml',
  ).ruleset as Ruleset;
}

function snapshot(httpsFirst: boolean, user: Ruleset[]): ProtectionSnapshot {
  const none = { matchUrl: () => null, matchHost: () => null };
  return {
    globalEnabled: true,
    httpsFirst,
    disabled: none,
    httpAllowed: none,
    httpOnce: new Set(),
    httpOnceInTabs: new Map(),
    userRules: null,
    rulesets: { rewrite: () => ({ rewritten: null, ruleset: null }), excludedBy: () => null },
    loopVerdict: () => false,
    dnr: { disabledSites: [], httpAllowedSites: [], activeUserRulesets: user },
  };
}

/** Where Chromium sends a top-level navigation to `url` with `rules` in force (null: nowhere). */
function navigate(rules: readonly RuleBody[], url: string): string | null {
  return new DnrEmulator(rules as DnrRule[]).match({ url, type: 'main_frame', tabId: 1 })
    .redirectUrl;
}

/**
 * Attack (a): the settings layer's fallbacks all keep the user's rulesets' handoff, one regex
 * rule per wildcard target (handoff-rules.ts, PATTERNS_PER_RULE = 1), and the settings reserve
 * holds only 16 rules of headroom for it. Imported channels/library planned around that reserve
 * take the rest of the regex budget. A user ruleset of 200 wildcard targets compiles to 25
 * regex rules (8 targets each), which fit while HTTPS-first is off (its local-name exemptions
 * are regex rules too), but its handoff fallbacks need 200. Turning HTTPS-first on, which
 * settingsReserve() promises "always fits", then fits in no set: the writer keeps the old
 * upgrades only ("kept-upgrades"), the mode's rule is never written, and decide() upgrades
 * every http:// page while the browser upgrades none (laxer). With HTTPS-first on from the
 * start, nothing of the settings is written at all: the user's hosts stay on HTTP too.
 */
describe('attack: wildcard targets of the user leave no settings set that fits', () => {
  async function world(httpsFirst: boolean) {
    const stores = new RuleStores();
    const loops = { rules: LOOP_RULES_MAX, regexRules: LOOP_RULES_MAX, unsafeRules: 0 };
    const writer = new RuleWriter(stores, RUNTIME_LIMITS, {
      reserves: { settings: settingsReserve(), loops },
    });
    // The channels (or the imported library) take what the reserves leave of the regex budget,
    // as their planners do (writer.free).
    const free = await writer.free('channels');
    const filler: RuleBody[] = Array.from({ length: free.regexRules }, (_, i) => ({
      priority: 20_000,
      action: { type: 'upgradeScheme' },
      condition: { regexFilter: `^http://c${i}\\.channel\\.test/`, resourceTypes: ['image'] },
    }));
    await writer.setLayer('channels', filler);
    expect(writer.problem('channels')).toBeUndefined();
    const user = [wildcardRuleset(200)];
    await syncSettingsRules(writer, snapshot(httpsFirst, user), 'ext', HANDOFF).catch(() => null);
    return { stores, writer, user };
  }

  it('the mode switched on is enforced, whatever the user rules need', async () => {
    // HTTPS-first off: the user's 25 compiled regex rules fit (the mode's local-name
    // exemptions are not needed).
    const { stores, writer, user } = await world(false);
    expect(writer.problem('settings')).toBeUndefined();
    // The user turns HTTPS-first on: decide() now upgrades http://example.org/.
    await syncSettingsRules(writer, snapshot(true, user), 'ext', HANDOFF).catch(() => null);
    expect(navigate(stores.dynamic, 'http://example.org/')).toBe('https://example.org/');
  });

  it("the user's wildcard hosts are upgraded or handed off, never left on HTTP", async () => {
    // HTTPS-first on from the start: neither the compiled set nor the handoff fits.
    const { stores, writer } = await world(true);
    expect(writer.problem('settings')).toBeDefined();
    // decide(): user-rule upgrade to https://www.shop3.de/. The browser must go there or to
    // the handoff page (which asks decide()), never load the http:// page.
    const to = navigate(stores.dynamic, 'http://www.shop3.de/');
    expect(to).not.toBeNull();
    // …and HTTPS-first, on, upgrades any other page.
    expect(navigate(stores.dynamic, 'http://example.org/')).toBe('https://example.org/');
  });

  it("the notice names the user's rules when none of them is in force", async () => {
    const { stores, writer } = await world(true);
    // The user's rules are not in the browser as they are written (their hosts are only
    // upgraded, in the smallest set)…
    expect(stores.dynamic.some((r) => r.condition.urlFilter?.includes('shop') === true)).toBe(true);
    // …and the notice says so (it once read 'kept-upgrades' as "sites" alone).
    expect(ruleLimitsOf(writer.refusals()).map((l) => l.part)).toContain('userRules');
  });
});
