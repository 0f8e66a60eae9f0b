import { createEngine, type Ruleset } from '@httpsify/engine';
import { DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import { decide } from '../src/decision/decide.js';
import { type ProtectionSnapshot, snapshotState } from '../src/decision/snapshot.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { RUNTIME_LIMITS } from '../src/dnr/rules.js';
import {
  settingsReserve,
  syncSettingsRules,
  USER_RULES_LEFT_OUT,
} from '../src/dnr/settings-rules.js';
import { LOOP_RULES_MAX } from '../src/https-first/loop-guard.js';
import { RuleStores } from './support/rule-stores.js';

const HANDOFF = 'chrome-extension://ext/handoff.html';
const parse = (xml: string, file: string) => parseRulesetXml(xml, file).ruleset as Ruleset;

/** The user's rulesets: many path rewrites (one regex rule each), and one with wildcard hosts. */
function userRulesets(): Ruleset[] {
  const rewrites = Array.from({ length: RUNTIME_LIMITS.regexRules }, (_, i) =>
    parse(
      `<ruleset name="Mine ${i}"><target host="u${i}.mine.test"/><rule from="^http://u${i}\\.mine\\.test/([^/?]+)/old" to="https://u${i}.mine.test/new/$1"/></ruleset>`,
      `mine${i}.xml`,
    ),
  );
  const shops = parse(
    '<ruleset name="My shops"><target host="www.shop.*"/><rule from="^http:" to="https:"/></ruleset>',
    'shops.xml',
  );
  return [...rewrites, shops];
}

function snapshot(user: Ruleset[]): ProtectionSnapshot {
  const none = { matchUrl: () => null, matchHost: () => null };
  const engine = createEngine(user);
  return {
    globalEnabled: true,
    httpsFirst: true,
    disabled: none,
    httpAllowed: none,
    httpOnce: new Set(),
    httpOnceInTabs: new Map(),
    userRules: engine,
    rulesets: { rewrite: () => ({ rewritten: null, ruleset: null }), excludedBy: () => null },
    loopVerdict: () => false,
    dnr: { disabledSites: [], httpAllowedSites: [], activeUserRulesets: user },
  };
}

/**
 * Attack (a): the settings fallback "without the user's rules" sends their page loads to the
 * handoff page (domains and wildcard patterns alike) but upgrades their subresources with one
 * upgradeScheme over `requestDomains: scope.domains` only. A wildcard target (`www.shop.*`) is
 * a pattern, not a domain: what its pages and other pages load from it stays on HTTP, while
 * decide() upgrades it (user rule, step 5). The comment promises "never laxer than decide()".
 */
describe("attack: the user's wildcard hosts' subresources in the settings fallback", () => {
  it('upgrades an image from a wildcard target host, as decide() does', async () => {
    const stores = new RuleStores();
    const loops = { rules: LOOP_RULES_MAX, regexRules: LOOP_RULES_MAX, unsafeRules: 0 };
    const writer = new RuleWriter(stores, RUNTIME_LIMITS, {
      reserves: { settings: settingsReserve(), loops },
    });
    const snap = snapshot(userRulesets());
    await syncSettingsRules(writer, snap, 'ext', HANDOFF).catch(() => null);
    // The user's rules do not fit (1,000 regex rules): the fallback without them is in force.
    expect(writer.problem('settings')).toContain(USER_RULES_LEFT_OUT);
    const browser = new DnrEmulator(stores.dynamic as DnrRule[]);
    // Their pages go to the handoff page (it asks decide())…
    const page = browser.match({ url: 'http://www.shop.de/', type: 'main_frame', tabId: 1 });
    expect(page.redirectUrl).toBe(`${HANDOFF}?http://www.shop.de/`);
    // …and a plain target's image is upgraded by the coarse rule…
    const plain = browser.match({
      url: 'http://u7.mine.test/a.png',
      type: 'image',
      tabId: 1,
      initiator: 'https://news.test',
      frames: [{ url: 'https://news.test/', type: 'main_frame' }],
    });
    expect(plain.redirectUrl).toBe('https://u7.mine.test/a.png');
    // …but the wildcard target's image stays on HTTP; decide() upgrades it to https://.
    const decided = decide({
      url: 'http://www.shop.de/cart.png',
      kind: 'subresource',
      tab: { tabId: 1, topUrl: 'https://news.test/' },
      state: snapshotState(snap),
    });
    expect(decided).toMatchObject({ action: 'upgrade', reason: 'user-rule' });
    const image = browser.match({
      url: 'http://www.shop.de/cart.png',
      type: 'image',
      tabId: 1,
      initiator: 'https://news.test',
      frames: [{ url: 'https://news.test/', type: 'main_frame' }],
    });
    expect(image.redirectUrl).toBe('https://www.shop.de/cart.png');
  });
});
