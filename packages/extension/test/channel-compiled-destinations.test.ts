import { createEngine } from '@httpsify/engine';
import {
  checkBundleDestinations,
  compiledDestination,
  destinationPolicy,
  ruleDestination,
} from '@httpsify/engine/channels';
import { DNR_LIMITS, DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileChannelRules } from '../src/channels/channel-dnr.js';
import { summariseUserRule } from '../src/settings/user-rule-summary.js';
import { rulesetsOf } from './support/channels.js';
import { canonical, hostileUrl } from './support/hostile-urls.js';

/**
 * Channel and user rules are judged as each browser runs them (issue 37): the destination check
 * reads the compiled DNR action as well as the rule, so a rule that looks like "only the scheme
 * changes" but compiles to a substitution sending in-scope URLs to another host never reaches
 * Chromium, and is refused at publish and update when its compiled form is a host outside.
 */
const SCOPE = '^http://([^/]*\\.)?bank\\.test/';
const policy = destinationPolicy(SCOPE, []);
const ruleset = (from: string, to: string) =>
  rulesetsOf(
    `<ruleset name="Sneaky"><target host="bank.test"/><target host="*.bank.test"/><rule from="${from}" to="${to}"/></ruleset>`,
  );

/** Where Chromium sends `url` with the channel's compiled rules (following redirects), or null. */
function chromiumTarget(rules: DnrRule[], url: string): string | null {
  const em = new DnrEmulator(rules.map((r, i) => ({ ...r, id: i + 1 })));
  let at: string | null = null;
  for (let hop = 0, u = url; hop < 4; hop++) {
    const next = em.match({ url: u, type: 'main_frame' }).redirectUrl;
    if (next === null || next === u) break;
    at = u = next;
  }
  return at;
}

function channelRules(from: string, to: string): DnrRule[] {
  const out = compileChannelRules(ruleset(from, to), SCOPE, DNR_LIMITS.regexRules);
  if (!out.ok) throw new Error(out.reason);
  return out.rules;
}

describe('a signed channel rule cannot leave its destinations through the compiled form', () => {
  it('"to: https:" after a from that matched the host is not "only the scheme changes"', () => {
    // Compiled, this is regexSubstitution "https:": http://bank.test/evil.test/x → https:/evil.test/x,
    // which the URL parser reads as https://evil.test/x.
    expect(ruleDestination('https:', '^http://bank\\.test')).toEqual({ kind: 'computed' });
    expect(ruleDestination('https:', '^http:')).toEqual({ kind: 'same-url' });
    const rules = channelRules('^http://bank\\.test', 'https:');
    const to = chromiumTarget(rules, 'http://bank.test/evil.test/x');
    expect(to === null || new URL(to).hostname === 'bank.test', String(to)).toBe(true);
  });

  it('reads compiled actions: substitutions, transforms and URLs', () => {
    const sub = (regexFilter: string, regexSubstitution: string) =>
      compiledDestination({
        action: { type: 'redirect', redirect: { regexSubstitution } },
        condition: { regexFilter },
      });
    expect(sub('^http://bank\\.test', 'https:')).toEqual({ kind: 'computed' });
    expect(sub('^http://bank\\.test/', 'https://bank.test/')).toEqual({
      kind: 'literal',
      urls: ['https://bank.test/'],
    });
    expect(sub('^http://(www\\.)?bank\\.test/', 'https://\\1evil.test/')).toEqual({
      kind: 'literal',
      urls: ['https://evil.test/', 'https://www.evil.test/'],
    });
    expect(sub('^http://([^/]+)/', 'https://\\1/')).toEqual({ kind: 'computed' });
    expect(sub('bank\\.test/', 'https://bank.test/')).toEqual({ kind: 'computed' });
    expect(sub('^http://([a-z]+)\\.bank\\.test/', 'https://\\1.bank.test/')).toEqual({
      kind: 'subdomain',
      of: 'bank.test',
    });
    expect(
      compiledDestination({
        action: {
          type: 'redirect',
          redirect: { transform: { scheme: 'https', host: 'evil.test' } },
        },
        condition: {},
      }),
    ).toEqual({
      kind: 'literal',
      urls: ['https://evil.test/'],
    });
    // A `[^?]*` rule's transform sets the path too (the query stays).
    expect(
      compiledDestination({
        action: {
          type: 'redirect',
          redirect: { transform: { scheme: 'https', host: 'evil.test', path: '/login' } },
        },
        condition: {},
      }),
    ).toEqual({ kind: 'literal', urls: ['https://evil.test/login'] });
    expect(
      compiledDestination({
        action: { type: 'redirect', redirect: { transform: { path: '/login' } } },
        condition: {},
      }),
    ).toEqual({ kind: 'computed' });
    expect(compiledDestination({ action: { type: 'upgradeScheme' }, condition: {} })).toEqual({
      kind: 'same-url',
    });
    expect(compiledDestination({ action: { type: 'allow' }, condition: {} })).toBeNull();
  });

  it('refuses at publish and update a rule whose compiled destination lies outside', () => {
    const engine = createEngine(ruleset('^http://(www\\.)?bank\\.test/', 'https://$1evil.test/'));
    expect(() => checkBundleDestinations(engine, policy)).toThrow(
      /ruleset "Sneaky" sends URLs to https:\/\/(www\.)?evil\.test\//,
    );
    const sneaky = createEngine(ruleset('^http://bank\\.test', 'https:'));
    expect(checkBundleDestinations(sneaky, policy).computed.map((f) => f.ruleset)).toContain(
      'Sneaky',
    );
  });

  it('says so in a user rule summary', () => {
    expect(summariseUserRule(ruleset('^http://bank\\.test', 'https:')[0]!).leavesItsSites).toBe(
      true,
    );
    expect(summariseUserRule(ruleset('^http:', 'https:')[0]!).leavesItsSites).toBe(false);
  });

  // The class: `to` strings that look like scheme-only or in-scope changes, `from` groups that
  // capture parts of the host, case, ports, credentials, dots, backslashes.
  const FROMS = [
    '^http:',
    '^http://',
    '^http://bank\\.test',
    '^http://bank\\.test/',
    '^http://(bank)\\.test',
    '^http://(www\\.)?bank\\.test',
    '^http://(www\\.)?bank\\.test/',
    '^http://([a-z]+)\\.bank\\.test/',
    '^http://([\\w.-]+)\\.bank\\.test/',
    '^http://bank\\.test(:\\d+)?/',
    '^http://(bank\\.test)',
    '^http://([^/]+)/',
    '^http://(.+)',
    '^http://(\\w+)\\.(\\w+)\\.test/',
    '^http://BANK\\.test/',
  ];
  const TOS = [
    'https:',
    'HTTPS:',
    'https:/',
    'https://',
    'https:\\\\',
    'https://$1',
    'https://$1/',
    'https://$1.test/',
    'https://$1.bank.test/',
    'https://bank.test',
    'https://bank.test/',
    'https://bank.test$1',
    'https://bank.test$1/',
    'https://$1bank.test/',
    'https://bank.test:$1/',
    'https://x@$1/',
    'https://bank.test\\$1/',
    'https://BANK.TEST/',
    'https://bank.test./',
    'https://$1.$2.test/',
    'https://www.bank.test/$1',
  ];
  const inScopeUrl = hostileUrl
    .map(canonical)
    .filter(
      (u): u is string =>
        u !== null &&
        u.startsWith('http://') &&
        /(^|\.)bank\.test$/.test(new URL(u).hostname.replace(/\.+$/, '')),
    );

  it('no generated rule, once on Chromium, sends an in-scope URL outside the scope', () => {
    const cases = FROMS.flatMap((from) => TOS.map((to) => [from, to] as const));
    for (const [from, to] of cases) {
      let rules: DnrRule[];
      try {
        rules = channelRules(from.replace(/"/g, '&quot;'), to);
      } catch {
        continue;
      }
      if (rules.length === 0) continue;
      fc.assert(
        fc.property(inScopeUrl, (url) => {
          const target = chromiumTarget(rules, url);
          if (target === null || !target.startsWith('https:')) return;
          expect(policy.allows(target), `${from} → ${to}: ${url} → ${target}`).toBe(true);
        }),
        { numRuns: 300, seed: 37 },
      );
    }
  });
});
