import { createEngine, type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import { TabActivity } from '../src/status/tab-activity.js';
import { SettingsController } from '../src/routing/settings-controller.js';
import type { ImportApplyResult, ImportPreview } from '../src/protocol/ui-protocol.js';
import { MAX_IMPORT_CHARS, parseSettingsFile } from '../src/settings/import.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { SettingsStore } from '../src/settings/store.js';
import { simpleRuleXml } from '../src/settings/user-rules.js';
import { placeholderChannel } from './support/channels.js';

const CHANNEL = placeholderChannel();

async function setup() {
  const rulesets = [
    '<ruleset name="Stable"><target host="stable.test"/><rule from="^http:" to="https:"/></ruleset>',
    '<ruleset name="Experimental" default_off="x"><target host="exp.test"/><rule from="^http:" to="https:"/></ruleset>',
  ].map((x, i) => parseRulesetXml(x, `${i}.xml`).ruleset as Ruleset);
  const area = new MemoryStorageArea();
  const c = new SettingsController(
    createEngine(rulesets),
    new SettingsStore(area),
    new TabActivity(),
    {
      overridesApplied: async () => undefined,
      policyChanged: async () => undefined,
    },
  );
  await c.start();
  // Settings a user would hate to lose.
  await c.handle({ type: 'setFlag', flag: 'httpsFirst', value: true });
  await c.handle({ type: 'siteAdd', list: 'disabledSites', entry: 'broken.test' });
  await c.handle({ type: 'siteAdd', list: 'httpAllowedSites', entry: 'legacy.test:8080' });
  await c.handle({ type: 'setRuleset', name: 'Experimental', active: true });
  await c.handle({
    type: 'userRuleSave',
    xml: simpleRuleXml({
      host: 'mine.test',
      from: '^http://mine\\.test/',
      to: 'https://mine.test/',
    }),
  });
  return { c, area };
}

const snapshot = (area: MemoryStorageArea) =>
  JSON.stringify([...area.data].sort(([a], [b]) => a.localeCompare(b)));
const file = (settings: Record<string, unknown>, top: Record<string, unknown> = {}) =>
  JSON.stringify({ format: 'httpsify-settings', schemaVersion: 1, settings, ...top });

function deep(levels: number): string {
  return `${'['.repeat(levels)}${']'.repeat(levels)}`;
}

/** Hostile and damaged files: each must be refused whole, with a reason naming what is wrong. */
const HOSTILE: [string, string, RegExp][] = [
  [
    'userRules: "garbage" (the reported bug: it deleted every user rule)',
    file({ userRules: 'garbage' }),
    /^userRules: must be a list of rules, got "garbage"$/,
  ],
  [
    'disabledSites: 42 (it emptied the list)',
    file({ disabledSites: 42 }),
    /^disabledSites: must be a list of sites, got 42$/,
  ],
  [
    'a string for a switch',
    file({ httpsFirst: 'true' }),
    /^httpsFirst: must be true or false, got "true"$/,
  ],
  [
    'null for a switch',
    file({ globalEnabled: null }),
    /^globalEnabled: must be true or false, got null$/,
  ],
  [
    'a list for the overrides',
    file({ rulesetOverrides: [true] }),
    /^rulesetOverrides: must be an object/,
  ],
  [
    'a number as an override',
    file({ rulesetOverrides: { Stable: 1 } }),
    /^rulesetOverrides: the switch for "Stable" must be true or false, got 1$/,
  ],
  [
    'one bad site among good ones',
    file({ disabledSites: ['ok.test', 'not a host'] }),
    /^disabledSites: "not a host" is not a host/,
  ],
  [
    'a number among sites',
    file({ httpAllowedSites: ['ok.test', 7] }),
    /^httpAllowedSites: 7 is not a host/,
  ],
  [
    'an object for the channels',
    file({ channels: { a: 1 } }),
    /^channels: must be a list of channel definitions, got an object$/,
  ],
  [
    'a channel with an unknown field',
    file({ channels: [{ ...CHANNEL, bad: 1 }] }),
    /^channels: channel definition: unknown field "bad"/,
  ],
  [
    'a channel over http',
    file({ channels: [{ ...CHANNEL, urlPrefix: 'http://rules.example.org/' }] }),
    /must be an https: URL/,
  ],
  [
    'two channels of one name',
    file({ channels: [CHANNEL, CHANNEL] }),
    /^channels: channel 2 \("Team rules"\): there is already a channel named "Team rules"$/,
  ],
  [
    'two channels whose names read the same',
    file({
      channels: [
        CHANNEL,
        { ...CHANNEL, name: ' team  RULES ', urlPrefix: 'https://evil.example.net/' },
      ],
    }),
    /^channels: channel 2 \(" team {2}RULES "\): it reads the same as the channel "Team rules"$/,
  ],
  [
    'a channel named like the ruleset library',
    file({ channels: [{ ...CHANNEL, name: 'Local library' }] }),
    /^channels: channel 1 \("Local library"\): the name is taken by your imported ruleset library \("Local library"\)$/,
  ],
  [
    'a channel named like the ruleset library in another case, with spaces',
    file({ channels: [CHANNEL, { ...CHANNEL, name: '  local LIBRARY ' }] }),
    /^channels: channel 2 \(" {2}local LIBRARY "\): the name is taken by your imported ruleset library/,
  ],
  [
    'a channel named like the ruleset library in full-width letters and a no-break space',
    file({ channels: [{ ...CHANNEL, name: 'Ｌｏｃａｌ\u00a0library\u200b' }] }),
    /^channels: channel 1 \(.*\): the name is taken by your imported ruleset library/,
  ],
  [
    'a rule that is not an object',
    file({ userRules: [42] }),
    /^userRules: rule 1 must have a "name" and an "xml" text, got 42$/,
  ],
  [
    'bad XML in a user rule',
    file({ userRules: [{ name: 'X', xml: '<ruleset name="X"><target host="x.test"><rule' }] }),
    /^userRules: rule 1 \("X"\): line \d+:\d+ /,
  ],
  [
    'a user rule whose regex does not compile',
    file({
      userRules: [
        {
          name: 'X',
          xml: simpleRuleXml({ host: 'x.test', from: '^http://(x', to: 'https://x.test/' }, 'X'),
        },
      ],
    }),
    /^userRules: rule 1 \("X"\)/,
  ],
  [
    'a user rule named unlike its XML',
    file({
      userRules: [
        {
          name: 'Y',
          xml: simpleRuleXml(
            { host: 'x.test', from: '^http://x\\.test/', to: 'https://x.test/' },
            'X',
          ),
        },
      ],
    }),
    /is named "Y" but its XML names it "X"/,
  ],
  [
    'two user rules of one name',
    file({
      userRules: [0, 1].map(() => ({
        name: 'X',
        xml: simpleRuleXml(
          { host: 'x.test', from: '^http://x\\.test/', to: 'https://x.test/' },
          'X',
        ),
      })),
    }),
    /^userRules: two rules are named "X"$/,
  ],
  [
    'a user rule with extra fields',
    file({
      userRules: [
        {
          name: 'X',
          xml: simpleRuleXml(
            { host: 'x.test', from: '^http://x\\.test/', to: 'https://x.test/' },
            'X',
          ),
          run: 'code',
        },
      ],
    }),
    /unknown fields "run"/,
  ],
  ['an unknown setting', file({ httpsFirst: true, surprise: 1 }), /^unknown setting "surprise"$/],
  ['a machine-local key (repairs)', file({ repairs: [] }), /^unknown setting "repairs"$/],
  [
    'an unknown top-level key',
    file({ httpsFirst: true }, { extra: 1 }),
    /^unknown key "extra" at the top of the file$/,
  ],
  [
    '__proto__ among the settings',
    `{"format":"httpsify-settings","schemaVersion":1,"settings":{"__proto__":{"globalEnabled":false}}}`,
    /contains the key "__proto__"/,
  ],
  [
    '__proto__ among the overrides',
    `{"format":"httpsify-settings","schemaVersion":1,"settings":{"rulesetOverrides":{"__proto__":true}}}`,
    /contains the key "__proto__"/,
  ],
  [
    'constructor deep inside',
    `{"format":"httpsify-settings","schemaVersion":1,"settings":{"userRules":[{"name":"a","xml":"b","constructor":{"prototype":1}}]}}`,
    /contains the key "constructor"/,
  ],
  [
    'the wrong format tag',
    file({ httpsFirst: false }, { format: 'https-everywhere' }),
    /^not an httpsify settings file \("format" is "https-everywhere"/,
  ],
  ['no format tag', JSON.stringify({ settings: { httpsFirst: false } }), /"format" is missing/],
  [
    'a newer settings version',
    file({ httpsFirst: false }, { schemaVersion: 99 }),
    /made by a newer httpsify \(settings version 99/,
  ],
  [
    'no settings version',
    JSON.stringify({ format: 'httpsify-settings', settings: {} }),
    /"schemaVersion" must be a whole number/,
  ],
  [
    'settings that are not an object',
    JSON.stringify({ format: 'httpsify-settings', schemaVersion: 1, settings: 'all' }),
    /"settings" must be an object/,
  ],
  ['a JSON list', '[1,2,3]', /not an httpsify settings file/],
  ['not JSON', '{ not json', /^the file is not JSON/],
  ['an empty file', '', /^the file is not JSON/],
  [
    'deep nesting',
    `{"format":"httpsify-settings","schemaVersion":1,"settings":{"userRules":${deep(5000)}}}`,
    /nested deeper than/,
  ],
  [
    'a huge file',
    file({ disabledSites: ['a.test'], pad: 'x'.repeat(MAX_IMPORT_CHARS) }),
    /^the file is too large/,
  ],
];

describe('settings import is all or nothing', () => {
  it.each(HOSTILE)('refuses %s and changes nothing', async (_what, text, reason) => {
    const { c, area } = await setup();
    const before = snapshot(area);
    const writes = area.writes;
    const preview = (await c.handle({ type: 'importPreview', text })) as ImportPreview;
    expect(preview.ok).toBe(false);
    if (!preview.ok)
      expect(
        preview.problems.some((p) => reason.test(p)),
        preview.problems.join('\n'),
      ).toBe(true);
    // Applying without a preview is refused the same way.
    const applied = (await c.handle({
      type: 'importApply',
      text,
      confirmedChannels: ['Team rules'],
    })) as ImportApplyResult;
    expect(applied).toEqual(preview);
    expect(snapshot(area)).toBe(before);
    expect(area.writes).toBe(writes);
    expect(c.settings.userRules.map((r) => r.name)).toEqual(['User rule: mine.test']);
  });

  it('reports every problem of a file at once, not only the first', () => {
    const parsed = parseSettingsFile(
      file({ userRules: 'garbage', disabledSites: 42, httpsFirst: 'yes', odd: 1 }),
    );
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems).toHaveLength(4);
  });

  it('export then import round-trips exactly, and an unchanged file changes nothing', async () => {
    const one = await setup();
    const text = JSON.stringify(await one.c.handle({ type: 'exportSettings' }));
    const two = await setup();
    await two.c.handle({ type: 'setFlag', flag: 'httpsFirst', value: false });
    await two.c.handle({ type: 'siteRemove', list: 'disabledSites', entry: 'broken.test' });
    await two.c.handle({ type: 'resetRulesets' });
    await two.c.handle({ type: 'userRuleRemove', name: 'User rule: mine.test' });
    const preview = (await two.c.handle({ type: 'importPreview', text })) as ImportPreview;
    expect(preview).toEqual({
      ok: true,
      channels: [],
      userRules: [
        {
          name: 'User rule: mine.test',
          replacing: false,
          targets: [{ kind: 'host', host: 'mine.test' }],
          sendsTo: [{ kind: 'hosts', hosts: ['mine.test'], elsewhere: false }],
          leavesItsSites: false,
        },
      ],
      changes: [
        { key: 'httpsFirst', kind: 'flag', from: false, to: true },
        {
          key: 'rulesetOverrides',
          kind: 'overrides',
          set: [{ name: 'Experimental', on: true }],
          cleared: [],
        },
        { key: 'disabledSites', kind: 'list', added: ['broken.test'], removed: [], changed: [] },
        {
          key: 'userRules',
          kind: 'list',
          added: ['User rule: mine.test'],
          removed: [],
          changed: [],
        },
      ],
    });
    const writes = two.area.writes;
    const applied = (await two.c.handle({
      type: 'importApply',
      text,
      confirmedChannels: [],
      confirmedUserRules: ['User rule: mine.test'],
    })) as ImportApplyResult;
    expect(applied.ok).toBe(true);
    // One settings write for the whole import.
    expect(two.area.writes).toBe(writes + 1);
    const strip = (x: unknown) => ({ ...(x as Record<string, unknown>), exportedAt: null });
    expect(strip(await two.c.handle({ type: 'exportSettings' }))).toEqual(strip(JSON.parse(text)));
    // The same file again: nothing to change, nothing written.
    expect(await two.c.handle({ type: 'importPreview', text })).toEqual({
      ok: true,
      changes: [],
      channels: [],
      userRules: [],
    });
    await two.c.handle({ type: 'importApply', text, confirmedChannels: [] });
    expect(two.area.writes).toBe(writes + 1);
    // The imported user rule is live.
    expect(two.c.rewrite('http://mine.test/x').rewritten).toBe('https://mine.test/x');
  });

  it('adds or redefines update channels only when the user confirmed each by name', async () => {
    const { c, area } = await setup();
    const text = file({ channels: [CHANNEL] });
    const preview = (await c.handle({ type: 'importPreview', text })) as ImportPreview;
    expect(preview.ok && preview.channels).toEqual([
      {
        name: 'Team rules',
        urlPrefix: CHANNEL.urlPrefix,
        scope: CHANNEL.scope,
        replacesDefaults: false,
        replacing: false,
      },
    ]);
    const before = snapshot(area);
    expect(await c.handle({ type: 'importApply', text, confirmedChannels: [] })).toEqual({
      ok: false,
      problems: ['update channels not confirmed: Team rules'],
    });
    expect(
      await c.handle({ type: 'importApply', text, confirmedChannels: ['Someone else'] }),
    ).toEqual({
      ok: false,
      problems: ['update channels not confirmed: Team rules'],
    });
    expect(snapshot(area)).toBe(before);
    const ok = (await c.handle({
      type: 'importApply',
      text,
      confirmedChannels: ['Team rules'],
    })) as ImportApplyResult;
    expect(ok.ok && ok.settings.channels.map((x) => x.name)).toEqual(['Team rules']);
    // The same name with another address is a new trust decision.
    const moved = file({ channels: [{ ...CHANNEL, urlPrefix: 'https://elsewhere.example.net/' }] });
    const again = (await c.handle({ type: 'importPreview', text: moved })) as ImportPreview;
    expect(again.ok && again.channels.map((x) => [x.name, x.replacing])).toEqual([
      ['Team rules', true],
    ]);
    expect(
      (await c.handle({
        type: 'importApply',
        text: moved,
        confirmedChannels: [],
      })) as ImportApplyResult,
    ).toEqual({
      ok: false,
      problems: ['update channels not confirmed: Team rules'],
    });
    expect(c.settings.channels[0]?.urlPrefix).toBe(CHANNEL.urlPrefix);
  });

  it('shows each user rule of the file in plain words and adds or replaces it only when confirmed by name', async () => {
    const { c, area } = await setup();
    // A file that quietly sends the user's bank to another site: a user rule outranks every ruleset.
    const evil = simpleRuleXml(
      { host: 'bank.test', from: '^http://bank\\.test/', to: 'https://attacker.example/' },
      'Bank',
    );
    const computed = simpleRuleXml(
      { host: '*.shop.test', from: '^http://([^/]+)/', to: 'https://$1.attacker.example/' },
      'Shops',
    );
    const mine = c.settings.userRules[0] as { name: string; xml: string };
    const replaced = simpleRuleXml(
      { host: 'mine.test', from: '^http://mine\\.test/', to: 'https://www.mine.test/' },
      mine.name,
    );
    const text = file({
      userRules: [
        { name: 'Bank', xml: evil },
        { name: 'Shops', xml: computed },
        { name: mine.name, xml: replaced },
      ],
    });
    const preview = (await c.handle({ type: 'importPreview', text })) as ImportPreview;
    expect(preview.ok && preview.userRules).toEqual([
      {
        name: 'Bank',
        replacing: false,
        targets: [{ kind: 'host', host: 'bank.test' }],
        sendsTo: [{ kind: 'hosts', hosts: ['attacker.example'], elsewhere: true }],
        leavesItsSites: true,
      },
      {
        name: 'Shops',
        replacing: false,
        targets: [{ kind: 'subdomains', domain: 'shop.test' }],
        sendsTo: [{ kind: 'computed' }],
        leavesItsSites: true,
      },
      {
        name: mine.name,
        replacing: true,
        targets: [{ kind: 'host', host: 'mine.test' }],
        sendsTo: [{ kind: 'hosts', hosts: ['www.mine.test'], elsewhere: false }],
        leavesItsSites: false,
      },
    ]);
    const before = snapshot(area);
    for (const confirmed of [[], ['Bank', 'Shops'], ['Bank', mine.name]]) {
      const refused = (await c.handle({
        type: 'importApply',
        text,
        confirmedChannels: [],
        confirmedUserRules: confirmed,
      })) as ImportApplyResult;
      expect(refused.ok).toBe(false);
      if (!refused.ok) expect(refused.problems[0]).toMatch(/^user rules not confirmed: /);
    }
    expect(snapshot(area)).toBe(before);
    expect(c.rewrite('http://bank.test/login').rewritten).toBeNull();
    const ok = (await c.handle({
      type: 'importApply',
      text,
      confirmedChannels: [],
      confirmedUserRules: ['Bank', 'Shops', mine.name],
    })) as ImportApplyResult;
    expect(ok.ok).toBe(true);
    expect(c.rewrite('http://bank.test/login').rewritten).toBe('https://attacker.example/login');
  });

  it('refuses a channel that reads the same as one the user has, and still redefines one of the exact name', async () => {
    const { c, area } = await setup();
    const added = (await c.handle({
      type: 'importApply',
      text: file({ channels: [CHANNEL] }),
      confirmedChannels: ['Team rules'],
    })) as ImportApplyResult;
    expect(added.ok).toBe(true);
    const before = snapshot(area);
    const writes = area.writes;
    const lookAlike = file({
      channels: [{ ...CHANNEL, name: 'TEAM RULES ', urlPrefix: 'https://evil.example.net/' }],
    });
    const refused = {
      ok: false,
      problems: [
        'channels: channel 1 ("TEAM RULES "): it reads the same as your channel "Team rules"; to redefine that one, the file must use its exact name',
      ],
    };
    expect(await c.handle({ type: 'importPreview', text: lookAlike })).toEqual(refused);
    expect(
      await c.handle({ type: 'importApply', text: lookAlike, confirmedChannels: ['TEAM RULES '] }),
    ).toEqual(refused);
    expect(snapshot(area)).toBe(before);
    expect(area.writes).toBe(writes);
    // The exact name redefines it, as before.
    const moved = file({ channels: [{ ...CHANNEL, urlPrefix: 'https://elsewhere.example.net/' }] });
    expect(
      (
        (await c.handle({
          type: 'importApply',
          text: moved,
          confirmedChannels: ['Team rules'],
        })) as ImportApplyResult
      ).ok,
    ).toBe(true);
    expect(c.settings.channels.map((x) => [x.name, x.urlPrefix])).toEqual([
      ['Team rules', 'https://elsewhere.example.net/'],
    ]);
  });

  it('a partial file changes only the settings it names', async () => {
    const { c } = await setup();
    const r = (await c.handle({
      type: 'importApply',
      text: file({ showBadge: false }),
      confirmedChannels: [],
    })) as ImportApplyResult;
    expect(r.ok).toBe(true);
    expect(c.settings.showBadge).toBe(false);
    expect(c.settings.httpsFirst).toBe(true);
    expect(c.settings.userRules).toHaveLength(1);
    expect(c.settings.disabledSites).toEqual(['broken.test']);
  });
});
