import { compileBundle, createEngine, loadBundle, type Ruleset } from '@httpsify/engine';
import { channelBinding, type ChannelRecord } from '@httpsify/engine/channels';
import { describe, expect, it } from 'vitest';
import { LoopGuard } from '../src/https-first/loop-guard.js';
import { TabActivity } from '../src/status/tab-activity.js';
import { type ChannelHooks, SettingsController } from '../src/routing/settings-controller.js';
import type {
  ChannelAddResult,
  ImportApplyResult,
  RulesetIndex,
} from '../src/protocol/ui-protocol.js';
import { bundledDecision, type Rewriter } from '../src/rewriter/webrequest-upgrader.js';
import {
  applyRulesetChoices,
  buildChannelLayers,
  layersSecureCookie,
} from '../src/channels/channel-layers.js';
import type { Settings } from '../src/settings/schema.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { SettingsStore } from '../src/settings/store.js';
import { rulesetsOf } from './support/channels.js';

/** What the blocking listener answers before the settings are read: decide() over the bundle. */
function upgradeDecision(
  rewriter: Rewriter,
  guard: LoopGuard,
  d: { url: string; type: string; tabId: number },
): { redirectUrl?: string } {
  const decision = bundledDecision(rewriter, guard, d);
  return decision.action === 'upgrade' ? { redirectUrl: decision.url } : {};
}

/** A 3072-bit odd modulus: passes the key checks (nothing here verifies a signature). */
const KEY = { kty: 'RSA', n: '_'.repeat(512), e: 'AQAB' };
const DEFAULTS = rulesetsOf(
  '<ruleset name="Example"><target host="example.org"/><target host="*.example.org"/><rule from="^http:" to="https:"/></ruleset>',
  '<ruleset name="Elsewhere"><target host="elsewhere.test"/><rule from="^http:" to="https:"/>' +
    '<securecookie host="^elsewhere\\.test$" name=".+"/></ruleset>',
);
/** The channel moves example.org to a new host, upgrades news.test and secures its cookies. */
const CHANNEL = rulesetsOf(
  '<ruleset name="Example"><target host="example.org"/><target host="*.example.org"/><rule from="^http://([^/]+)/" to="https://secure.example.org/$1/"/>' +
    '<securecookie host="^(.+\\.)?example\\.org$" name=".+"/></ruleset>',
  '<ruleset name="News"><target host="news.test"/><target host="news.example.org"/><rule from="^http:" to="https:"/><securecookie host="^news\\.test$" name=".+"/></ruleset>',
  '<ruleset name="Beta" default_off="testing"><target host="beta.example.org"/><rule from="^http://beta\\.example\\.org/" to="https://beta-secure.example.org/"/></ruleset>',
);

function record(
  name: string,
  rulesets: Ruleset[],
  timestamp: number,
  extra: Partial<ChannelRecord['channel']> = {},
): ChannelRecord {
  const bundle = compileBundle(rulesets, { timestamp });
  const channel = { ...DEFINITION, name, urlPrefix: 'https://c.test/', ...extra };
  return {
    channel,
    installed: {
      timestamp,
      bundle,
      rulesetCount: rulesets.length,
      installedAt: timestamp,
      keyVersion: 1,
      verifiedFor: channelBinding(channel),
    },
  };
}

/** A definition as stored in the settings (parsed, so without its "format"). */
const DEFINITION = {
  name: 'My channel',
  urlPrefix: 'https://rules.example.org/v1/',
  rootKey: KEY,
  scope: '^https?://([^/]*\\.)?example\\.org[:/]',
  destinations: [] as string[],
  minTimestamp: 0,
  maxAgeDays: 14,
  minKeyVersion: 1,
  replacesDefaults: false,
};
/** The same as pasted by a user: a `*.channel.json` file. */
const PASTED = { format: 2, ...DEFINITION };

describe('Firefox: channels layered over the defaults', () => {
  const defaults = createEngine(DEFAULTS);

  it('rewrites in-scope URLs with the channel and leaves out-of-scope URLs to the defaults', () => {
    const layers = buildChannelLayers([record('C', CHANNEL, 100)], defaults);
    const guard = new LoopGuard();
    const decide = (url: string) =>
      upgradeDecision(layers.scoped, guard, { url, type: 'main_frame', tabId: 1 }).redirectUrl ??
      null;
    expect(decide('http://example.org/a')).toBe('https://secure.example.org/example.org/a');
    expect(decide('http://www.example.org/')).toBe('https://secure.example.org/www.example.org/');
    // news.test is outside the scope: the channel's "News" ruleset is not consulted.
    expect(decide('http://news.test/')).toBeNull();
    expect(decide('http://elsewhere.test/')).toBe('https://elsewhere.test/');
    expect(layers.scoped.rewriteWithRuleset('http://example.org/').channel).toBe('C');
    expect(layers.scoped.rewriteWithRuleset('http://elsewhere.test/').channel).toBeNull();
  });

  it('a replacing channel drops the defaults, unless its bundle is older than them', () => {
    const replacing = buildChannelLayers(
      [record('R', CHANNEL, 100, { replacesDefaults: true })],
      defaults,
      50,
    );
    expect(replacing.useDefaults).toBe(false);
    expect(replacing.scoped.rewrite('http://elsewhere.test/')).toBeNull();
    expect(replacing.scoped.rewrite('http://example.org/')).toBe(
      'https://secure.example.org/example.org/',
    );
    const outdated = buildChannelLayers(
      [record('R', CHANNEL, 100, { replacesDefaults: true })],
      defaults,
      200,
    );
    expect(outdated.useDefaults).toBe(true);
    expect(outdated.channels).toEqual([]);
    expect(outdated.scoped.rewrite('http://example.org/')).toBe('https://example.org/');
  });

  it('earlier channels win within their scopes; an everything-scope channel sees every URL', () => {
    const wide = record(
      'Wide',
      rulesetsOf(
        '<ruleset name="W"><target host="news.test"/><target host="example.org"/><rule from="^http:" to="https://wide."/></ruleset>',
      ),
      100,
      { scope: '' },
    );
    const layers = buildChannelLayers([record('C', CHANNEL, 100), wide], defaults);
    expect(layers.scoped.rewrite('http://example.org/')).toBe(
      'https://secure.example.org/example.org/',
    );
    expect(layers.scoped.rewrite('http://news.test/')).toBe('https://wide.//news.test/');
  });

  it('secure-cookie decisions respect scopes', () => {
    const layers = buildChannelLayers([record('C', CHANNEL, 100)], defaults);
    expect(layersSecureCookie(layers, { domain: '.www.example.org', name: 'sid' })).toBe(true);
    // The channel's News ruleset would secure news.test cookies, but news.test is out of scope.
    expect(layersSecureCookie(layers, { domain: 'news.test', name: 'sid' })).toBe(false);
    expect(layersSecureCookie(layers, { domain: 'elsewhere.test', name: 'sid' })).toBe(true);
    expect(
      layersSecureCookie(buildChannelLayers([], defaults), {
        domain: 'www.example.org',
        name: 'sid',
      }),
    ).toBe(false);
  });

  it('per-ruleset switches and the mixed-content flag apply to channel rulesets by name', () => {
    const layers = buildChannelLayers([record('C', CHANNEL, 100)], defaults);
    expect(layers.scoped.rewrite('http://beta.example.org/')).toBe(
      'https://secure.example.org/beta.example.org/',
    );
    applyRulesetChoices(layers, { Beta: true }, {}, false);
    expect(layers.scoped.rewrite('http://beta.example.org/')).toBe(
      'https://beta-secure.example.org/',
    );
    // Beta back to its default (off) and the channel's Example off: the channel yields nothing,
    // so the defaults (not switched here; the controller switches them itself) take the URL.
    applyRulesetChoices(layers, { Example: false }, { Beta: true }, false);
    expect(layers.channels[0]!.engine.rewrite('http://beta.example.org/')).toBeNull();
    expect(layers.scoped.rewriteWithRuleset('http://beta.example.org/')).toMatchObject({
      rewritten: 'https://beta.example.org/',
      channel: null,
    });
    applyRulesetChoices(layers, {}, { Example: false }, true);
    expect(layers.channels[0]!.engine.rewrite('http://beta.example.org/')).toBe(
      'https://secure.example.org/beta.example.org/',
    );
  });

  it('a damaged installed bundle is reported and skipped, never thrown at the request', () => {
    const broken = record('Broken', CHANNEL, 100);
    broken.installed!.bundle = broken.installed!.bundle.slice(0, 100);
    const layers = buildChannelLayers([broken, record('C', CHANNEL, 100)], defaults);
    expect(layers.problems.get('Broken')).toContain('does not load');
    expect(layers.channels.map((c) => c.name)).toEqual(['C']);
  });
});

/** The controller with a stand-in for the channel service. */
async function controllerWithChannels() {
  const engine = createEngine(DEFAULTS);
  const area = new MemoryStorageArea();
  const defs: Settings['channels'][] = [];
  const applied: number[] = [];
  const hooks: ChannelHooks = {
    defaultsTimestamp: 0,
    definitionsChanged: async (d) => void defs.push(d),
    status: () => [],
    checkNow: async () => undefined,
    layersApplied: async (c) => void applied.push(c.channels.channels.length),
    platformProblems: async () => ({ Nope: 'scope cannot be enforced' }),
  };
  const c = new SettingsController(engine, new SettingsStore(area), new TabActivity(), {
    overridesApplied: async () => undefined,
    policyChanged: async () => undefined,
    channels: hooks,
  });
  await c.start();
  return { c, area, defs, applied };
}

describe('channels in the settings and the controller', () => {
  it('adds a pasted definition, refusing bad JSON, bad definitions and duplicates with the reason', async () => {
    const { c, area, defs } = await controllerWithChannels();
    expect(
      ((await c.handle({ type: 'channelAdd', json: '{ nope' })) as ChannelAddResult & { ok: false })
        .error,
    ).toMatch(/^not JSON/);
    const http = (await c.handle({
      type: 'channelAdd',
      json: JSON.stringify({ ...PASTED, urlPrefix: 'http://x/' }),
    })) as ChannelAddResult & { ok: false };
    expect(http.error).toContain('"urlPrefix" must be an https: URL');
    const typo = (await c.handle({
      type: 'channelAdd',
      json: JSON.stringify({ ...PASTED, replaceDefaults: true }),
    })) as ChannelAddResult & { ok: false };
    expect(typo.error).toContain('unknown field "replaceDefaults"');
    expect(area.data.get('channels')).toBeUndefined();

    const old = (await c.handle({
      type: 'channelAdd',
      json: JSON.stringify({
        name: 'Old',
        urlPrefix: 'https://x.example/',
        publicKey: KEY,
        scope: '',
      }),
    })) as ChannelAddResult & { ok: false };
    expect(old.error).toContain('format 1 channel definition');
    const added = (await c.handle({
      type: 'channelAdd',
      json: JSON.stringify(PASTED),
    })) as ChannelAddResult;
    expect(added.ok).toBe(true);
    expect(area.data.get('channels')).toEqual([DEFINITION]);
    expect(defs.at(-1)).toEqual([DEFINITION]);
    const again = (await c.handle({
      type: 'channelAdd',
      json: JSON.stringify(PASTED),
    })) as ChannelAddResult & { ok: false };
    expect(again.error).toBe(
      'a channel cannot be named "My channel": there is already a channel named "My channel"',
    );
    // The library's name, or one that reads like it, and look-alikes of a channel's name are refused by channelAdd too.
    for (const [name, reason] of [
      ['Local library', 'the name is taken by your imported ruleset library ("Local library")'],
      [' LOCAL library', 'the name is taken by your imported ruleset library ("Local library")'],
      ['my  Channel ', 'it reads the same as the channel "My channel"'],
    ]) {
      const taken = (await c.handle({
        type: 'channelAdd',
        json: JSON.stringify({ ...PASTED, name }),
      })) as ChannelAddResult & { ok: false };
      expect(taken.error).toBe(`a channel cannot be named ${JSON.stringify(name)}: ${reason}`);
    }
    expect(area.data.get('channels')).toEqual([DEFINITION]);

    await c.handle({ type: 'channelRemove', name: 'My channel' });
    expect(area.data.get('channels')).toEqual([]);
    expect(defs.at(-1)).toEqual([]);
    expect(await c.handle({ type: 'channelRemove', name: 'My channel' })).toEqual({
      error: 'no channel named My channel',
    });
  });

  it('keeps rejected stored channels as repair records, and exports and imports channels', async () => {
    const { c, area } = await controllerWithChannels();
    // A channel named like the library could be imported before the import checked names.
    area.data.set('channels', [
      DEFINITION,
      { ...DEFINITION, name: '' },
      DEFINITION,
      'junk',
      { ...DEFINITION, name: 'Local library' },
    ]);
    const s = await new SettingsStore(area).load();
    expect(s.channels).toEqual([DEFINITION]);
    const repairs = s.repairs.filter((r) => r.key === 'channels').map((r) => r.problem);
    expect(repairs).toEqual([
      'channel definition: "name" must be a non-empty string',
      'channel 3 ("My channel"): there is already a channel named "My channel"',
      'channel definition: must be a JSON object',
      'channel 5 ("Local library"): the name is taken by your imported ruleset library ("Local library")',
    ]);
    expect(s.repairs.find((r) => r.problem.startsWith('channel 3'))?.original).toContain(
      'rules.example.org',
    );

    await c.reconcile(s);
    const exported = (await c.handle({ type: 'exportSettings' })) as {
      settings: Record<string, unknown>;
    };
    expect(exported.settings.channels).toEqual([DEFINITION]);
    const text = (channels: unknown[]) => JSON.stringify({ ...exported, settings: { channels } });
    const result = (await c.handle({
      type: 'importApply',
      text: text([{ ...DEFINITION, name: 'Other' }, { bad: 1 }]),
      confirmedChannels: ['Other'],
    })) as ImportApplyResult;
    expect(result).toEqual({
      ok: false,
      problems: [
        'channels: channel definition: unknown field "bad" (expected format, name, urlPrefix, rootKey, scope, destinations, minTimestamp, maxAgeDays, minKeyVersion, replacesDefaults)',
      ],
    });
    expect((area.data.get('channels') as { name: string }[]).map((x) => x.name)).toEqual([
      'My channel',
    ]);
    const good = (await c.handle({
      type: 'importApply',
      text: text([{ ...DEFINITION, name: 'Other' }]),
      confirmedChannels: ['Other'],
    })) as ImportApplyResult;
    expect(good.ok).toBe(true);
    expect((area.data.get('channels') as { name: string }[]).map((x) => x.name)).toEqual(['Other']);
  });

  it('swaps in new engines after an install; a reference taken before keeps working', async () => {
    const { c, applied } = await controllerWithChannels();
    const before = c.channels.scoped;
    await c.setChannelRecords([record('C', CHANNEL, 100)]);
    expect(applied.at(-1)).toBe(1);
    expect(before.rewrite('http://example.org/')).toBe('https://example.org/');
    expect(c.rewrite('http://example.org/').rewritten).toBe(
      'https://secure.example.org/example.org/',
    );
    // The channel's candidates (exact target first), then the defaults' (names once).
    expect(c.rulesetNamesForHost('news.example.org')).toEqual(['News', 'Example']);
    expect(c.rulesetNamesForHost('elsewhere.test')).toEqual(['Elsewhere']);
    expect(c.rulesetNamesForHost('news.test')).toEqual([]);
    // The "All rulesets" list offers the channel's rulesets, and switching one applies to the channel.
    const index = (await c.handle({ type: 'rulesetIndex' })) as RulesetIndex;
    expect(index.names).toEqual(['Example', 'Elsewhere', 'News', 'Beta']);
    await c.handle({ type: 'setRuleset', name: 'Beta', active: true });
    expect(c.rewrite('http://beta.example.org/').rewritten).toBe(
      'https://beta-secure.example.org/',
    );
    expect(applied.length).toBeGreaterThan(1);
    expect(c.shouldSecureCookie({ domain: 'news.test', name: 'a' })).toBe(false);
    expect(c.shouldSecureCookie({ domain: 'example.org', name: 'a' })).toBe(true);
  });
});

describe('bundle round trip sanity', () => {
  it('the test channel bundle loads and rewrites on its own', () => {
    expect(loadBundle(compileBundle(CHANNEL)).rewrite('http://news.test/')).toBe(
      'https://news.test/',
    );
  });
});
