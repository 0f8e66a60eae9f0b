import { readFileSync } from 'node:fs';
import { lintRulesetSource } from '@httpsify/engine/authoring';
import {
  describeError,
  parseChannelDefinition,
  type ChannelErrorCode,
} from '@httpsify/engine/channels';
import { describe, expect, it } from 'vitest';
import { MAX_DNR_CHANNELS } from '../src/dnr/layout.js';
import type { ChannelAddResult } from '../src/protocol/ui-protocol.js';
import { planChannelDnr, type ChannelDnrInput } from '../src/channels/channel-dnr.js';
import { fetchChannelDefinition } from '../src/protection/channel-url.js';
import {
  channelAddProblem,
  channelBrowserProblem,
  channelCheckProblem,
  channelPill,
} from '../src/ui/shared/channel-problem.js';
import { ruleProblem } from '../src/ui/shared/rule-problem.js';
import { testDefinition, testPublisher } from './support/channels.js';

const messages = JSON.parse(
  readFileSync(new URL('../static/_locales/en/messages.json', import.meta.url), 'utf8'),
) as Record<string, { message: string }>;

/** A message people read: it exists, and is sentences without codes, keys or brackets of codes. */
function expectPlain(key: string): void {
  const text = messages[key]?.message;
  expect(text, key).toBeDefined();
  expect(text).toMatch(/^[A-Z“h].*[.…]$/);
  expect(text).not.toMatch(/\[[a-z-]+\]|[a-z]+-[a-z]+-|NS_ERROR|net::|\bundefined\b/);
}

describe('update channels: problems in words', () => {
  it('every check failure code has its own sentence and fix', () => {
    // Typed over the engine's codes: a new code does not compile until it is given its words.
    const expected: Record<ChannelErrorCode | 'internal', string> = {
      'invalid-definition': 'channelProblemDefinition',
      'invalid-key': 'channelProblemSignature',
      'fetch-failed': 'channelProblemUnreachable',
      'too-large': 'channelProblemTooLarge',
      'invalid-timestamp': 'channelProblemUnreadable',
      'not-newer': 'channelProblemNotNewer',
      'older-than-defaults': 'channelProblemNotNewer',
      'bad-signature': 'channelProblemSignature',
      'corrupt-bundle': 'channelProblemUnreadable',
      'bad-delta': 'channelProblemUnreadable',
      'timestamp-mismatch': 'channelProblemUnreadable',
      'below-minimum': 'channelProblemNotNewer',
      'invalid-release': 'channelProblemUnreadable',
      'wrong-channel': 'channelProblemUnreadable',
      'key-revoked': 'channelProblemSignature',
      'destination-outside-scope': 'channelProblemScope',
      'insecure-redirect': 'channelProblemInsecure',
      'storage-failed': 'channelProblemStorage',
      locked: 'channelProblemBusy',
      internal: 'channelProblemCheckFailed',
    };
    for (const [code, key] of Object.entries(expected)) {
      expect(channelCheckProblem(code), code).toBe(key);
      expectPlain(key);
    }
    expectPlain('channelProblemKeep');
  });

  it('a refused definition, pasted or fetched, gets the sentence for its refusal', async () => {
    const publisher = await testPublisher();
    const good = testDefinition(publisher, 'https://rules.example.org/channel/');
    const refusals: [string, string][] = [];
    // The definition parser's own refusals (as the background sends them for a paste).
    const parse = (value: unknown) => {
      try {
        parseChannelDefinition(value);
        return '';
      } catch (e) {
        return describeError(e).message;
      }
    };
    for (const broken of [
      { format: 2, name: 'Broken' },
      { ...good, format: 2, urlPrefix: 'http://rules.example.org/' },
      { ...good, format: 2, rootKey: { kty: 'EC' } },
      { ...good, format: 2, scope: '(' },
    ])
      refusals.push([parse(broken), 'channelAddDamaged']);
    // A paste that is not JSON: the background prefixes the parser's message.
    try {
      JSON.parse('{"name": ');
    } catch (e) {
      refusals.push([`not JSON: ${(e as Error).message}`, 'channelAddNotDefinition']);
    }
    // An address: the fetcher's refusals, over a stand-in network.
    const answer = (body: BodyInit | null, init: ResponseInit) => async () =>
      new Response(body, init);
    const fetched = async (url: string, fetchFn: typeof fetch = answer('{}', { status: 200 })) => {
      const r = await fetchChannelDefinition(url, fetchFn);
      return r.ok ? '' : r.error;
    };
    refusals.push([await fetched('rules.example.org channel'), 'channelAddNotDefinition']);
    refusals.push([await fetched('http://rules.example.org/channel.json'), 'channelAddNeedsHttps']);
    refusals.push([
      await fetched('https://rules.example.org/c.json', answer('nope', { status: 404 })),
      'channelAddNoDefinitionThere',
    ]);
    refusals.push([
      await fetched(
        'https://rules.example.org/c.json',
        answer(new Uint8Array([0xff, 0xfe, 0x00]), { status: 200 }),
      ),
      'channelAddNoDefinitionThere',
    ]);
    refusals.push([
      await fetched(
        'https://rules.example.org/c.json',
        answer(new Uint8Array(70 * 1024), { status: 200 }),
      ),
      'channelAddNoDefinitionThere',
    ]);
    const offline = async () => {
      throw new TypeError('fetch failed');
    };
    refusals.push([
      await fetched('https://rules.example.org/c.json', offline),
      'channelAddUnreachable',
    ]);
    for (const [raw, key] of refusals) {
      expect(raw, key).not.toBe('');
      expect(channelAddProblem(raw), raw).toBe(key);
      expectPlain(key);
    }
    // The name check's refusal, as the background words it.
    const taken: ChannelAddResult = {
      ok: false,
      error:
        'a channel cannot be named "Test channel": there is already a channel named "Test channel"',
    };
    expect(channelAddProblem(taken.error)).toBe('channelAddNameTaken');
    expect(channelAddProblem('something new went wrong')).toBe('channelAddFailed');
    for (const key of ['channelAddNameTaken', 'channelAddFailed']) expectPlain(key);
  });

  it("this browser's limits are said plainly", () => {
    const rules = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        id: 0,
        priority: 1,
        action: { type: 'upgradeScheme' as const },
        condition: { urlFilter: `|http://h${i}.test/` },
      }));
    const input = (name: string, n: number, leftOut = 0): ChannelDnrInput => ({
      name,
      timestamp: 2,
      scope: '',
      replacesDefaults: false,
      compile: () => ({ ok: true, rules: rules(n), leftOut }),
    });
    const many = planChannelDnr(
      Array.from({ length: MAX_DNR_CHANNELS + 1 }, (_, i) => input(`c${i}`, 1, i === 0 ? 2 : 0)),
      { rules: 0, regexRules: 0, unsafeRules: 0 },
    );
    expect(channelBrowserProblem(many.problems[`c${MAX_DNR_CHANNELS}`] as string)).toBe(
      'channelBrowserTooMany',
    );
    expect(channelBrowserProblem(many.problems.c0 as string)).toBe('channelBrowserPartly');
    const full = planChannelDnr([input('big', 50)], { rules: 1e9, regexRules: 0, unsafeRules: 0 });
    expect(channelBrowserProblem(full.problems.big as string)).toBe('channelBrowserTooBig');
    for (const key of [
      'channelBrowserTooMany',
      'channelBrowserPartly',
      'channelBrowserTooBig',
      'channelBrowserNotApplied',
      'channelStorageProblem',
      'channelDamagedValue',
    ])
      expectPlain(key);
  });

  it('one pill per channel, and a problem wins over "up to date"', () => {
    const row = {
      checking: false,
      installed: {},
      stale: false,
      notInUse: null,
      lastCheck: { result: 'current' as const },
      platformProblem: null,
      storageProblem: null,
    };
    expect(channelPill(row).key).toBe('channelPillCurrent');
    expect(channelPill({ ...row, stale: true }).key).toBe('channelPillProblem');
    expect(channelPill({ ...row, lastCheck: { result: 'failed' } }).key).toBe('channelPillProblem');
    expect(channelPill({ ...row, platformProblem: 'x' }).key).toBe('channelPillProblem');
    expect(channelPill({ ...row, checking: true, stale: true }).key).toBe('channelPillChecking');
    expect(channelPill({ ...row, installed: null, lastCheck: null }).key).toBe(
      'channelPillWaiting',
    );
    // A stored bundle that cannot be used: "Not in use", whatever else is true of it.
    const notInUse = { reason: 'damaged', detail: 'x' };
    expect(channelPill({ ...row, installed: null, notInUse }).key).toBe('channelPillNotInUse');
    expect(
      channelPill({ ...row, installed: null, notInUse, lastCheck: { result: 'failed' } }).key,
    ).toBe('channelPillNotInUse');
  });
});

describe('the XML rules editor: findings in words', () => {
  const cases: [string, string][] = [
    ['<ruleset name="A"><target host="a.com"></ruleset>', 'ruleProblemXml'],
    ['<rules name="A"/>', 'ruleProblemXml'],
    [
      '<ruleset name="A"><target host="a.com"/><foo/><rule from="^http:" to="https:"/></ruleset>',
      'ruleProblemXml',
    ],
    [
      '<ruleset><target host="a.com"/><rule from="^http:" to="https:"/></ruleset>',
      'ruleProblemXml',
    ],
    ['<ruleset name="A"><rule from="^http:" to="https:"/></ruleset>', 'ruleProblemNoTarget'],
    ['<ruleset name="A"><target host="a.com"/></ruleset>', 'ruleProblemNoRule'],
    [
      '<ruleset name="A"><target host="my%20bank"/><rule from="^http:" to="https:"/></ruleset>',
      'ruleProblemTarget',
    ],
    [
      '<ruleset name="A"><target host="a.com:80"/><rule from="^http:" to="https:"/></ruleset>',
      'ruleProblemTarget',
    ],
    [
      '<ruleset name="A"><target host="a.com"/><rule from="^http:" to="http:"/></ruleset>',
      'ruleProblemRewrite',
    ],
    [
      '<ruleset name="A"><target host="a.com"/><rule from="^http://(a" to="https://a/"/></ruleset>',
      'ruleProblemRewrite',
    ],
    [
      '<ruleset name="A"><target host="a.com"/><rule from="^http:" to="https:"/><test url="https://a.com/"/></ruleset>',
      'ruleProblemWarning',
    ],
  ];
  it.each(cases)('%s', (xml, key) => {
    const { diagnostics } = lintRulesetSource(xml, 'user-rule.xml');
    const first = diagnostics.find((d) => d.severity === 'error') ?? diagnostics[0];
    expect(first, xml).toBeDefined();
    expect(ruleProblem(first!)).toBe(key);
    expectPlain(key);
  });

  it('every sentence the editor can show is plain', () => {
    for (const key of [
      'ruleProblemDuplicate',
      'ruleProblemEngine',
      'ruleProblemOther',
      'ruleProblemTest',
    ])
      expectPlain(key);
    expect(ruleProblem({ code: 'something-new', severity: 'error' })).toBe('ruleProblemOther');
  });
});
