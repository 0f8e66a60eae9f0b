import { createEngine, type Ruleset } from '@httpsify/engine';
import { DnrEmulator } from '@httpsify/engine/dnr';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import { decide } from '../src/decision/decide.js';
import type { ProtectionSnapshot } from '../src/decision/snapshot.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { RUNTIME_LIMITS } from '../src/dnr/rules.js';
import { syncSettingsRules, uiDnrRules } from '../src/dnr/settings-rules.js';
import { RuleStores } from './support/rule-stores.js';
import { decisionState } from './support/decision-state.js';

/** The user's own ruleset: forty hosts, each upgraded to its www host. */
function userRuleset(): Ruleset {
  const hosts = Array.from({ length: 40 }, (_, i) => `h${i}.user.test`);
  const xml = `<ruleset name="Mine">${hosts.map((h) => `<target host="${h}"/>`).join('')}${hosts
    .map((h) => `<rule from="^http://${h.replace(/\./g, '\\.')}/" to="https://www.${h}/"/>`)
    .join('')}</ruleset>`;
  return parseRulesetXml(xml, 'mine.xml').ruleset as Ruleset;
}

function snapshot(user: Ruleset[]): ProtectionSnapshot {
  const none = { matchUrl: () => null, matchHost: () => null };
  return {
    globalEnabled: true,
    httpsFirst: true,
    disabled: none,
    httpAllowed: none,
    httpOnce: new Set(),
    httpOnceInTabs: new Map(),
    userRules: null,
    rulesets: { rewrite: () => ({ rewritten: null, ruleset: null }), excludedBy: () => null },
    loopVerdict: () => false,
    dnr: { disabledSites: [], httpAllowedSites: [], activeUserRulesets: user },
  };
}

/**
 * Attack (B): the settings layer does not fit with the user's own rules (another layer took the
 * room), so it is written without them and their page loads go to the handoff page. Their
 * subresources go nowhere: decide() (step 5, user-rule) upgrades an image of the user's host,
 * the browser loads it over HTTP. rule-writer.ts: "a refusal may leave the browser stricter
 * than decide(), never laxer".
 */
describe("attack: the user's rules left out of the settings layer, and their subresources", () => {
  it('still upgrades a subresource of a host the user rule upgrades, as decide() does', async () => {
    const user = [userRuleset()];
    const without = uiDnrRules({
      globalEnabled: true,
      disabledSites: [],
      httpAllowedSites: [],
      httpOnceHosts: [],
      userRulesets: [],
      httpsFirst: true,
      extensionId: 'ext',
      handoffPage: 'chrome-extension://ext/handoff.html',
    }).rules.length;
    const stores = new RuleStores();
    const writer = new RuleWriter(stores, { ...RUNTIME_LIMITS, dynamicRules: without + 5 });
    await syncSettingsRules(writer, snapshot(user), 'ext', 'chrome-extension://ext/handoff.html')
      .then(() => null)
      .catch((e: unknown) => e);
    expect(writer.problem('settings')).toContain("the user's own rules");

    const url = 'http://h3.user.test/pixel.png';
    const engine = createEngine(user);
    const state = decisionState({
      userRewrite: (u) => {
        const rewritten = engine.rewrite(u);
        return rewritten === null ? null : { rewritten, ruleset: 'Mine' };
      },
    });
    const decision = decide({
      url,
      kind: 'subresource',
      tab: { tabId: 4, topUrl: 'http://page.test/' },
      state,
    });
    expect(decision).toMatchObject({
      action: 'upgrade',
      url: 'https://www.h3.user.test/pixel.png',
    });

    const browser = new DnrEmulator([...stores.dynamic, ...stores.session]).match({
      url,
      type: 'image',
      tabId: 4,
      initiator: 'http://page.test',
      frames: [{ url: 'http://page.test/', type: 'main_frame' }],
    });
    // The rules cannot be written, so their host changes cannot either: the browser must not
    // be laxer than decide() — the image leaves over HTTPS, on its own host.
    expect(browser.redirectUrl).toBe('https://h3.user.test/pixel.png');
  });
});
