import { describe, expect, it } from 'vitest';
import { createEngine, type Ruleset } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import {
  createCookieHandler,
  securedCookie,
  type CookieLike,
  type CookieSetDetails,
} from '../src/cookies/secure-cookies.js';

function ruleset(xml: string): Ruleset {
  const { ruleset } = parseRulesetXml(xml, 'cookie.xml');
  if (!ruleset) throw new Error('bad test ruleset');
  return ruleset;
}

const engine = createEngine([
  ruleset(`<ruleset name="Shop"><target host="shop.example"/><target host="*.shop.example"/>
    <securecookie host="^(?:.*\\.)?shop\\.example$" name="^(?!tracking$).+"/>
    <rule from="^http:" to="https:"/></ruleset>`),
  ruleset(`<ruleset name="Off" default_off="x"><target host="off.example"/>
    <securecookie host=".+" name=".+"/><rule from="^http:" to="https:"/></ruleset>`),
]);

const cookie = (over: Partial<CookieLike>): CookieLike => ({
  name: 'sid',
  value: 'v',
  domain: 'shop.example',
  hostOnly: true,
  path: '/',
  secure: false,
  httpOnly: true,
  sameSite: 'lax',
  storeId: '0',
  ...over,
});

function harness(blocked: string[] = []) {
  const set: CookieSetDetails[] = [];
  const handle = createCookieHandler({
    shouldSecure: (c) => engine.shouldSecureCookie(c),
    isHostBlocked: (h) => blocked.includes(h.replace(/^\./, '')),
    set: async (d) => void set.push(d),
  });
  return { set, handle };
}

describe('secure cookies', () => {
  it('re-sets a covered cookie with Secure, keeping it host-only and a session cookie', async () => {
    const { set, handle } = harness();
    expect(await handle({ removed: false, cookie: cookie({}) })).toBe(true);
    expect(set).toEqual([
      {
        url: 'https://shop.example/',
        name: 'sid',
        value: 'v',
        path: '/',
        secure: true,
        httpOnly: true,
        storeId: '0',
        sameSite: 'lax',
      },
    ]);
  });

  it('keeps a domain cookie a domain cookie, with its expiry', () => {
    expect(
      securedCookie(
        cookie({
          domain: '.shop.example',
          hostOnly: false,
          path: '/a',
          expirationDate: 2e9,
          sameSite: 'unspecified',
        }),
      ),
    ).toEqual({
      url: 'https://shop.example/a',
      name: 'sid',
      value: 'v',
      path: '/a',
      secure: true,
      httpOnly: true,
      storeId: '0',
      domain: '.shop.example',
      expirationDate: 2e9,
    });
  });

  it('leaves alone what the rulesets do not cover', async () => {
    const { set, handle } = harness(['blocked.shop.example']);
    expect(await handle({ removed: false, cookie: cookie({ name: 'tracking' }) })).toBe(false);
    expect(await handle({ removed: false, cookie: cookie({ domain: 'other.example' }) })).toBe(
      false,
    );
    expect(await handle({ removed: false, cookie: cookie({ domain: 'off.example' }) })).toBe(false);
    expect(
      await handle({ removed: false, cookie: cookie({ domain: 'blocked.shop.example' }) }),
    ).toBe(false);
    expect(await handle({ removed: true, cookie: cookie({}) })).toBe(false);
    // Our own re-set comes back with secure: true and stops there.
    expect(await handle({ removed: false, cookie: cookie({ secure: true }) })).toBe(false);
    expect(set).toEqual([]);
  });
});
