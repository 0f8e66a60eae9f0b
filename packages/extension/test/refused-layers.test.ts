import { createEngine, type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import type { ProtectionSnapshot } from '../src/decision/snapshot.js';
import { DnrBudgetError, RuleWriter } from '../src/dnr/rule-writer.js';
import { RUNTIME_LIMITS } from '../src/dnr/rules.js';
import { syncOverrides } from '../src/dnr/override-rules.js';
import { syncSettingsRules, uiDnrRules } from '../src/dnr/settings-rules.js';
import { SettingsController } from '../src/routing/settings-controller.js';
import { SettingsStore } from '../src/settings/store.js';
import { TabActivity } from '../src/status/tab-activity.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { RuleStores } from './support/rule-stores.js';

/** A user ruleset of many hosts, each with its own rule: many DNR rules. */
function bigUserRuleset(): Ruleset {
  const hosts = Array.from({ length: 40 }, (_, i) => `h${i}.user.test`);
  const xml = `<ruleset name="Mine">${hosts.map((h) => `<target host="${h}"/>`).join('')}${hosts
    .map((h) => `<rule from="^http://${h.replace(/\./g, '\\.')}/" to="https://www.${h}/"/>`)
    .join('')}</ruleset>`;
  return parseRulesetXml(xml, 'mine.xml').ruleset as Ruleset;
}

function snapshot(
  disabledSites: string[],
  user: Ruleset[],
  inTabs: ReadonlyMap<number, ReadonlySet<string>> = new Map(),
  globalEnabled = true,
): ProtectionSnapshot {
  const none = { matchUrl: () => null, matchHost: () => null };
  return {
    globalEnabled,
    httpsFirst: true,
    disabled: none,
    httpAllowed: none,
    httpOnce: new Set(),
    httpOnceInTabs: inTabs,
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

  it('turn the global switch back on even when the sites do not fit either', async () => {
    const user = [bigUserRuleset()];
    // Site entries share a rule per label count: ten counts, ten rules.
    const sites = Array.from({ length: 10 }, (_, i) => `off${'.x'.repeat(i)}.test`);
    const stores = new RuleStores();
    // Room for the mode's own rules and a host opened over HTTP, neither for the ten sites'
    // entries nor for the user's rules.
    const writer = new RuleWriter(stores, {
      ...RUNTIME_LIMITS,
      dynamicRules: ruleCount([], []) + 2,
    });
    await syncSettingsRules(writer, snapshot(sites, user, new Map(), false), 'ext');
    const allowsAll = () =>
      stores.dynamic.some((r) => r.action.type === 'allow' && r.priority >= 2_000_000);
    expect(allowsAll()).toBe(true);
    // Back on: refused whole and without the user's rules, written without the sites; a host
    // opened over HTTP this session stays so (else the fallback page would lead to itself).
    const once = { ...snapshot(sites, user), httpOnce: new Set(['once.test']) };
    await expect(syncSettingsRules(writer, once, 'ext')).rejects.toThrow(
      /written without the sites' entries/,
    );
    expect(allowsAll()).toBe(false);
    expect(
      stores.dynamic.some(
        (r) => r.action.type === 'allow' && r.condition.requestDomains?.includes('once.test'),
      ),
    ).toBe(true);
    expect(stores.dynamic.some((r) => r.action.type === 'upgradeScheme' && r.priority === 1)).toBe(
      true,
    );
  });

  it("end a tab's open-over-HTTP even when the settings layer is refused", async () => {
    const stores = new RuleStores();
    const user = [bigUserRuleset()];
    const writer = new RuleWriter(stores, {
      ...RUNTIME_LIMITS,
      dynamicRules: ruleCount([], []) + 5,
    });
    await syncSettingsRules(
      writer,
      snapshot([], [], new Map([[4, new Set(['once.test'])]])),
      'ext',
    );
    expect(stores.session.length).toBeGreaterThan(0);
    await expect(syncSettingsRules(writer, snapshot([], user), 'ext')).rejects.toThrow(
      DnrBudgetError,
    );
    expect(stores.session).toEqual([]);
  });

  it('leave the pages working at a start where the user rules do not fit', async () => {
    const stores = new RuleStores();
    const writer = new RuleWriter(stores, {
      ...RUNTIME_LIMITS,
      dynamicRules: ruleCount(['off.test'], []) + 5,
    });
    const area = new MemoryStorageArea();
    const rs = bigUserRuleset();
    const xml = `<ruleset name="Mine">${rs.targets.map((t) => `<target host="${t.host}"/>`).join('')}${rs.rules
      .map((r) => `<rule from="${r.from.replace(/"/g, '&quot;')}" to="${r.to}"/>`)
      .join('')}</ruleset>`;
    await area.set({ userRules: [{ name: 'Mine', xml }], disabledSites: ['off.test'] });
    const c = new SettingsController(createEngine([]), new SettingsStore(area), new TabActivity(), {
      overridesApplied: async () => undefined,
      policyChanged: async (ctl) => syncSettingsRules(writer, ctl.snapshot, 'ext'),
    });
    await c.start();
    expect(c.userRulesets.map((r) => r.name)).toEqual(['Mine']);
    expect(stores.dynamic.some((r) => r.condition.requestDomains?.includes('off.test'))).toBe(true);
  });
});

describe("Chromium's overrides when the switched rulesets do not fit", () => {
  const PAGE = 'chrome-extension://ext/handoff.html';
  const xml = (name: string, hosts: string[], off = false) =>
    `<ruleset name="${name}"${off ? ' default_off="test"' : ''}>${hosts
      .map((h) => `<target host="${h}"/>`)
      .join('')}${hosts
      .map((h) => `<rule from="^http://${h.replace(/\./g, '\\.')}/" to="https://www.${h}/"/>`)
      .join('')}</ruleset>`;
  const rulesets = [
    xml('Small', ['a.test']),
    xml(
      'Big',
      Array.from({ length: 40 }, (_, i) => `b${i}.test`),
      true,
    ),
  ].map((x) => parseRulesetXml(x, 'r.xml').ruleset as Ruleset);

  it('never keep a ruleset switched back on shadowed; page loads go to the rulesets', async () => {
    const engine = createEngine(rulesets);
    const stores = new RuleStores();
    const writer = new RuleWriter(stores, { ...RUNTIME_LIMITS, dynamicRules: 20 });
    const shadows = () =>
      stores.dynamic.filter(
        (r) => r.action.type === 'allow' && r.condition.requestDomains?.includes('a.test'),
      );
    const handedOff = (host: string) =>
      stores.dynamic.some(
        (r) =>
          r.action.type === 'redirect' &&
          r.condition.resourceTypes?.join() === 'main_frame' &&
          r.condition.requestDomains?.includes(host),
      );
    engine.setActive('Small', false);
    await syncOverrides(writer, engine, PAGE);
    expect(shadows().length).toBeGreaterThan(0);
    // Small back on, and Big (40 rules) on too: more than the rules Chromium leaves.
    engine.setActive('Small', true);
    engine.setActive('Big', true);
    await expect(syncOverrides(writer, engine, PAGE)).rejects.toThrow(
      /written without the switched rulesets' rules/,
    );
    expect(shadows()).toEqual([]);
    // Small is as shipped again (the static rules apply); Big's page loads ask the rulesets.
    expect(handedOff('a.test')).toBe(false);
    expect(handedOff('b7.test')).toBe(true);
    expect(stores.dynamic.length).toBeLessThanOrEqual(20);
  });
});
