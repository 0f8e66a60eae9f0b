import { describe, expect, it } from 'vitest';
import { migrate } from '../src/settings/migrations.js';
import { repairSettings } from '../src/settings/repair.js';
import { defaultSettings, SCHEMA_VERSION } from '../src/settings/schema.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { SettingsStore } from '../src/settings/store.js';
import { simpleRuleXml } from '../src/settings/user-rules.js';

const rule = (host: string) => ({
  name: `User rule: ${host}`,
  xml: simpleRuleXml({ host, from: `^http://${host}/`, to: `https://${host}/` }),
});

describe('settings store', () => {
  it('returns defaults for empty storage and stamps the schema version', async () => {
    const area = new MemoryStorageArea();
    const s = await new SettingsStore(area).load();
    expect(s).toEqual(defaultSettings());
    expect(area.data.get('schemaVersion')).toBe(SCHEMA_VERSION);
  });

  it('keeps the overrides the first background build wrote (version 0)', async () => {
    const area = new MemoryStorageArea();
    area.data.set('rulesetOverrides', { Example: false });
    const s = await new SettingsStore(area).load();
    expect(s.rulesetOverrides).toEqual({ Example: false });
    expect(area.data.get('rulesetOverrides')).toEqual({ Example: false });
  });

  it('migrates HTTPS Everywhere settings and converts its user rules', async () => {
    const area = new MemoryStorageArea();
    area.data.set('ruleActiveStates', { A: 'true', B: false });
    area.data.set('disabledList', ['Example.com.', 'bad host']);
    area.data.set('httpNowhere', true);
    area.data.set('enableMixedRulesets', true);
    area.data.set('userRules', [
      { host: 'a.test', urlMatcher: '^http://a\\.test/', redirectTo: 'https://a.test/' },
      {
        name: 'b.test',
        target: ['b.test'],
        rule: [{ from: '^http:', to: 'https:' }],
        default_off: 'user rule',
      },
      42,
    ]);
    const s = await new SettingsStore(area).load();
    expect(s.rulesetOverrides).toEqual({ A: true, B: false });
    expect(s.disabledSites).toEqual(['example.com']);
    expect(s.httpsFirst).toBe(true);
    expect(s.mixedContent).toBe(true);
    expect(s.userRules.map((r) => r.name)).toEqual(['User rule: a.test', 'User rule: b.test']);
    expect(s.userRules[0]?.xml).toContain('from="^http://a\\.test/"');
    // Legacy keys are gone; what could not be converted is on record, not dropped silently.
    expect(area.data.has('ruleActiveStates')).toBe(false);
    expect(area.data.has('disabledList')).toBe(false);
    const problems = s.repairs.map((r) => `${r.key}: ${r.original}`);
    expect(problems).toContain('userRules: 42');
    expect(problems).toContain('disabledSites: "bad host"');
    expect((area.data.get('repairs') as unknown[]).length).toBe(2);
  });

  it('repairs corrupt values item by item and records what it removed', async () => {
    const area = new MemoryStorageArea();
    area.data.set('schemaVersion', 1);
    area.data.set('globalEnabled', 'yes please');
    area.data.set('rulesetOverrides', { Good: true, Bad: 7 });
    area.data.set('userRules', [rule('a.test'), { name: 'x' }, rule('a.test')]);
    area.data.set('stats', { upgrades: -3, fallbacks: 2 });
    const s = await new SettingsStore(area, { now: () => 1000 }).load();
    expect(s.globalEnabled).toBe(true);
    expect(s.rulesetOverrides).toEqual({ Good: true });
    expect(s.userRules).toEqual([rule('a.test')]);
    expect(s.stats).toEqual({ upgrades: 0, fallbacks: 2, httpHosts: [] });
    expect(s.repairs.map((r) => r.key).sort()).toEqual([
      'globalEnabled',
      'rulesetOverrides',
      'stats',
      'userRules',
      'userRules',
    ]);
    expect(s.repairs.find((r) => r.key === 'globalEnabled')).toEqual({
      key: 'globalEnabled',
      problem: 'not a boolean',
      original: '"yes please"',
      at: 1000,
    });
    // Written back once; a second load finds nothing to repair.
    const again = await new SettingsStore(area).load();
    expect(again.repairs).toHaveLength(5);
    expect(area.data.get('globalEnabled')).toBe(true);
  });

  it('leaves a newer schema version alone instead of downgrading it', () => {
    const m = migrate({ schemaVersion: SCHEMA_VERSION + 5, httpsFirst: true });
    expect(m.values.schemaVersion).toBe(SCHEMA_VERSION + 5);
    expect(m.removed).toEqual([]);
  });

  it('serialises concurrent writers: two windows adding sites and rules lose nothing', async () => {
    const area = new MemoryStorageArea();
    const windowA = new SettingsStore(area);
    const windowB = new SettingsStore(area);
    const hosts = Array.from({ length: 20 }, (_, i) => `site${i}.test`);
    await Promise.all(
      hosts.flatMap((h, i) => [
        (i % 2 === 0 ? windowA : windowB).update((s) => ({
          disabledSites: [...s.disabledSites, h],
        })),
        (i % 2 === 0 ? windowB : windowA).update((s) => ({ userRules: [...s.userRules, rule(h)] })),
      ]),
    );
    const s = await new SettingsStore(area).load();
    expect(s.disabledSites).toEqual([...hosts].sort());
    expect(s.userRules.map((r) => r.name).sort()).toEqual(
      hosts.map((h) => `User rule: ${h}`).sort(),
    );
  });

  it('validates what an update produces like stored data', async () => {
    const area = new MemoryStorageArea();
    const store = new SettingsStore(area);
    const s = await store.update(() => ({ disabledSites: ['ok.test', '', '*.Wild.Test'] }));
    expect(s.disabledSites).toEqual(['*.wild.test', 'ok.test']);
    expect(s.repairs).toHaveLength(1);
  });

  it('does not write when nothing changed', async () => {
    const area = new MemoryStorageArea();
    const store = new SettingsStore(area);
    await store.load();
    const before = area.writes;
    await store.update((s) => ({ httpsFirst: s.httpsFirst }));
    expect(area.writes).toBe(before);
  });

  it('repairSettings reports only keys that need writing', () => {
    const r = repairSettings({ schemaVersion: SCHEMA_VERSION, httpsFirst: true });
    expect(r.changed).toEqual([]);
    expect(r.settings.httpsFirst).toBe(true);
  });
});
