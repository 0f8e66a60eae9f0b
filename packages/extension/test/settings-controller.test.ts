import { createEngine, type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import { TabActivity } from '../src/status/tab-activity.js';
import { SettingsController } from '../src/routing/settings-controller.js';
import type {
  ImportApplyResult,
  ImportResult,
  PopupState,
  RulesetIndex,
  SaveResult,
} from '../src/protocol/ui-protocol.js';
import type { Settings } from '../src/settings/schema.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { SettingsStore } from '../src/settings/store.js';
import { simpleRuleXml } from '../src/settings/user-rules.js';

const XML = [
  '<ruleset name="Stable"><target host="stable.test"/><rule from="^http:" to="https:"/></ruleset>',
  '<ruleset name="Experimental" default_off="breaks login"><target host="exp.test"/><rule from="^http:" to="https:"/></ruleset>',
  '<ruleset name="Mixed" platform="mixedcontent"><target host="mixed.test"/><rule from="^http:" to="https:"/></ruleset>',
];

async function setup() {
  const rulesets = XML.map((x, i) => parseRulesetXml(x, `${i}.xml`).ruleset as Ruleset);
  const engine = createEngine(rulesets);
  const area = new MemoryStorageArea();
  const activity = new TabActivity();
  const calls: string[] = [];
  const c = new SettingsController(engine, new SettingsStore(area), activity, {
    overridesApplied: async () => void calls.push('overrides'),
    policyChanged: async () => void calls.push('policy'),
  });
  await c.start();
  return { c, engine, area, activity, calls };
}

describe('UI controller', () => {
  it('stores only overrides that differ from the default, and applies them to the engine', async () => {
    const { c, engine, area, calls } = await setup();
    const id = engine.rulesetIdsByName('Stable')[0] as number;
    await c.handle({ type: 'setRuleset', name: 'Stable', active: false });
    expect(engine.isActive(id)).toBe(false);
    expect(area.data.get('rulesetOverrides')).toEqual({ Stable: false });
    expect(calls).toContain('overrides');
    await c.handle({ type: 'setRuleset', name: 'Stable', active: true });
    expect(area.data.get('rulesetOverrides')).toEqual({});
    expect(engine.isActive(id)).toBe(true);
    await c.handle({ type: 'setRuleset', name: 'Experimental', active: true });
    await c.handle({ type: 'resetRulesets' });
    expect(engine.isActive(engine.rulesetIdsByName('Experimental')[0] as number)).toBe(false);
    expect(await c.handle({ type: 'setRuleset', name: 'Nope', active: true })).toEqual({
      error: 'no ruleset named Nope',
    });
  });

  it('mixed-content toggle switches platform rulesets on', async () => {
    const { c, engine } = await setup();
    const id = engine.rulesetIdsByName('Mixed')[0] as number;
    expect(engine.isActive(id)).toBe(false);
    await c.handle({ type: 'setFlag', flag: 'mixedContent', value: true });
    expect(engine.isActive(id)).toBe(true);
  });

  it('builds the popup from the tab activity: groups, site state, counts', async () => {
    const { c, activity } = await setup();
    activity.note({
      tabId: 3,
      type: 'main_frame',
      url: 'http://stable.test:8080/',
      rulesets: ['Stable'],
      upgraded: true,
    });
    activity.note({
      tabId: 3,
      type: 'image',
      url: 'http://exp.test/x.png',
      rulesets: ['Experimental'],
      upgraded: false,
    });
    let state = (await c.handle({ type: 'popup', tabId: 3 })) as PopupState;
    expect(state.site?.hostWithPort).toBe('stable.test:8080');
    expect(state.upgraded).toBe(1);
    expect(state.rulesets.map((r) => [r.name, r.active, r.defaultActive, r.note])).toEqual([
      ['Stable', true, true, null],
      ['Experimental', false, false, 'breaks login'],
    ]);
    await c.handle({ type: 'siteAdd', list: 'disabledSites', entry: '*.test' });
    expect(await c.handle({ type: 'siteAdd', list: 'disabledSites', entry: 'no way' })).toEqual({
      error: 'invalid-site',
    });
    await c.handle({ type: 'siteAdd', list: 'disabledSites', entry: 'stable.test:8080' });
    state = (await c.handle({ type: 'popup', tabId: 3 })) as PopupState;
    expect(state.site?.disabledBy).toBe('stable.test:8080');
    await c.handle({ type: 'siteRemove', list: 'disabledSites', entry: 'stable.test:8080' });
    state = (await c.handle({ type: 'popup', tabId: 3 })) as PopupState;
    expect(state.site?.disabledBy).toBeNull();
  });

  it('validates user rules with the check messages and applies saved ones first', async () => {
    const { c } = await setup();
    const bad = (await c.handle({
      type: 'userRuleSave',
      xml: simpleRuleXml({ host: 'stable.test', from: '^http://(stable', to: 'https://x/' }),
    })) as SaveResult;
    expect(bad.ok).toBe(false);
    expect(bad.errors.length).toBeGreaterThan(0);
    const notXml = (await c.handle({
      type: 'userRuleSave',
      xml: '<ruleset name="x">',
    })) as SaveResult;
    expect(notXml.ok).toBe(false);
    const good = (await c.handle({
      type: 'userRuleSave',
      xml: simpleRuleXml({
        host: 'stable.test',
        from: '^http://stable\\.test/',
        to: 'https://secure.stable.test/',
      }),
    })) as SaveResult;
    expect(good.ok).toBe(true);
    expect(c.rewrite('http://stable.test/a').rewritten).toBe('https://secure.stable.test/a');
    expect(c.rulesetNamesForHost('stable.test')).toEqual(['User rule: stable.test', 'Stable']);
    const index = (await c.handle({ type: 'rulesetIndex' })) as RulesetIndex;
    expect(index.names).toEqual(['User rule: stable.test', 'Stable', 'Experimental', 'Mixed']);
    expect(index.notes).toEqual([null, null, 'breaks login', 'platform: mixedcontent']);
    expect(index.user).toEqual([true, false, false, false]);
    expect(await c.handle({ type: 'rulesetHosts' })).toEqual({
      'User rule: stable.test': 'stable.test',
      Stable: 'stable.test',
      Experimental: 'exp.test',
      Mixed: 'mixed.test',
    });
    await c.handle({ type: 'userRuleRemove', name: 'User rule: stable.test' });
    expect(c.rewrite('http://stable.test/a').rewritten).toBe('https://stable.test/a');
  });

  it('imports user rules from a ruleset library and reports the broken ones', async () => {
    const { c } = await setup();
    const xml = `<rulesetlibrary>${simpleRuleXml({ host: 'a.test', from: '^http:', to: 'https:' })}<ruleset name="broken"><rule from="^http:" to="https:"/></ruleset>${simpleRuleXml({ host: 'b.test', from: '^http:', to: 'https:' })}</rulesetlibrary>`;
    const r = (await c.handle({ type: 'userRulesImport', xml })) as ImportResult;
    expect(r.added).toBe(2);
    expect(r.ok).toBe(false);
    expect(r.problems).toHaveLength(1);
    expect(c.settings.userRules.map((u) => u.name)).toEqual([
      'User rule: a.test',
      'User rule: b.test',
    ]);
  });

  it('exports all settings as one JSON document and imports it elsewhere', async () => {
    const one = await setup();
    await one.c.handle({ type: 'setFlag', flag: 'httpsFirst', value: true });
    await one.c.handle({ type: 'siteAdd', list: 'httpAllowedSites', entry: 'old.test' });
    await one.c.handle({ type: 'setRuleset', name: 'Experimental', active: true });
    await one.c.handle({
      type: 'userRuleSave',
      xml: simpleRuleXml({ host: 'a.test', from: '^http:', to: 'https:' }),
    });
    const exported = JSON.parse(JSON.stringify(await one.c.handle({ type: 'exportSettings' })));
    expect(exported.format).toBe('httpsify-settings');
    const two = await setup();
    const r = (await two.c.handle({
      type: 'importApply',
      text: JSON.stringify(exported),
      confirmedChannels: [],
      confirmedUserRules: ['User rule: a.test'],
    })) as ImportApplyResult;
    expect(r.ok).toBe(true);
    const s = two.c.settings as Settings;
    expect(s.httpsFirst).toBe(true);
    expect(s.httpAllowedSites).toEqual(['old.test']);
    expect(s.rulesetOverrides).toEqual({ Experimental: true });
    expect(s.userRules.map((u) => u.name)).toEqual(['User rule: a.test']);
    expect(two.engine.isActive(two.engine.rulesetIdsByName('Experimental')[0] as number)).toBe(
      true,
    );
    const wrong = (await two.c.handle({
      type: 'importApply',
      text: '{"hello":1}',
      confirmedChannels: [],
    })) as ImportApplyResult;
    expect(wrong).toEqual({
      ok: false,
      problems: [
        'not an httpsify settings file ("format" is missing, expected "httpsify-settings")',
      ],
    });
    // One bad entry refuses the whole file (it used to apply the rest).
    const partlyBad = (await two.c.handle({
      type: 'importApply',
      text: JSON.stringify({
        format: 'httpsify-settings',
        schemaVersion: 1,
        settings: { disabledSites: ['ok.test', 'b a d'] },
      }),
      confirmedChannels: [],
    })) as ImportApplyResult;
    expect(partlyBad.ok).toBe(false);
    expect(two.c.settings.disabledSites).toEqual([]);
  });

  it('lets cookies be secured only while httpsify is on and the site is not disabled', async () => {
    const { c } = await setup();
    expect(c.cookiesMaySecure('stable.test')).toBe(true);
    await c.handle({ type: 'siteAdd', list: 'disabledSites', entry: '*.stable.test' });
    expect(c.cookiesMaySecure('www.stable.test')).toBe(false);
    expect(c.cookiesMaySecure('stable.test')).toBe(true);
    await c.handle({ type: 'setFlag', flag: 'globalEnabled', value: false });
    expect(c.cookiesMaySecure('stable.test')).toBe(false);
  });
});
