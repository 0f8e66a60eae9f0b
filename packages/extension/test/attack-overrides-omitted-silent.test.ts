import { createEngine, type Ruleset } from '@httpsify/engine';
import { DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { describe, expect, it } from 'vitest';
import { decide } from '../src/decision/decide.js';
import { syncOverrides } from '../src/dnr/override-rules.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { RuleStores } from './support/rule-stores.js';
import { decisionState } from './support/decision-state.js';

const PAGE = 'chrome-extension://ext/ui/handoff.html';

/**
 * Attack: a default-off ruleset switched on is compiled into the regex rules the other layers
 * leave free. With none left (a library and user rules took them), its regex rules are omitted,
 * and nothing else stands for them: the handoff covers only rulesets switched *off* (and the
 * build's scope only default rulesets that compiled in part), the writer sees a layer that
 * fits, and `syncOverrides`' `omitted` count is read by no one. decide() rewrites the page by
 * the ruleset; the browser does not, and no refusal, no notice says so.
 */
describe('attack: a switched-on ruleset without regex room is dropped silently', () => {
  it.each([
    [1_000, 'no room at all: refused and reported'],
    [999, 'room for the handoff only: its page loads go to the rulesets'],
  ])(
    "sends the ruleset's page where decide() does, or reports a refusal (%i taken: %s)",
    async (taken) => {
      const rs = parseRulesetXml(
        '<ruleset name="Moved" default_off="slow"><target host="moved.test"/><rule from="^http://moved\\.test/old/([^/?]+)" to="https://moved.test/new/$1"/></ruleset>',
        'm.xml',
      ).ruleset as Ruleset;
      const engine = createEngine([rs]);
      const stores = new RuleStores();
      const writer = new RuleWriter(stores);
      // An imported library and the user's own rules hold every regex rule.
      await writer.setLayer(
        'channels',
        Array.from({ length: taken }, (_, i) => ({
          priority: 20_000,
          action: { type: 'upgradeScheme' as const },
          condition: {
            regexFilter: `^http://f${i}\\.lib\\.test/`,
            resourceTypes: ['main_frame' as const],
          },
        })),
      );
      engine.setActive('Moved', true);
      // A refusal rejects (the controller reports it on the options page instead of failing).
      const written = await syncOverrides(writer, engine, PAGE).catch(() => ({ omitted: -1 }));
      const refused = writer.refusals().length > 0;

      const url = 'http://moved.test/old/page';
      const state = decisionState({
        httpsFirst: false,
        rewrite: (u) => ({ rewritten: engine.rewrite(u), ruleset: 'Moved' }),
      });
      expect(decide({ url, kind: 'navigation', tab: { tabId: 1 }, state })).toMatchObject({
        action: 'upgrade',
        url: 'https://moved.test/new/page',
      });
      const to = new DnrEmulator(stores.dynamic as DnrRule[]).match({
        url,
        type: 'main_frame',
      }).redirectUrl;
      // The page is rewritten or handed to the page that asks decide(); else the user is told.
      const followed = to === 'https://moved.test/new/page' || to?.startsWith(PAGE) === true;
      expect({ followed, refused, omitted: written.omitted }).not.toMatchObject({
        followed: false,
        refused: false,
      });
      // With room for one rule, the page follows decide() and the cut is still reported.
      if (taken < 1_000) expect({ followed, refused }).toEqual({ followed: true, refused: true });
    },
  );
});
