import { createEngine } from '@httpsify/engine';
import { DNR_LIMITS, DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { ScopedEngine } from '@httpsify/engine/channels';
import { describe, expect, it } from 'vitest';
import {
  CHANNEL_PRIORITY_STEP,
  CHANNEL_RULE_ID_BASE,
  MAX_DNR_CHANNELS,
  USER_RULE_PRIORITY_OFFSET,
} from '../src/dnr/layout.js';
import {
  channelPriorityOffset,
  compileChannelRules,
  type ChannelDnrInput,
  planChannelDnr,
  REGEX_RESERVED_FOR_SETTINGS,
} from '../src/channels/channel-dnr.js';
import { intersectDomains, scopeToDnr, targetMayBeInScope } from '../src/channels/scope-dnr.js';
import { rulesetsOf } from './support/channels.js';

const RULESETS = rulesetsOf(
  '<ruleset name="Org"><target host="example.org"/><target host="*.example.org"/><exclusion pattern="^http://example\\.org/no-tls/"/><rule from="^http:" to="https:"/></ruleset>',
  '<ruleset name="Com"><target host="example.com"/><target host="www.example.com"/><target host="example.net"/><target host="www.example.net"/>' +
    '<rule from="^http://(www\\.)?example\\.(com|net)/" to="https://www.example.$2/"/></ruleset>',
  '<ruleset name="Regex"><target host="*.regex.org"/><rule from="^http://([a-z]+)\\.regex\\.org/page/(\\d+)" to="https://$1.regex.org/p/$2"/></ruleset>',
);

const URLS = [
  'http://example.org/',
  'http://example.org/no-tls/x',
  'http://www.example.org/a?b',
  'http://a.b.example.org/',
  'http://example.org:8080/',
  'http://www.example.org:81/x',
  'http://evilexample.org/',
  'http://example.org.evil.test/',
  'https://example.org/',
  'http://example.com/',
  'http://www.example.com/x',
  'http://a.www.example.com/',
  'http://sub.example.com/',
  'http://example.com:8080/',
  'http://example.net/',
  'http://www.example.net:1/',
  'http://x.regex.org/page/12',
  'http://deep.x.regex.org/page/3',
  'http://x.regex.org:8000/page/1',
  'http://regex.org/page/2',
  'http://unrelated.test/',
];

/** Channel rules alone, as DNR would run them, next to the engine confined to the scope. */
function compare(
  scope: string,
): { url: string; dnr: string | null; engine: string | null; inScope: boolean }[] {
  const compiled = compileChannelRules(RULESETS, scope, 900);
  if (!compiled.ok) throw new Error(compiled.reason);
  const emulator = new DnrEmulator(compiled.rules);
  const scoped = new ScopedEngine([
    {
      channel: 'c',
      scope: scope === '' ? null : new RegExp(scope),
      engine: createEngine(RULESETS),
    },
  ]);
  const re = new RegExp(scope);
  return URLS.map((url) => ({
    url,
    dnr: emulator.match({ url }).redirectUrl,
    engine: scoped.rewrite(url),
    inScope: re.test(url),
  }));
}

describe('channel scope as declarativeNetRequest conditions', () => {
  it('recognises host-anchored scopes', () => {
    const hosts = (s: string) => {
      const r = scopeToDnr(s);
      if (!r.ok) throw new Error(r.reason);
      return r.dnr.kind === 'everything'
        ? 'everything'
        : {
            domains: r.dnr.requestDomains,
            exact: r.dnr.needsNarrowing,
            anyPort: r.dnr.scope.anyPort,
            https: r.dnr.scope.https,
          };
    };
    expect(hosts('')).toBe('everything');
    expect(hosts('^https?://([^/]*\\.)?example\\.org[:/]')).toEqual({
      domains: ['example.org'],
      exact: false,
      anyPort: true,
      https: true,
    });
    expect(hosts('^http://(www\\.)?example\\.(com|net)/')).toEqual({
      domains: ['www.example.com', 'www.example.net', 'example.com', 'example.net'],
      exact: true,
      anyPort: false,
      https: false,
    });
    expect(hosts('^https?:\\/\\/(?:[^/]*\\.)?(a|b)\\.test(:[0-9]+)?\\/.*')).toEqual({
      domains: ['a.test', 'b.test'],
      exact: false,
      anyPort: true,
      https: true,
    });
  });

  it('refuses scopes it cannot enforce, saying why', () => {
    const reason = (s: string) => {
      const r = scopeToDnr(s);
      return r.ok ? 'accepted' : r.reason;
    };
    expect(reason('^http://example\\.org/path/')).toContain('not paths');
    expect(reason('^http://example\\.org')).toContain('longer host names');
    expect(reason('^https?://([a-z0-9-]+\\.)*example\\.org/')).toContain('character class');
    expect(reason('example\\.org')).toContain('anchored');
    expect(reason('^https://example\\.org/')).toContain('excludes http://');
    expect(reason('^http://example.org/')).toContain('unescaped');
    expect(reason('^http://[a-z]+\\.example\\.org/')).not.toBe('accepted');
    expect(reason('^http://(www\\.|[^/]*\\.)example\\.org/')).toContain(
      'not a spelled-out host name',
    );
  });

  it('intersects DNR domain lists exactly (a domain stands for itself and its subdomains)', () => {
    expect(intersectDomains(['example.org', 'other.test'], ['www.example.org', 'b.test'])).toEqual([
      'www.example.org',
    ]);
    expect(intersectDomains(['a.example.org'], ['example.org'])).toEqual(['a.example.org']);
    expect(intersectDomains(['evilexample.org'], ['example.org'])).toEqual([]);
    expect(intersectDomains(undefined, ['example.org'])).toEqual(['example.org']);
  });

  it('compiles only rulesets whose targets may name an in-scope host', () => {
    const r = scopeToDnr('^http://(www\\.)?example\\.org[:/]');
    if (!r.ok) throw new Error(r.reason);
    const may = (t: string) => targetMayBeInScope(t, r.dnr);
    expect(
      [
        'example.org',
        'www.example.org',
        '*.example.org',
        '*.org',
        'www.example.*',
        'Example.org.',
      ].map(may),
    ).toEqual([true, true, true, true, true, true]);
    expect(['a.example.org', 'example.com', '*.www.example.org', '*.other.test'].map(may)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('without a scope the channel rules do what the engine does (the baseline for the scoped comparisons)', () => {
    for (const row of compare('')) expect(row.dnr, row.url).toBe(row.engine);
  });

  for (const scope of [
    '^https?://([^/]*\\.)?example\\.org[:/]',
    '^http://(www\\.)?example\\.(com|net)/',
    '^http://(www\\.)?example\\.org[:/]',
    '^http://([^/]*\\.)?example\\.org/',
    '^https?://([^/]*\\.)?regex\\.org[:/]',
    '^https?://([^/]*\\.)?(example\\.com|regex\\.org)[:/]',
  ]) {
    it(`confines the rules to ${scope}: the emulator agrees with the engine inside the scope and never acts outside it`, () => {
      const rows = compare(scope);
      for (const row of rows) {
        expect(row.dnr, `${row.url}: DNR acts outside the scope`).toBe(
          row.inScope ? row.engine : null,
        );
      }
      // The comparison is not vacuous: some URLs are rewritten, some in-scope-for-the-engine ones are not.
      expect(rows.some((r) => r.dnr !== null)).toBe(true);
      expect(rows.some((r) => !r.inScope && createEngine(RULESETS).rewrite(r.url) !== null)).toBe(
        true,
      );
    });
  }

  it('leaves out rulesets whose destination could leave the scope: Chromium cannot check a redirect', () => {
    const scope = '^https?://([^/]*\\.)?example\\.org[:/]';
    const open = rulesetsOf(
      '<ruleset name="Away"><target host="*.example.org"/><rule from="^http://([^/]+)/" to="https://$1.attacker.test/"/></ruleset>',
      '<ruleset name="Sub"><target host="*.example.org"/><rule from="^http://(\\w+)\\.example\\.org/" to="https://$1.example.org/"/></ruleset>',
      '<ruleset name="Alt"><target host="example.org"/><target host="www.example.org"/><rule from="^http://(www\\.)?example\\.org/" to="https://$1example.org/"/></ruleset>',
    );
    const compiled = compileChannelRules(open, scope, 900);
    if (!compiled.ok) throw new Error(compiled.reason);
    expect(compiled.leftOut).toBe(1);
    const emulator = new DnrEmulator(compiled.rules);
    expect(emulator.match({ url: 'http://a.example.org/' }).redirectUrl).toBe(
      'https://a.example.org/',
    );
    expect(emulator.match({ url: 'http://www.example.org/' }).redirectUrl).toBe(
      'https://www.example.org/',
    );
    // With the attacker's host in the signed destinations as "*.attacker.test", it is still computed: left out.
    expect(
      (compileChannelRules(open, scope, 900, ['*.attacker.test']) as { leftOut: number }).leftOut,
    ).toBe(1);
    // A scope of every URL has nothing to leave.
    expect((compileChannelRules(open, '', 900) as { leftOut: number }).leftOut).toBe(0);
  });

  it('leaves out a literal destination that Chromium would parse to another host than it reads', () => {
    const scope = '^https?://([^/]*\\.)?example\\.org[:/]';
    const hostile = rulesetsOf(
      '<ruleset name="Backslash"><target host="www.example.org"/><rule from="^http://www\\.example\\.org/" to="https://attacker.test\\.example.org/"/></ruleset>',
      '<ruleset name="At"><target host="a.example.org"/><rule from="^http://a\\.example\\.org/" to="https://a.example.org@attacker.test/"/></ruleset>',
      '<ruleset name="Fine"><target host="b.example.org"/><rule from="^http://b\\.example\\.org/" to="https://c.example.org/"/></ruleset>',
    );
    const compiled = compileChannelRules(hostile, scope, 900);
    if (!compiled.ok) throw new Error(compiled.reason);
    expect(compiled.leftOut).toBe(2);
    const emulator = new DnrEmulator(compiled.rules);
    expect(emulator.match({ url: 'http://www.example.org/' }).redirectUrl).toBeNull();
    expect(emulator.match({ url: 'http://a.example.org/' }).redirectUrl).toBeNull();
    expect(emulator.match({ url: 'http://b.example.org/' }).redirectUrl).toBe(
      'https://c.example.org/',
    );
  });

  it('refuses a channel whose regex rules cannot be combined with an exact-host or no-port scope', () => {
    const literal = rulesetsOf(
      '<ruleset name="X"><target host="x.regex.org"/><rule from="^http://x\\.regex\\.org/page/(\\d+)" to="https://x.regex.org/p/$1"/></ruleset>',
    );
    const exact = compileChannelRules(literal, '^http://x\\.regex\\.org[:/]', 900);
    expect(exact.ok).toBe(false);
    expect(!exact.ok && exact.reason).toContain('cannot be enforced on Chromium');
    expect(!exact.ok && exact.reason).toContain('an exact host');
    const noPort = compileChannelRules(RULESETS, '^http://([^/]*\\.)?regex\\.org/', 900);
    expect(!noPort.ok && noPort.reason).toContain('excluding ports');
    // A rule that also matches https:// cannot be kept to an http-only scope.
    const https = rulesetsOf(
      '<ruleset name="Both"><target host="both.test"/><rule from="^https?://both\\.test/x(\\d)" to="https://both.test/y$1"/></ruleset>',
    );
    const both = compileChannelRules(https, '^http://([^/]*\\.)?both\\.test[:/]', 900);
    expect(!both.ok && both.reason).toContain('https://');
    // An open-ended one also brings fences for https:// URLs; the refusal names the rule itself.
    const open = rulesetsOf(
      '<ruleset name="Open"><target host="both.test"/><rule from="^https?://(\\w+\\.)?both\\.test/x(\\d)" to="https://both.test/y$2"/></ruleset>',
    );
    const fenced = compileChannelRules(open, '^http://([^/]*\\.)?both\\.test[:/]', 900);
    expect(!fenced.ok && fenced.reason).toContain('regexFilter ^https?://');
  });
});

describe('laying out channel rules in the dynamic rule space', () => {
  const okRules = (n: number, regex = 0): DnrRule[] =>
    Array.from({ length: n }, (_, i) => ({
      id: 0,
      priority: 10_000,
      action: { type: 'upgradeScheme' },
      condition: i < regex ? { regexFilter: '^http://x' } : { urlFilter: `|http://h${i}.test/` },
    }));
  const input = (
    name: string,
    rules: DnrRule[] | string,
    extra: Partial<ChannelDnrInput> = {},
  ): ChannelDnrInput => ({
    name,
    timestamp: 2,
    scope: '',
    replacesDefaults: false,
    compile: () =>
      typeof rules === 'string' ? { ok: false, reason: rules } : { ok: true, rules, leftOut: 0 },
    ...extra,
  });
  const none = { rules: 0, regexRules: 0, unsafeRules: 0 };

  it('gives earlier channels higher priorities, all above the defaults and below user rules, ids in the channel range', () => {
    const plan = planChannelDnr([input('first', okRules(2)), input('second', okRules(3))], none);
    expect(plan.rules.map((r) => r.id)).toEqual(
      [0, 1, 2, 3, 4].map((i) => CHANNEL_RULE_ID_BASE + i),
    );
    const first = plan.rules[0]!.priority;
    const second = plan.rules[2]!.priority;
    expect(first - second).toBe(CHANNEL_PRIORITY_STEP);
    expect(Math.min(first, second)).toBeGreaterThan(10_999); // defaults reach ~10,500
    // The whole band of the first channel stays below user rules; the last channel's is above the defaults.
    expect(channelPriorityOffset(0) + CHANNEL_PRIORITY_STEP).toBeLessThanOrEqual(
      USER_RULE_PRIORITY_OFFSET,
    );
    expect(channelPriorityOffset(MAX_DNR_CHANNELS - 1)).toBeGreaterThan(10_500);
    const ninth = planChannelDnr(
      Array.from({ length: MAX_DNR_CHANNELS + 1 }, (_, i) => input(`c${i}`, okRules(1))),
      none,
    );
    expect(ninth.problems[`c${MAX_DNR_CHANNELS}`]).toContain(
      `at most ${MAX_DNR_CHANNELS} channels`,
    );
    expect(ninth.rules.length).toBe(MAX_DNR_CHANNELS);
  });

  it('never applies a channel in part: one that does not fit keeps its previous rules, or gets none, and says why', () => {
    const others = { rules: DNR_LIMITS.dynamicRules - 10, regexRules: 0, unsafeRules: 0 };
    const previous = { timestamp: 1, rules: okRules(4) };
    const plan = planChannelDnr(
      [
        input('big', okRules(11), { previous }),
        input('bigger', okRules(50)),
        input('small', okRules(7)),
      ],
      others,
    );
    expect(plan.applied.big).toMatchObject({ timestamp: 1, count: 4 });
    expect(plan.problems.big).toContain('do not fit');
    expect(plan.problems.big).toContain('version 1');
    expect(plan.applied.bigger).toBeUndefined();
    expect(plan.problems.bigger).toContain('do not fit');
    // What is left after "big" kept its 4 rules (6) is not enough for 7: none of them, not 6 of 7.
    expect(plan.applied.small).toBeUndefined();
    expect(plan.rules.length).toBe(4);
  });

  it('keeps regex room for the settings and reports an unenforceable scope; a replacing channel turns the defaults off', () => {
    let limit = -1;
    planChannelDnr(
      [
        input('r', okRules(1), {
          compile: (l) => ((limit = l), { ok: true, rules: [], leftOut: 0 }),
        }),
      ],
      {
        rules: 0,
        regexRules: 30,
        unsafeRules: 0,
      },
    );
    expect(limit).toBe(DNR_LIMITS.regexRules - REGEX_RESERVED_FOR_SETTINGS - 30);
    const plan = planChannelDnr(
      [
        input('bad scope', 'its scope cannot be enforced on Chromium: not paths', {
          replacesDefaults: true,
        }),
        input('replacing', okRules(1), { replacesDefaults: true }),
      ],
      none,
    );
    expect(plan.problems['bad scope']).toContain('not paths');
    expect(plan.applied['bad scope']).toBeUndefined();
    expect(plan.disableDefaults).toBe(true);
    expect(
      planChannelDnr([input('bad scope', 'x', { replacesDefaults: true })], none).disableDefaults,
    ).toBe(false);
  });
});
