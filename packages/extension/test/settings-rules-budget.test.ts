import type { Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import type { ProtectionSnapshot } from '../src/decision/snapshot.js';
import { DnrBudgetError, type DnrRulesApi, RuleWriter } from '../src/dnr/rule-writer.js';
import { type ExtRule, RUNTIME_LIMITS } from '../src/dnr/rules.js';
import { syncSettingsRules, uiDnrRules } from '../src/dnr/settings-rules.js';

/** declarativeNetRequest's rule stores, all or nothing per update. */
class RuleStores implements DnrRulesApi {
  dynamic: ExtRule[] = [];
  session: ExtRule[] = [];
  async getDynamicRules() {
    return structuredClone(this.dynamic);
  }
  async getSessionRules() {
    return structuredClone(this.session);
  }
  async updateDynamicRules(u: { removeRuleIds: number[]; addRules: ExtRule[] }) {
    this.dynamic = [...this.dynamic.filter((r) => !u.removeRuleIds.includes(r.id)), ...u.addRules];
  }
  async updateSessionRules(u: { removeRuleIds: number[]; addRules: ExtRule[] }) {
    this.session = [...this.session.filter((r) => !u.removeRuleIds.includes(r.id)), ...u.addRules];
  }
}

/** A user ruleset of many hosts, each with its own rule: many DNR rules. */
function bigUserRuleset(): Ruleset {
  const hosts = Array.from({ length: 40 }, (_, i) => `h${i}.user.test`);
  const xml = `<ruleset name="Mine">${hosts.map((h) => `<target host="${h}"/>`).join('')}${hosts
    .map((h) => `<rule from="^http://${h.replace(/\./g, '\\.')}/" to="https://www.${h}/"/>`)
    .join('')}</ruleset>`;
  return parseRulesetXml(xml, 'mine.xml').ruleset as Ruleset;
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

const ruleCount = (disabledSites: string[], user: Ruleset[]) =>
  uiDnrRules({
    globalEnabled: true,
    disabledSites,
    httpAllowedSites: [],
    httpOnceHosts: [],
    userRulesets: user,
    httpsFirst: true,
    extensionId: 'ext',
  }).rules.length;

describe("Chromium's settings rules when the user's rules do not fit", () => {
  it('still write the sites switched off and on again, and say the rules did not fit', async () => {
    const user = [bigUserRuleset()];
    const withUser = ruleCount(['off.test'], user);
    const without = ruleCount(['off.test'], []);
    expect(withUser).toBeGreaterThan(without + 10);
    // Room for the site entries and the mode, not for the user's rules (the library took it).
    const stores = new RuleStores();
    const writer = new RuleWriter(stores, { ...RUNTIME_LIMITS, dynamicRules: without + 5 });
    const offRules = () =>
      stores.dynamic.filter(
        (r) =>
          r.action.type.startsWith('allow') && r.condition.requestDomains?.includes('off.test'),
      );
    await syncSettingsRules(writer, snapshot([], []), 'ext');
    expect(offRules()).toEqual([]);
    // The user switches off.test off with the big rules on: refused as too many, yet enforced.
    await expect(syncSettingsRules(writer, snapshot(['off.test'], user), 'ext')).rejects.toThrow(
      DnrBudgetError,
    );
    expect(offRules().length).toBeGreaterThan(0);
    // And back on: nothing keeps it on HTTP.
    await expect(syncSettingsRules(writer, snapshot([], user), 'ext')).rejects.toThrow(
      DnrBudgetError,
    );
    expect(offRules()).toEqual([]);
  });
});
