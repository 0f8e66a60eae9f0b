import { createEngine, type Ruleset } from '@httpsify/engine';
import { DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import { decide } from '../src/decision/decide.js';
import type { ProtectionSnapshot } from '../src/decision/snapshot.js';
import { snapshotState } from '../src/decision/snapshot.js';
import { syncOverrides } from '../src/dnr/override-rules.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { usageOf } from '../src/dnr/rules.js';
import { syncSettingsRules } from '../src/dnr/settings-rules.js';
import { RuleStores } from './support/rule-stores.js';

const parse = (xml: string) => parseRulesetXml(xml, 'r.xml').ruleset as Ruleset;
const PAGE = 'chrome-extension://ext/ui/handoff.html';

/**
 * Attack: under regex pressure the overrides layer, refused with its fallback too, keeps "the
 * rules still asked for". That subset is not stricter than what was asked: a switched-off
 * ruleset's `allow` shadow (above HTTPS-first and every ruleset) is kept unchanged, while its
 * handoff redirect, whose domain list changed when a second ruleset was switched off, is
 * dropped. decide() upgrades the first ruleset's page by HTTPS-first; the browser's rules let
 * it load over HTTP.
 */
describe('attack: a refused overrides layer keeps a shadow without its handoff', () => {
  it('sends a switched-off ruleset\u2019s page where decide() does', async () => {
    const a = parse(
      '<ruleset name="A"><target host="a.test"/><rule from="^http:" to="https:"/></ruleset>',
    );
    // Right-wildcard targets need a regex rule each in the handoff: its fallback grows too.
    const b = parse(
      '<ruleset name="B"><target host="b.test"/><target host="www.b.*"/><target host="www.c.*"/><rule from="^http:" to="https:"/></ruleset>',
    );
    const engine = createEngine([a, b]);
    const stores = new RuleStores();
    const writer = new RuleWriter(stores);
    const none = { matchUrl: () => null, matchHost: () => null };
    const snap: ProtectionSnapshot = {
      globalEnabled: true,
      httpsFirst: true,
      disabled: none,
      httpAllowed: none,
      httpOnce: new Set(),
      httpOnceInTabs: new Map(),
      userRules: null,
      rulesets: {
        rewrite: (url) => ({ rewritten: engine.rewrite(url), ruleset: null }),
        excludedBy: () => null,
      },
      loopVerdict: () => false,
      dnr: { disabledSites: [], httpAllowedSites: [], activeUserRulesets: [] },
    };
    await syncSettingsRules(writer, snap, 'ext');
    // An imported library holds every regex rule Chromium allows but two.
    const used = usageOf(stores.dynamic).regexRules;
    await writer.setLayer(
      'channels',
      Array.from({ length: 1_000 - used - 2 }, (_, i) => ({
        priority: 20_000,
        action: { type: 'upgradeScheme' as const },
        condition: {
          regexFilter: `^http://f${i}\\.lib\\.test/`,
          resourceTypes: ['main_frame' as const],
        },
      })),
    );
    engine.setActive('A', false);
    await syncOverrides(writer, engine, PAGE);
    engine.setActive('B', false);
    await syncOverrides(writer, engine, PAGE).catch(() => undefined);

    const url = 'http://a.test/page';
    const expected = decide({
      url,
      kind: 'navigation',
      tab: { tabId: 1 },
      state: snapshotState(snap),
    });
    expect(expected).toMatchObject({ action: 'upgrade', url: 'https://a.test/page' });
    // The browser: the rules written, A's page load. Either upgraded or sent to the handoff page
    // (which asks decide()); never left on HTTP.
    const outcome = new DnrEmulator(stores.dynamic as DnrRule[]).match({ url, type: 'main_frame' });
    expect(outcome.redirectUrl).not.toBeNull();
  });
});
