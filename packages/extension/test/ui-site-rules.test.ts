import { describe, expect, it } from 'vitest';
import { DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { HTTPS_FIRST_EXEMPT_REGEXES, uiDnrRules } from '../src/dnr/settings-rules.js';
import { siteEntryConditions } from '../src/dnr/site-conditions.js';
import { isHttpsFirstExempt } from '../src/site-rules/exempt.js';
import { addSite, parseSitePattern, removeSite, SiteList } from '../src/site-rules/site-pattern.js';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { typedHost } from '../src/settings/user-rules.js';

describe('site entries', () => {
  it('normalises hosts, ports, wildcards and IDN', () => {
    expect(parseSitePattern(' Example.COM. ')?.text).toBe('example.com');
    expect(parseSitePattern('example.com:8080')?.text).toBe('example.com:8080');
    expect(parseSitePattern('example.com:80')?.text).toBe('example.com:80');
    expect(parseSitePattern('*.Example.com')?.text).toBe('*.example.com');
    expect(parseSitePattern('bücher.de')?.text).toBe('xn--bcher-kva.de');
    expect(parseSitePattern('[::1]:8443')?.text).toBe('[::1]:8443');
    for (const bad of [
      '',
      'a b',
      'http://x.com/',
      'x.com/path',
      '*.com',
      'ex*ample.com',
      '*.*.example.com',
      'user@x.com',
      '*.1.2.3.4',
    ]) {
      expect(parseSitePattern(bad), bad).toBeNull();
    }
  });

  it('matches exact hosts on any port, ports exactly, wildcards on subdomains only', () => {
    const list = new SiteList(['example.com', 'app.test:8080', '*.wild.test']);
    expect(list.matchUrl('http://example.com/')).toBe('example.com');
    expect(list.matchUrl('https://example.com:444/x')).toBe('example.com');
    expect(list.matchUrl('http://www.example.com/')).toBeNull();
    expect(list.matchUrl('http://app.test:8080/')).toBe('app.test:8080');
    expect(list.matchUrl('http://app.test:8081/')).toBeNull();
    expect(list.matchUrl('http://app.test/')).toBeNull();
    expect(list.matchUrl('http://a.b.wild.test/')).toBe('*.wild.test');
    expect(list.matchUrl('http://wild.test/')).toBeNull();
    expect(list.matchUrl('http://example.com./')).toBe('example.com');
    expect(list.matchUrl('ftp://example.com/')).toBeNull();
  });

  it('adds without duplicates and removes by normalised text', () => {
    const a = addSite([], 'B.test') as string[];
    const b = addSite(a, 'a.test') as string[];
    expect(addSite(b, 'b.test')).toEqual(['a.test', 'b.test']);
    expect(addSite(b, 'not valid')).toBeNull();
    expect(removeSite(b, 'A.TEST.')).toEqual(['b.test']);
  });
});

describe('HTTPS-first exemptions', () => {
  const exempt = [
    'localhost',
    'app.localhost',
    'foo.onion',
    'printer',
    'nas.local',
    'router.home.arpa',
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.10.10',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '[::1]',
    '[fd00::1]',
    '[fe80::1]',
    '[::ffff:192.168.0.1]',
    '[::ffff:10.0.0.1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:172.20.1.1]',
    '[::ffff:169.254.0.1]',
    '[::ffff:100.100.0.1]',
    '[::ffff:0.0.0.1]',
  ];
  const upgraded = [
    'example.com',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '[2001:db8::1]',
    'localhost.example.com',
    'onion.example',
    // IPv4-mapped public addresses are as public as the IPv4 ones.
    '[::ffff:8.8.8.8]',
    '[::ffff:172.32.0.1]',
    '[::ffff:192.169.0.1]',
    '[::ffff:100.128.0.1]',
    '[::ffff:11.0.0.1]',
  ];
  it.each(exempt)('never upgrades %s', (h) => expect(isHttpsFirstExempt(h)).toBe(true));
  it.each(upgraded)('upgrades %s', (h) => expect(isHttpsFirstExempt(h)).toBe(false));
  it('reads hosts the way the URL parser writes them', () => {
    for (const h of [...exempt, ...upgraded])
      expect(isHttpsFirstExempt(new URL(`http://${h}/`).hostname), h).toBe(isHttpsFirstExempt(h));
  });

  it('the DNR exemption regexes agree with the function on IP literals and single labels', () => {
    const res = HTTPS_FIRST_EXEMPT_REGEXES.map((r) => new RegExp(r));
    const re = { test: (u: string) => res.some((r) => r.test(u)) };
    for (const h of [...exempt, ...upgraded]) {
      // Names ending in .localhost/.onion/.local/.home.arpa are exempted by requestDomains instead.
      if (/[a-z]\.[a-z]/.test(h) && !/^\d/.test(h)) continue;
      const host = new URL(`http://${h}/`).host;
      expect(re.test(`http://${host}/x`), h).toBe(isHttpsFirstExempt(h));
      expect(re.test(`http://${host}:8080/`), `${h}:8080`).toBe(isHttpsFirstExempt(h));
    }
  });
});

describe('settings as declarativeNetRequest rules', () => {
  const base = {
    globalEnabled: true,
    disabledSites: [],
    httpAllowedSites: [],
    httpOnceHosts: [],
    userRulesets: [],
    httpsFirst: false,
  };

  it('global off is one allow rule above everything', () => {
    const { rules } = uiDnrRules({
      ...base,
      globalEnabled: false,
      disabledSites: ['a.test'],
      httpsFirst: true,
    });
    expect(rules).toEqual([
      {
        priority: 2_000_000,
        action: { type: 'allow' },
        condition: { urlFilter: '|http://', resourceTypes: expect.any(Array) },
      },
    ]);
  });

  it('disabled sites allow the frame tree of their own pages, keyed by the host itself', () => {
    expect(siteEntryConditions(['a.test:8080', '*.w.test', 'b.test', '127.0.0.1'], 'any')).toEqual([
      {
        regexFilter: '^https?://(?:[^/?#]*@)?[^./:@[\\]]+(?:\\.[^./:@[\\]]+){1}\\.*(?::[0-9]+)?/',
        requestDomains: ['b.test'],
      },
      {
        regexFilter: '^https?://(?:[^/?#]*@)?[^./:@[\\]]+(?:\\.[^./:@[\\]]+){1}\\.*:8080/',
        requestDomains: ['a.test'],
      },
      {
        regexFilter: '^https?://(?:[^/?#]*@)?[^./:@[\\]]+(?:\\.[^./:@[\\]]+){2,}\\.*(?::[0-9]+)?/',
        requestDomains: ['w.test'],
      },
      { regexFilter: '^https?://(?:[^/?#]*@)?127\\.0\\.0\\.1(?::[0-9]+)?/' },
    ]);
    const { rules } = uiDnrRules({ ...base, disabledSites: ['a.test', '*.w.test'] });
    expect(
      rules
        .filter((r) => r.priority > 1_000_000)
        .map((r) => [r.action.type, r.condition.resourceTypes]),
    ).toEqual([
      ['allowAllRequests', ['main_frame']],
      ['allowAllRequests', ['main_frame']],
    ]);
    // Matched as Chromium matches them: the entry's host, never a URL that only names it.
    const em = new DnrEmulator(rules.map((r, i) => ({ ...r, id: i + 1 }) as DnrRule));
    const allowed = (url: string) =>
      em.match({ url, type: 'main_frame' }).rule?.action.type === 'allowAllRequests';
    for (const url of [
      'http://a.test/',
      'https://a.test:444/x',
      'http://A.TEST./',
      'http://u:p@a.test/',
      'http://x.w.test/',
      'http://y.x.w.test:81/',
    ])
      expect(allowed(url), url).toBe(true);
    for (const url of [
      'http://a.test@bank.test/',
      'http://a.test:80@bank.test/',
      'http://bank.test/a.test',
      'http://bank.test/?a.test',
      'http://bank.test/#a.test',
      'http://bank.test/http://a.test/',
      'http://b.a.test/',
      'http://a.test.evil.test/',
      'http://xa.test/',
      'http://w.test/',
      'http://x.w.test@bank.test/',
      'http://bank.test\\@a.test/',
    ])
      expect(allowed(url), url).toBe(false);
  });

  it('HTTPS-first upgrades main frames at the lowest priority with exemptions above it', () => {
    const { rules } = uiDnrRules({
      ...base,
      httpsFirst: true,
      httpAllowedSites: ['plain.test'],
      httpOnceHosts: ['once.test'],
    });
    const upgrade = rules.find((r) => r.action.type === 'upgradeScheme');
    expect(upgrade?.priority).toBe(1);
    expect(upgrade?.condition.resourceTypes).toEqual(['main_frame']);
    const allows = rules.filter((r) => r.action.type === 'allow');
    expect(allows.flatMap((r) => r.condition.requestDomains ?? [])).toEqual(
      expect.arrayContaining(['plain.test', 'once.test']),
    );
    expect(allows.every((r) => r.priority === 3)).toBe(true);
  });

  it("lets the extension's own http:// fetches (probes) through, above every ruleset", () => {
    const { rules } = uiDnrRules({ ...base, extensionId: 'abcdefghijklmnop' });
    expect(rules).toEqual([
      {
        priority: 1_900_000,
        action: { type: 'allow' },
        condition: {
          urlFilter: '|http://',
          initiatorDomains: ['abcdefghijklmnop'],
          resourceTypes: ['xmlhttprequest'],
        },
      },
    ]);
  });

  it('user rules outrank the default rulesets', () => {
    const { ruleset } = parseRulesetXml(
      '<ruleset name="Mine"><target host="mine.test"/><rule from="^http://mine\\.test/" to="https://secure.mine.test/"/></ruleset>',
      'm.xml',
    );
    const { rules, omitted } = uiDnrRules({ ...base, userRulesets: [ruleset!] });
    expect(omitted).toBe(0);
    expect(rules.length).toBeGreaterThan(0);
    expect(rules.every((r) => r.priority > 100_000)).toBe(true);
  });
});

describe('"Add a rule": the host a person typed or pasted', () => {
  it.each([
    ['example.com', 'example.com'],
    ['  Example.COM ', 'example.com'],
    ['https://www.example.com/some/page?x=1', 'www.example.com'],
    ['http://example.com:8080/', 'example.com'],
    ['example.com/path', 'example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['', null],
    ['http://', null],
  ])('%j → %j', (input, host) => {
    expect(typedHost(input)).toBe(host);
  });
});
