import { createEngine, type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import { decide } from '../src/decision/decide.js';
import { snapshotState } from '../src/decision/snapshot.js';
import { SettingsController } from '../src/routing/settings-controller.js';
import type { UiRequest } from '../src/protocol/ui-protocol.js';
import { SettingsStore } from '../src/settings/store.js';
import { simpleRuleXml } from '../src/settings/user-rules.js';
import { TabActivity } from '../src/status/tab-activity.js';
import { MemoryStorageArea } from './support/memory-storage.js';

/**
 * After every state change, the ProtectionSnapshot (what decide() and Chromium's settings rules
 * read) says what the settings and session state say: through the ordinary switches, when a
 * platform hook fails part-way through applying a change, and when "open over HTTP" is clicked
 * while a settings change waits its turn (the last two found by an attack).
 */
const XML =
  '<ruleset name="Stable"><target host="stable.test"/><rule from="^http:" to="https:"/></ruleset>';

async function setup(failOverrides: () => boolean = () => false) {
  const engine = createEngine([parseRulesetXml(XML, 'a.xml').ruleset as Ruleset]);
  const area = new MemoryStorageArea();
  const store = new SettingsStore(area);
  const c = new SettingsController(engine, store, new TabActivity(), {
    overridesApplied: async () => {
      if (failOverrides()) throw new Error('MAX_NUMBER_OF_REGEX_RULES exceeded');
    },
    policyChanged: async () => undefined,
  });
  await c.start();
  return { c, area, store };
}

/** The snapshot agrees with the controller's settings and session state. */
function agrees(c: SettingsController): void {
  const s = c.settings;
  const snap = c.snapshot;
  expect(snap.globalEnabled).toBe(s.globalEnabled);
  expect(snap.httpsFirst).toBe(s.httpsFirst);
  expect([...snap.dnr.disabledSites]).toEqual(s.disabledSites);
  expect([...snap.dnr.httpAllowedSites]).toEqual(s.httpAllowedSites);
  expect([...snap.httpOnce].sort()).toEqual([...c.httpOnce].sort());
  const tabs = [...snap.httpOnceInTabs].flatMap(([t, hs]) => [...hs].map((h) => [t, h]));
  expect(tabs).toEqual(c.httpOnceTabs);
  for (const e of s.disabledSites) expect(snap.disabled.matchUrl(`http://${e}/`)).toBe(e);
  const active = s.userRules.map((r) => r.name).filter((n) => s.rulesetOverrides[n] !== false);
  expect(snap.dnr.activeUserRulesets.map((r) => r.name)).toEqual(active);
}

const ask = (c: SettingsController, req: UiRequest) => c.handle(req);

describe('the snapshot follows every state change', () => {
  it('through the ordinary switches', async () => {
    const { c, area, store } = await setup();
    agrees(c);
    const steps: [string, () => Promise<unknown>][] = [
      ['https-first off', () => ask(c, { type: 'setFlag', flag: 'httpsFirst', value: false })],
      ['https-first on', () => ask(c, { type: 'setFlag', flag: 'httpsFirst', value: true })],
      ['global off', () => ask(c, { type: 'setFlag', flag: 'globalEnabled', value: false })],
      ['global on', () => ask(c, { type: 'setFlag', flag: 'globalEnabled', value: true })],
      ['site off', () => ask(c, { type: 'siteAdd', list: 'disabledSites', entry: 'off.test' })],
      [
        'rulesets only',
        () => ask(c, { type: 'siteAdd', list: 'httpAllowedSites', entry: 'ro.test' }),
      ],
      ['site on', () => ask(c, { type: 'siteRemove', list: 'disabledSites', entry: 'off.test' })],
      ['http once', () => ask(c, { type: 'httpOnce', url: 'http://once.test/' })],
      ['http once tab', () => ask(c, { type: 'httpOnce', url: 'http://t.test/', tabId: 5 })],
      ['tab closed', () => c.tabClosed(5)],
      [
        'user rule',
        () =>
          ask(c, {
            type: 'userRuleSave',
            xml: simpleRuleXml({ host: 'u.test', from: '^http:', to: 'https:' }, 'U'),
          }),
      ],
      ['user rule off', () => ask(c, { type: 'setRuleset', name: 'U', active: false })],
      ['user rule on', () => ask(c, { type: 'setRuleset', name: 'U', active: null })],
      ['default ruleset off', () => ask(c, { type: 'setRuleset', name: 'Stable', active: false })],
      [
        'another window',
        async () => {
          await area.set({ disabledSites: ['w.test'], httpsFirst: false });
          await c.reconcile(await store.load());
        },
      ],
    ];
    for (const [name, step] of steps) {
      const r = await step();
      expect((r as { error?: unknown } | undefined)?.error, name).toBeUndefined();
      agrees(c);
    }
  });

  it('when a platform hook fails while a change is applied', async () => {
    let fail = false;
    const { c } = await setup(() => fail);
    // The user switches a ruleset and a site in one step (an import does both); the browser
    // refuses the ruleset's rules (a DNR limit), so the change reports an error.
    fail = true;
    await c
      .update(() => ({ rulesetOverrides: { Stable: false }, disabledSites: ['stable.test'] }))
      .catch(() => undefined);
    fail = false;
    // The popup (settings) says the site is off; what is enforced must say so too.
    expect(c.siteDisabledBy('http://stable.test/')).toBe('stable.test');
    const d = decide({
      url: 'http://stable.test/',
      kind: 'navigation',
      tab: { tabId: 1 },
      state: snapshotState(c.snapshot),
    });
    expect(d.reason).toBe('site-off');
  });

  it('when "open over HTTP" is clicked while a stored change waits, not putting back older settings', async () => {
    const area = new MemoryStorageArea();
    await area.set({ httpAllowedSites: ['ro.test'] });
    let gate: (() => void) | null = null;
    let blocking = false;
    const c = new SettingsController(createEngine([]), new SettingsStore(area), new TabActivity(), {
      overridesApplied: async () => undefined,
      policyChanged: async () => {
        if (blocking) await new Promise<void>((r) => (gate = r));
      },
    });
    await c.start();
    expect(c.snapshot.httpAllowed.matchUrl('http://ro.test/')).toBe('ro.test');
    // A slow apply is running (any earlier change; its DNR write is slow).
    blocking = true;
    const first = c.update(() => ({ showBadge: false }));
    await new Promise((r) => setTimeout(r, 10));
    blocking = false;
    // The user protects ro.test again (options page): stored, its apply queued behind.
    const protect = c.update((s) => ({
      httpAllowedSites: s.httpAllowedSites.filter((e) => e !== 'ro.test'),
    }));
    await new Promise((r) => setTimeout(r, 10));
    // Meanwhile "open over HTTP this time" for another host (a fallback page's button).
    const once = c.allowHttpOnce('other.test');
    (gate as unknown as () => void)();
    await Promise.all([first, protect, once]);
    expect(area.data.get('httpAllowedSites')).toEqual([]);
    expect(c.settings.httpAllowedSites).toEqual([]);
    expect(c.snapshot.httpAllowed.matchUrl('http://ro.test/')).toBe(null);
  });
});
