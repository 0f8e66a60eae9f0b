import { createEngine, type Ruleset } from '@httpsify/engine';
import { compileDnr } from '@httpsify/engine/dnr';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import { handoffScope, inHandoffScope } from '../src/dnr/handoff-rules.js';
import { decide } from '../src/decision/decide.js';
import { snapshotState } from '../src/decision/snapshot.js';
import { exclusionsMayBeMissed } from '../src/protection/protection-dnr.js';
import { SettingsController } from '../src/routing/settings-controller.js';
import { TabActivity } from '../src/status/tab-activity.js';
import { ProtectionRuntime } from '../src/protection/protection-runtime.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { SettingsStore } from '../src/settings/store.js';
import type { ImportResult } from '../src/protocol/ui-protocol.js';

/** The default ruleset knows /plain/ breaks over HTTPS; it rewrites only /ruled/ itself. */
const DEFAULTS = `<ruleset name="Kept Example"><target host="kept.test"/>
  <exclusion pattern="^http://kept\\.test/plain/"/>
  <rule from="^http://kept\\.test/ruled/" to="https://kept.test/ruled/"/></ruleset>`;
/** A user rule with an exclusion of its own on another host. */
const USER = `<ruleset name="Mine"><target host="mine.test"/>
  <exclusion pattern="^http://mine\\.test/old/"/>
  <rule from="^http://mine\\.test/new/" to="https://mine.test/new/"/></ruleset>`;

async function setup() {
  const engine = createEngine([parseRulesetXml(DEFAULTS, 'kept.xml').ruleset as Ruleset]);
  const c = new SettingsController(
    engine,
    new SettingsStore(new MemoryStorageArea()),
    new TabActivity(),
    {
      overridesApplied: async () => undefined,
      policyChanged: async () => undefined,
    },
  );
  await c.start();
  const r = (await c.handle({ type: 'userRulesImport', xml: USER })) as ImportResult;
  expect(r.added).toBe(1);
  const stored = new MemoryStorageArea();
  const storage = {
    get: (keys: string | string[]) => stored.get(typeof keys === 'string' ? [keys] : keys),
    set: (items: Record<string, unknown>) => stored.set(items),
  };
  const rt = new ProtectionRuntime({ storage });
  for (const host of ['kept.test', 'mine.test', 'plain.test'])
    rt.learn({ url: `https://${host}/`, tabId: 1, type: 'main_frame', statusCode: 200 }, undefined);
  return { c, rt, engine };
}

/**
 * The protection mode (on by default) and a ruleset's exclusions, as both browsers decide: a URL
 * a ruleset excludes stays on HTTP, for navigations and for a known HTTPS host's subresources.
 */
describe('protection mode leaves URLs a ruleset excludes on HTTP', () => {
  it('navigations: the mode upgrades other paths of the host, not the excluded ones', async () => {
    const { c } = await setup();
    const navigation = (url: string) =>
      decide({ url, kind: 'navigation', tab: { tabId: 1 }, state: snapshotState(c.snapshot) })
        .reason === 'https-first';
    expect(c.settings.httpsFirst).toBe(true);
    expect(navigation('http://kept.test/plain/page?q=1')).toBe(false);
    expect(navigation('http://kept.test/other')).toBe(true);
    // The ruleset's own rewrite decides /ruled/ (the mode steps back for it too).
    expect(navigation('http://kept.test/ruled/a')).toBe(false);
    expect(c.rewrite('http://kept.test/ruled/a').rewritten).toBe('https://kept.test/ruled/a');
    // User rules are a layer the engine consults as well.
    expect(navigation('http://mine.test/old/x')).toBe(false);
    expect(navigation('http://mine.test/other')).toBe(true);
    expect(c.excludedBy('http://mine.test/old/x')).toBe('Mine');
    // A ruleset switched off excludes nothing.
    await c.handle({ type: 'setRuleset', name: 'Kept Example', active: false });
    expect(navigation('http://kept.test/plain/page')).toBe(true);
  });

  it('subresources of known HTTPS hosts: excluded URLs are left alone, the rest upgraded', async () => {
    const { c, rt } = await setup();
    const sub = (url: string) => {
      const d = decide({
        url,
        kind: 'subresource',
        tab: { tabId: 1, topUrl: 'http://page.test/' },
        state: snapshotState(c.snapshot, (h) => rt.known.has(h, Date.now())),
      });
      return d.action === 'upgrade' ? d.url : null;
    };
    expect(sub('http://kept.test/plain/pixel.png')).toBeNull();
    expect(sub('http://kept.test/other/pixel.png')).toBe('https://kept.test/other/pixel.png');
    expect(sub('http://kept.test/ruled/pixel.png')).toBe('https://kept.test/ruled/pixel.png');
    expect(sub('http://mine.test/old/a.js')).toBeNull();
    expect(sub('http://mine.test/a.js')).toBe('https://mine.test/a.js');
    // A host no ruleset covers: the known host's upgrade as before.
    expect(sub('http://plain.test/plain/x')).toBe('https://plain.test/plain/x');
  });
});

describe('Chromium: no known-host rule where DNR may miss an exclusion', () => {
  const xml = [
    // DNR cannot express the lookbehind: the ruleset is incomplete, its hosts go to the handoff page.
    '<ruleset name="Lookbehind"><target host="lb.test"/><target host="*.lb.test"/><exclusion pattern="^http://lb\\.test/keep/"/><rule from="^http://lb\\.test(?&lt;!x)/old/" to="https://lb.test/new/"/><rule from="^http:" to="https:"/></ruleset>',
    // Incomplete too, but without exclusions: nothing to miss.
    '<ruleset name="No Exclusions"><target host="nx.test"/><rule from="^http://nx\\.test(?&lt;!x)/old/" to="https://nx.test/new/"/><rule from="^http:" to="https:"/></ruleset>',
    // Complete: its exclusion is a DNR allow above the mode's rules.
    '<ruleset name="Complete"><target host="ok.test"/><exclusion pattern="^http://ok\\.test/keep/"/><rule from="^http:" to="https:"/></ruleset>',
    '<ruleset name="Wild"><target host="www.wild.*"/><exclusion pattern="^http://www\\.wild\\.test/keep/"/><rule from="^http://www\\.wild\\.test(?&lt;!x)/" to="https://www.wild.test/"/></ruleset>',
  ];
  const rulesets = xml.map((x, i) => parseRulesetXml(x, `${i}.xml`).ruleset as Ruleset);
  const scope = handoffScope(rulesets, compileDnr(rulesets).report.omissions);
  const engine = createEngine(rulesets);

  it('reads the scope as the build writes it: domains with their subdomains, wildcard patterns label by label', () => {
    expect(scope).toEqual({ domains: ['lb.test', 'nx.test'], patterns: ['www.wild.*'] });
    expect(inHandoffScope(scope, 'a.lb.test')).toBe(true);
    expect(inHandoffScope(scope, 'www.wild.test')).toBe(true);
    expect(inHandoffScope(scope, 'www.wild.co.uk')).toBe(false);
    expect(inHandoffScope(scope, 'ok.test')).toBe(false);
  });

  it('leaves out exactly the hosts an incomplete ruleset with exclusions covers', async () => {
    const keepOut = (h: string) => exclusionsMayBeMissed(engine, scope, h);
    expect(
      ['lb.test', 'a.lb.test', 'nx.test', 'ok.test', 'www.wild.test', 'free.test'].filter(keepOut),
    ).toEqual(['lb.test', 'a.lb.test', 'www.wild.test']);
    // A ruleset switched off does not count.
    engine.setActive('Lookbehind', false);
    expect(keepOut('lb.test')).toBe(false);
    engine.setActive('Lookbehind', undefined);
    const rt = new ProtectionRuntime({
      storage: { get: async () => ({}), set: async () => undefined },
      dnrKeepOut: keepOut,
    });
    for (const host of ['lb.test', 'nx.test', 'ok.test', 'free.test'])
      rt.learn(
        { url: `https://${host}/`, tabId: 1, type: 'main_frame', statusCode: 200 },
        undefined,
      );
    const { c } = await setup();
    expect(rt.rules(c.snapshot)?.flatMap((r) => r.condition.requestDomains ?? [])).toEqual([
      'free.test',
      'nx.test',
      'ok.test',
    ]);
  });

  it('writes no known-host rule until what to leave out is known (a start wrote each twice)', async () => {
    let scopeRead = false;
    const written: string[][] = [];
    const rt = new ProtectionRuntime({
      storage: { get: async () => ({}), set: async () => undefined },
      writeRules: async (rules) =>
        void written.push(rules.flatMap((r) => r.condition.requestDomains ?? [])),
      dnrKeepOut: (h) => (scopeRead ? exclusionsMayBeMissed(engine, scope, h) : null),
    });
    for (const host of ['lb.test', 'free.test'])
      rt.learn(
        { url: `https://${host}/`, tabId: 1, type: 'main_frame', statusCode: 200 },
        undefined,
      );
    const { c } = await setup();
    await rt.viewChanged(c.snapshot);
    expect(written).toEqual([]);
    scopeRead = true;
    await rt.syncRules();
    expect(written).toEqual([['free.test']]);
  });
});
