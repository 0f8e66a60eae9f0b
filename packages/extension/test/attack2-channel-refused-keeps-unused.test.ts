import { compileBundle, createEngine } from '@httpsify/engine';
import { type DnrRule } from '@httpsify/engine/dnr';
import { channelBinding, type ChannelRecord } from '@httpsify/engine/channels';
import { describe, expect, it } from 'vitest';
import type { DnrApi } from '../src/dnr/dnr-api.js';
import { ChannelDnrRuntime } from '../src/dnr-runtime/channel-dnr-runtime.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { RUNTIME_LIMITS } from '../src/dnr/rules.js';
import { buildChannelLayers } from '../src/channels/channel-layers.js';
import { loopAllowRules } from '../src/https-first/loop-rules.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { rulesetsOf } from './support/channels.js';

/** declarativeNetRequest: both stores, all or nothing per update. */
class FakeDnr implements DnrApi {
  dynamic: DnrRule[] = [];
  session: DnrRule[] = [];
  async getDynamicRules() {
    return structuredClone(this.dynamic);
  }
  async getSessionRules() {
    return structuredClone(this.session);
  }
  async updateDynamicRules(u: { removeRuleIds: number[]; addRules: DnrRule[] }) {
    this.dynamic = [...this.dynamic.filter((r) => !u.removeRuleIds.includes(r.id)), ...u.addRules];
  }
  async updateSessionRules(u: { removeRuleIds: number[]; addRules: DnrRule[] }) {
    this.session = [...this.session.filter((r) => !u.removeRuleIds.includes(r.id)), ...u.addRules];
  }
  async getEnabledRulesets() {
    return ['default'];
  }
  async updateEnabledRulesets() {}
}

const KEY = { kty: 'RSA', n: '_'.repeat(512), e: 'AQAB' };
const defaults = createEngine(
  rulesetsOf(
    '<ruleset name="D"><target host="d.test"/><rule from="^http:" to="https:"/></ruleset>',
  ),
);

/** A channel over `zone` whose bundle sends each host's /a to another host (regex rules). */
function record(name: string, zone: string, hosts: string[], timestamp: number, damaged = false) {
  const xml = hosts.map(
    (h, i) =>
      `<ruleset name="${name}${i}"><target host="${h}"/><rule from="^http://${h.replace(/\./g, '\\.')}/a" to="https://cdn.${h}/b"/></ruleset>`,
  );
  const bundle = compileBundle(rulesetsOf(...xml), { timestamp });
  const channel = {
    name,
    urlPrefix: `https://${name}.test/`,
    rootKey: KEY,
    scope: `^https?://([^/]*\\.)?${zone.replace(/\./g, '\\.')}[:/]`,
    destinations: [],
    minTimestamp: 0,
    maxAgeDays: 30,
    minKeyVersion: 1,
    replacesDefaults: false,
  };
  return {
    channel,
    installed: {
      timestamp,
      // Storage damage: the saved bundle lost its tail.
      bundle: damaged ? bundle.subarray(0, bundle.length - 40) : bundle,
      rulesetCount: hosts.length,
      installedAt: 0,
      keyVersion: 1,
      verifiedFor: channelBinding(channel),
    },
  } as ChannelRecord;
}

const regexCount = (rules: readonly DnrRule[]) =>
  rules.filter((r) => r.condition.regexFilter !== undefined).length;

/**
 * Attack (C x B): a channel whose stored bundle is damaged is "not in use" and decide() no longer
 * applies it, yet Chromium keeps enforcing its redirects. channel-dnr-runtime.ts says a refused
 * channels layer keeps "only the rules it held that this plan still asks for ... so a channel
 * removed or narrowed is never enforced still"; the writer (rule-writer.ts fit/afterRefusal)
 * keeps every old non-allow rule of the layer instead. The refusal is easy to bring about: the
 * plan is made against the regex room of the moment, and a page's subresource loops (session
 * regex rules, a budget both stores share) can take that room before the plan is written.
 */
describe('attack: a channel not in use stays enforced after a refused channels layer', () => {
  it('removes every rule of the damaged channel B from the browser', async () => {
    const good10 = record('A', 'a.example.org', ['x.a.example.org'], 10);
    const good20 = record(
      'A',
      'a.example.org',
      ['x.a.example.org', 'y.a.example.org', 'z.a.example.org'],
      20,
    );
    const bGood = record('B', 'b.example.org', ['v.b.example.org'], 10);
    const bDamaged = record('B', 'b.example.org', ['v.b.example.org'], 10, true);

    // How many regex rules A's version 20 alone needs (a dry run on a browser of its own).
    const dry = new FakeDnr();
    await new ChannelDnrRuntime(new RuleWriter(dry), dry, new MemoryStorageArea()).sync(
      buildChannelLayers([good20], defaults),
      false,
    );
    const a20 = regexCount(dry.dynamic);
    expect(a20).toBeGreaterThan(0);

    const limits = { ...RUNTIME_LIMITS };
    const dnr = new FakeDnr();
    const writer = new RuleWriter(dnr, limits);
    const loops = 10;
    let pageLooped = false;
    const runtime = new ChannelDnrRuntime(writer, dnr, new MemoryStorageArea(), null, async () => {
      // While the new plan's regexes are asked about, a page's subresources loop in a tab.
      if (!pageLooped) {
        pageLooped = true;
        const verdicts = Array.from({ length: loops }, (_, i) => ({
          kind: 'subresource' as const,
          tabId: 7,
          url: `http://loop.test/${i}`,
        }));
        await writer.setLayer('loops', loopAllowRules(verdicts));
      }
      return true;
    });

    // Both channels in use: both enforced.
    await runtime.sync(buildChannelLayers([good10, bGood], defaults), false);
    expect(JSON.stringify(dnr.dynamic)).toContain('cdn.v.b.example.org');

    // Room for A's version 20 alone, not beside the page's loop verdicts as well.
    limits.regexRules = a20 + loops - 1;

    // B's stored bundle is damaged: not in use; A moves to version 20.
    const layers = buildChannelLayers([good20, bDamaged], defaults);
    expect(layers.problems.get('B')).toContain('not used');
    expect(layers.scoped.rewrite('http://v.b.example.org/a')).toBeNull();
    await runtime.sync(layers, false);
    expect(pageLooped).toBe(true);

    // decide() rewrites nothing of B's; neither may the browser.
    const bRules = dnr.dynamic.filter((r) => JSON.stringify(r).includes('v\\\\.b\\\\.example'));
    expect(bRules.map((r) => r.action)).toEqual([]);
  });
});
