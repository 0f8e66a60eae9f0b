import { compileBundle, createEngine } from '@httpsify/engine';
import { channelBinding, type ChannelRecord } from '@httpsify/engine/channels';
import { describe, expect, it } from 'vitest';
import { buildChannelLayers } from '../src/channels/channel-layers.js';
import { rulesetsOf } from './support/channels.js';

const KEY = { kty: 'RSA', n: '_'.repeat(512), e: 'AQAB' };
const defaults = createEngine(rulesetsOf());

function record(installedAt: number, minTimestamp: number, keyVersion = 1, minKeyVersion = 1) {
  const bundle = compileBundle(
    rulesetsOf(
      '<ruleset name="Bad"><target host="shop.example.org"/><rule from="^http://shop\\.example\\.org/" to="https://pay.example.org/"/></ruleset>',
    ),
    { timestamp: installedAt },
  );
  const channel = {
    name: 'C',
    urlPrefix: 'https://c.test/',
    rootKey: KEY,
    scope: '^https?://([^/]*\\.)?example\\.org[:/]',
    destinations: [],
    minTimestamp,
    maxAgeDays: 30,
    minKeyVersion,
    replacesDefaults: false,
  };
  return {
    channel,
    installed: {
      timestamp: installedAt,
      bundle,
      rulesetCount: 1,
      installedAt: 0,
      keyVersion,
      verifiedFor: channelBinding(channel),
    },
  } as ChannelRecord;
}

/**
 * Attack (C): the definition's two ways of refusing old releases act differently on the one
 * already installed. Raising `minKeyVersion` past its key takes it out of use at once
 * (installedProblem: "revoked"); raising `minTimestamp` past its release ("releases older than
 * this are never installed", docs/update-channels.md) leaves it in use, in decide() and in the
 * Chromium rules, until a newer release installs: a mirror frozen on the old release keeps the
 * release the definition refuses in force indefinitely.
 */
describe('attack: an installed release older than the definition allows', () => {
  it('control: a revoked key takes the installed release out of use', () => {
    const layers = buildChannelLayers([record(100, 0, 1, 2)], defaults);
    expect(layers.channels.map((c) => c.name)).toEqual([]);
  });

  it('takes an installed release below minTimestamp out of use too', () => {
    const layers = buildChannelLayers([record(100, 200)], defaults);
    expect(layers.channels.map((c) => c.name)).toEqual([]);
    expect(layers.scoped.rewrite('http://shop.example.org/')).toBeNull();
  });
});
