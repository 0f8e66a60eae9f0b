import { compileBundle, createEngine } from '@httpsify/engine';
import { DNR_LIMITS, type DnrRule } from '@httpsify/engine/dnr';
import { channelBinding } from '@httpsify/engine/channels';
import { describe, expect, it } from 'vitest';
import type { DnrApi } from '../src/dnr/dnr-api.js';
import {
  CHANNEL_DNR_STATE_KEY,
  ChannelDnrRuntime,
} from '../src/dnr-runtime/channel-dnr-runtime.js';
import { CHANNEL_RULE_ID_BASE, UI_RULE_ID_BASE } from '../src/dnr/layout.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { buildChannelLayers } from '../src/channels/channel-layers.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { rulesetsOf } from './support/channels.js';

/** declarativeNetRequest with Chromium's all-or-nothing updates and its dynamic rule limit. */
class FakeDnr implements DnrApi {
  dynamic: DnrRule[] = [];
  enabled = new Set(['default']);
  updates = 0;
  async getDynamicRules() {
    return structuredClone(this.dynamic);
  }
  async getSessionRules() {
    return [];
  }
  async updateSessionRules() {}
  async getEnabledRulesets() {
    return [...this.enabled];
  }
  async updateDynamicRules({
    removeRuleIds,
    addRules,
  }: {
    removeRuleIds: number[];
    addRules: DnrRule[];
  }) {
    const next = [...this.dynamic.filter((r) => !removeRuleIds.includes(r.id)), ...addRules];
    if (new Set(next.map((r) => r.id)).size !== next.length)
      throw new Error('Rule with id 1 does not have a unique ID');
    if (next.length > DNR_LIMITS.dynamicRules) throw new Error('Dynamic rule count exceeded');
    this.dynamic = next;
    this.updates++;
  }
  async updateEnabledRulesets({
    enableRulesetIds = [],
    disableRulesetIds = [],
  }: {
    enableRulesetIds?: string[];
    disableRulesetIds?: string[];
  }) {
    for (const id of enableRulesetIds) this.enabled.add(id);
    for (const id of disableRulesetIds) this.enabled.delete(id);
  }
}

const KEY = { kty: 'RSA', n: '_'.repeat(512), e: 'AQAB' };
const defaults = createEngine(
  rulesetsOf(
    '<ruleset name="D"><target host="d.test"/><rule from="^http:" to="https:"/></ruleset>',
  ),
);
function layers(
  timestamp: number,
  hosts: string[],
  extra: { scope?: string; replacesDefaults?: boolean } = {},
) {
  const xml = hosts.map(
    (h, i) =>
      `<ruleset name="R${i}"><target host="${h}"/><rule from="^http://${h.replace(/\./g, '\\.')}/a" to="https://${h}/b"/></ruleset>`,
  );
  const bundle = compileBundle(rulesetsOf(...xml), { timestamp });
  const channel = {
    name: 'C',
    urlPrefix: 'https://c.test/',
    rootKey: KEY,
    scope: extra.scope ?? '^https?://([^/]*\\.)?example\\.org[:/]',
    destinations: [],
    minTimestamp: 0,
    maxAgeDays: 30,
    minKeyVersion: 1,
    replacesDefaults: extra.replacesDefaults ?? false,
  };
  return buildChannelLayers(
    [
      {
        channel,
        installed: {
          timestamp,
          bundle,
          rulesetCount: hosts.length,
          installedAt: 0,
          keyVersion: 1,
          verifiedFor: channelBinding(channel),
        },
      },
    ],
    defaults,
  );
}

/** Compiled regex redirects bring one `allow` for URLs with credentials (see compileDnr). */
const notCredentialsAllow = (r: DnrRule) => r.condition.regexFilter !== '^http://[^/?#]*@';

describe('Chromium: channel rules in the dynamic rules', () => {
  it('adds the rules in the channel range next to the other rules, and skips work when nothing changed', async () => {
    const dnr = new FakeDnr();
    dnr.dynamic = [
      { id: 1, priority: 5, action: { type: 'allow' }, condition: { urlFilter: '|http://x/' } },
      {
        id: UI_RULE_ID_BASE,
        priority: 2,
        action: { type: 'allow' },
        condition: { urlFilter: '|http://y/' },
      },
    ];
    const runtime = new ChannelDnrRuntime(new RuleWriter(dnr), dnr, new MemoryStorageArea());
    const state = await runtime.sync(layers(10, ['a.example.org', 'b.example.org']), false);
    expect(state.problems).toEqual({});
    const ours = dnr.dynamic.filter(
      (r) => r.id >= CHANNEL_RULE_ID_BASE && r.id < UI_RULE_ID_BASE && notCredentialsAllow(r),
    );
    expect(ours.length).toBe(2);
    expect(dnr.dynamic.length).toBe(5);
    const updates = dnr.updates;
    await runtime.sync(layers(10, ['a.example.org', 'b.example.org']), false);
    expect(dnr.updates).toBe(updates);
  });

  it('keeps the previous version when the new one does not fit, and reports it', async () => {
    const dnr = new FakeDnr();
    const area = new MemoryStorageArea();
    const writer = new RuleWriter(dnr);
    const runtime = new ChannelDnrRuntime(writer, dnr, area);
    await runtime.sync(layers(10, ['a.example.org']), false);
    // Another layer fills the dynamic rules up so the 3-rule version cannot fit.
    const filler = Array.from({ length: DNR_LIMITS.dynamicRules - 2 }, (_, i) => ({
      priority: 1,
      action: { type: 'allow' as const },
      condition: { urlFilter: `|http://f${i}/` },
    }));
    await writer.setLayer('overrides', filler);
    const state = await runtime.sync(
      layers(20, ['a.example.org', 'b.example.org', 'c.example.org']),
      false,
    );
    expect(state.problems.C).toContain('do not fit');
    expect(state.applied.C?.timestamp).toBe(10);
    const ours = dnr.dynamic.filter(
      (r) => r.id >= CHANNEL_RULE_ID_BASE && r.id < UI_RULE_ID_BASE && notCredentialsAllow(r),
    );
    // Only version 10's single rule, nothing of version 20.
    expect(ours).toHaveLength(1);
    expect(JSON.stringify(ours[0]!.condition)).toContain('a\\\\.example');
    expect(JSON.stringify(dnr.dynamic)).not.toContain('c\\\\.example');
    expect(
      (area.data.get(CHANNEL_DNR_STATE_KEY) as { problems: Record<string, string> }).problems.C,
    ).toContain('version 10');
  });

  it('turns the static ruleset off for a replacing channel, and on again without it', async () => {
    const dnr = new FakeDnr();
    const runtime = new ChannelDnrRuntime(new RuleWriter(dnr), dnr, new MemoryStorageArea());
    const state = await runtime.sync(
      layers(10, ['a.example.org'], { replacesDefaults: true }),
      false,
    );
    expect(state.defaultsDisabled).toBe(true);
    expect(dnr.enabled.has('default')).toBe(false);
    await runtime.sync(buildChannelLayers([], defaults), false);
    expect(dnr.enabled.has('default')).toBe(true);
    expect(dnr.dynamic).toEqual([]);
  });

  it('a scope Chromium cannot enforce applies nothing and says why', async () => {
    const dnr = new FakeDnr();
    const state = await new ChannelDnrRuntime(
      new RuleWriter(dnr),
      dnr,
      new MemoryStorageArea(),
    ).sync(layers(10, ['a.example.org'], { scope: '^http://a\\.example\\.org/only/' }), false);
    expect(state.problems.C).toContain('not paths');
    expect(dnr.dynamic).toEqual([]);
  });
});
