import type { Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import type { ProtectionSnapshot } from '../src/decision/snapshot.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { RUNTIME_LIMITS, usageOf } from '../src/dnr/rules.js';
import { settingsReserve, syncSettingsRules, uiDnrRules } from '../src/dnr/settings-rules.js';
import { LOOP_RULES_MAX, LoopGuard } from '../src/https-first/loop-guard.js';
import { LoopLayer } from '../src/https-first/loop-rules.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { RuleStores } from './support/rule-stores.js';

/** The user's own rules: `n` rulesets of one rule each that needs a regex (a path rewrite). */
function userRulesets(n: number): Ruleset[] {
  return Array.from(
    { length: n },
    (_, i) =>
      parseRulesetXml(
        `<ruleset name="Mine ${i}"><target host="u${i}.mine.test"/><rule from="^http://u${i}\\.mine\\.test/([^/?]+)/old" to="https://u${i}.mine.test/new/$1"/></ruleset>`,
        `mine${i}.xml`,
      ).ruleset as Ruleset,
  );
}

function snapshot(disabledSites: string[], user: Ruleset[]): ProtectionSnapshot {
  const none = { matchUrl: () => null, matchHost: () => null };
  return {
    globalEnabled: true,
    httpsFirst: true,
    disabled: none,
    httpAllowed: none,
    httpOnce: new Set(),
    httpOnceInTabs: new Map(),
    userRules: null,
    rulesets: { rewrite: () => ({ rewritten: null, ruleset: null }), excludedBy: () => null },
    loopVerdict: () => false,
    dnr: { disabledSites, httpAllowedSites: [], activeUserRulesets: user },
  };
}

const settingsRegex = (user: Ruleset[]) =>
  usageOf(
    uiDnrRules({
      globalEnabled: true,
      disabledSites: ['off.test'],
      httpAllowedSites: [],
      httpOnceHosts: [],
      userRulesets: user,
      httpsFirst: true,
      extensionId: 'ext',
      handoffPage: 'chrome-extension://ext/handoff.html',
    }).rules,
  ).regexRules;

/**
 * Attack (A x B): a hostile site whose own host is a known HTTPS host (the user opened it once)
 * answers its subresources' HTTPS with redirects to HTTP. Each URL is a loop verdict, each
 * verdict a session regex rule, from the regex budget every layer shares: three tabs of it hold
 * the 50 allowed. The user's own rules, which fit beside everything of the user's, are then
 * refused ("written without the user's own rules"): a page's traffic decides whether the
 * user's rules are enforced (their subresources then stay on HTTP, see
 * attack2-user-rules-subresources), and the notice shows a limit the user never reached.
 */
describe("attack: a page's loop verdicts push the user's own rules out", () => {
  /** The user's rules (940 regex rules), then the hostile site's 50 verdicts, then 20 more rules. */
  async function squeezed() {
    // The user's rules leave 60 of the regex budget free.
    const base = settingsRegex([]);
    const each = settingsRegex(userRulesets(2)) - settingsRegex(userRulesets(1));
    expect(each).toBe(1);
    const first = settingsRegex(userRulesets(1)) - base;
    const user = userRulesets(RUNTIME_LIMITS.regexRules - 60 - base - first + 1);
    expect(settingsRegex(user)).toBe(RUNTIME_LIMITS.regexRules - 60);
    // Twenty more rules of the user's: they fit (40 regex rules to spare), without the page.
    const more = userRulesets(RUNTIME_LIMITS.regexRules - 40 - base - first + 1);
    expect(settingsRegex(more)).toBe(RUNTIME_LIMITS.regexRules - 40);

    const stores = new RuleStores();
    // As background/chromium.ts sets it up: the settings' and the loop verdicts' room reserved.
    const writer = new RuleWriter(stores, RUNTIME_LIMITS, {
      reserves: {
        settings: settingsReserve(),
        loops: { rules: LOOP_RULES_MAX, regexRules: LOOP_RULES_MAX, unsafeRules: 0 },
      },
    });
    const handoff = 'chrome-extension://ext/handoff.html';
    await syncSettingsRules(writer, snapshot(['off.test'], user), 'ext', handoff);
    expect(writer.problem('settings')).toBeUndefined();

    // The hostile site, in three tabs: each URL's HTTPS answer redirects to its http:// form,
    // which decide() upgrades again (known host).
    const guard = new LoopGuard();
    const layer = new LoopLayer(guard, writer, new MemoryStorageArea());
    let made = 0;
    for (const tabId of [11, 12, 13])
      for (let i = 0; i < 20; i++) {
        const http = `http://evil.test/${tabId}/${i}.gif`;
        const https = http.replace('http:', 'https:');
        for (let round = 0; round < 3; round++) {
          const v = guard.noteSubresourceRedirect(
            { requestId: `${tabId}-${i}`, tabId, type: 'image', url: https, redirectUrl: http },
            (u) => u.replace(/^http:/, 'https:'),
          );
          if (v !== null) made++;
        }
        await layer.changed();
      }
    expect(made).toBe(60);
    // Verdicts beyond the bound push out older ones: never more rules than the loops' reserve.
    expect(stores.session.length).toBeLessThanOrEqual(LOOP_RULES_MAX);

    await syncSettingsRules(writer, snapshot(['off.test'], more), 'ext', handoff)
      .then(() => null)
      .catch(() => null);
    return { writer, guard, layer };
  }

  it("keeps the user's rules that fitted, whatever a page's subresources do", async () => {
    const { writer } = await squeezed();
    // The user added twenty rules, which fit beside everything of theirs: refused for the
    // page's verdicts ("written without the user's own rules"; options page: not everything fits).
    expect(writer.problem('settings')).toBeUndefined();
  });

  it("writes the user's rules again once the page's verdicts are gone", async () => {
    const { writer, guard, layer } = await squeezed();
    // The verdicts end (tabs closed, or ten minutes later): all the product does is this.
    for (const tabId of [11, 12, 13]) guard.tabClosed(tabId);
    await layer.changed();
    await writer.idle();
    // Nothing the page did ever took the user's rules out.
    expect(writer.problem('settings')).toBeUndefined();
  });
});
