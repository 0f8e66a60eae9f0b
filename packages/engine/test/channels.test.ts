import { describe, expect, it } from 'vitest';
import { compileBundle } from '../src/bundle/write.js';
import {
  ChannelError,
  checkPublicJwk,
  generateSigningKeyPair,
  gunzipLimited,
  gzipBytes,
  parseAdvertisedTimestamp,
  parseChannelDefinition,
  ScopedEngine,
  scopedEngineFromChannels,
  secondsUntilChannelCheck,
  secondsUntilNextCheck,
  selectActiveChannels,
  signBytes,
  verifySignature,
  channelFileUrl,
  type ChannelRecord,
} from '../src/channels/index.js';
import { loadBundle } from '../src/match/engine.js';
import type { Ruleset } from '../src/model/ruleset.js';

function ruleset(name: string, host: string, from = '^http:', to = 'https:'): Ruleset {
  return { name, targets: [{ host }], rules: [{ from, to }], exclusions: [], secureCookies: [], tests: [] };
}

const key = await generateSigningKeyPair(2048);
const definition = { name: 'Onion', urlPrefix: 'https://rules.example/v2/', publicKey: key.publicKey, scope: '^https?://[a-z0-9-]+\\.securedrop\\.tor\\.onion/', replacesDefaults: false };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof ChannelError ? err.code : `not a ChannelError: ${String(err)}`;
  }
  return undefined;
}

describe('parseChannelDefinition', () => {
  it('accepts a complete definition and defaults scope and replacesDefaults', () => {
    expect(parseChannelDefinition(definition)).toEqual({ ...definition, publicKey: { kty: 'RSA', n: key.publicKey.n, e: key.publicKey.e } });
    const { scope: _s, replacesDefaults: _r, ...minimal } = definition;
    expect(parseChannelDefinition(minimal)).toMatchObject({ scope: '', replacesDefaults: false });
  });

  it.each([
    ['not an object', 'channel'],
    ['unknown field', { ...definition, replaceDefaults: true }],
    ['empty name', { ...definition, name: ' ' }],
    ['http prefix', { ...definition, urlPrefix: 'http://rules.example/' }],
    ['relative prefix', { ...definition, urlPrefix: '/rules/' }],
    ['prefix with query', { ...definition, urlPrefix: 'https://rules.example/?a=1' }],
    ['bad scope', { ...definition, scope: '(' }],
    ['non-boolean replacesDefaults', { ...definition, replacesDefaults: 'yes' }],
    ['missing key', { ...definition, publicKey: undefined }],
    ['private key', { ...definition, publicKey: key.privateKey }],
    ['EC key', { ...definition, publicKey: { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' } }],
    ['short modulus', { ...definition, publicKey: { kty: 'RSA', n: 'AQAB'.repeat(20), e: 'AQAB' } }],
    ['wrong alg', { ...definition, publicKey: { ...key.publicKey, alg: 'RS256' } }],
  ])('refuses %s with a message naming the problem', (_what, value) => {
    expect(codeOf(() => parseChannelDefinition(value, 'chan.json'))).toBe('invalid-definition');
    expect(() => parseChannelDefinition(value, 'chan.json')).toThrow(/^chan\.json: /);
  });
});

describe('advertised timestamps', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  it('accepts decimal seconds with an optional newline', () => {
    expect(parseAdvertisedTimestamp(enc('1700000000'))).toBe(1_700_000_000);
    expect(parseAdvertisedTimestamp(enc('1700000000\n'))).toBe(1_700_000_000);
    expect(parseAdvertisedTimestamp(enc('1700000000\r\n'))).toBe(1_700_000_000);
  });
  it.each(['', '\n', '0', ' 1700000000', '1700000000 ', '1e9', '0x10', '17000000000000'])('refuses %j', (text) => {
    expect(codeOf(() => parseAdvertisedTimestamp(enc(text)))).toBe('invalid-timestamp');
  });
});

describe('layout', () => {
  it('joins prefixes with exactly one slash', () => {
    expect(channelFileUrl('https://a.example/v1/', 'latest-timestamp')).toBe('https://a.example/v1/latest-timestamp');
    expect(channelFileUrl('https://a.example/v1', 'latest-timestamp')).toBe('https://a.example/v1/latest-timestamp');
  });
});

describe('signatures', () => {
  const data = new TextEncoder().encode('exact bytes');
  it('verifies a signature made with the matching private key, and only over the same bytes', async () => {
    const sig = await signBytes(key.privateKey, data);
    expect(sig.byteLength).toBe(256);
    await expect(verifySignature(key.publicKey, sig, data)).resolves.toBeUndefined();
    const changed = data.slice();
    changed[0] = (changed[0] as number) ^ 1;
    await expect(verifySignature(key.publicKey, sig, changed)).rejects.toMatchObject({ code: 'bad-signature' });
    await expect(verifySignature(key.publicKey, sig.subarray(1), data)).rejects.toMatchObject({ code: 'bad-signature' });
  });
  it('refuses to sign with a public key', async () => {
    await expect(signBytes(key.publicKey, data)).rejects.toMatchObject({ code: 'invalid-key' });
  });
  it('generates 4096-bit PS256 keys by default', async () => {
    const pair = await generateSigningKeyPair();
    expect(checkPublicJwk(pair.publicKey).n?.length).toBe(683); // ceil(512 * 8 / 6)
    expect(pair.publicKey.alg).toBe('PS256');
    expect(pair.privateKey.d).toBeTypeOf('string');
  });
});

describe('gzip', () => {
  it('round-trips and refuses output above the limit or malformed input', async () => {
    const bytes = new Uint8Array(100_000).map((_, i) => i % 7);
    const gz = await gzipBytes(bytes);
    expect(gz.byteLength).toBeLessThan(bytes.byteLength);
    expect(await gunzipLimited(gz, bytes.byteLength)).toEqual(bytes);
    await expect(gunzipLimited(gz, bytes.byteLength - 1)).rejects.toMatchObject({ code: 'too-large' });
    await expect(gunzipLimited(gz.subarray(0, gz.length - 4), 1e6)).rejects.toMatchObject({ code: 'corrupt-bundle' });
    await expect(gunzipLimited(bytes, 1e6)).rejects.toMatchObject({ code: 'corrupt-bundle' });
  });
});

describe('schedule', () => {
  it('is due immediately when never checked, after a day otherwise, with catch-up', () => {
    expect(secondsUntilNextCheck(undefined, 1000)).toBe(0);
    expect(secondsUntilNextCheck(1000, 1000)).toBe(86400);
    expect(secondsUntilNextCheck(1000, 1000 + 86000)).toBe(400);
    expect(secondsUntilNextCheck(1000, 1000 + 5 * 86400)).toBe(0);
    // Clock went backwards: check now rather than wait for a day that may never come.
    expect(secondsUntilNextCheck(5000, 1000)).toBe(0);
  });
  it('retries a failed check after an hour', () => {
    expect(secondsUntilChannelCheck({ at: 1000, result: 'failed' }, 1000)).toBe(3600);
    expect(secondsUntilChannelCheck({ at: 1000, result: 'current' }, 1000)).toBe(86400);
    expect(secondsUntilChannelCheck(undefined, 1000)).toBe(0);
  });
});

describe('scoped rewriting', () => {
  const defaults = loadBundle(compileBundle([ruleset('Default Example', 'example.com')]));
  const channelBundle = compileBundle([ruleset('Onion', '*.securedrop.tor.onion'), ruleset('Channel Example', 'example.com', '^http://example\\.com/', 'https://channel.example.com/')], { timestamp: 1_700_000_000 });
  const record = (name: string, scope: string, replacesDefaults = false, timestamp = 1_700_000_000): ChannelRecord => ({
    channel: { ...definition, name, scope, replacesDefaults },
    installed: { timestamp, bundle: channelBundle, rulesetCount: 2, installedAt: 0 },
  });

  it('consults a channel only for URLs in its scope', () => {
    const engine = scopedEngineFromChannels(selectActiveChannels([record('Onion', definition.scope)]), defaults);
    expect(engine.rewriteWithRuleset('http://news.securedrop.tor.onion/')).toEqual({ rewritten: 'https://news.securedrop.tor.onion/', ruleset: 'Onion', channel: 'Onion' });
    // The channel also has an example.com ruleset, but example.com is outside its scope.
    expect(engine.rewriteWithRuleset('http://example.com/')).toEqual({ rewritten: 'https://example.com/', ruleset: 'Default Example', channel: null });
    expect(engine.layersFor('http://example.com/').map((l) => l.channel)).toEqual([null]);
  });

  it('lets an in-scope channel take precedence over the defaults', () => {
    const engine = scopedEngineFromChannels(selectActiveChannels([record('Everything', '')]), defaults);
    expect(engine.rewriteWithRuleset('http://example.com/')).toEqual({ rewritten: 'https://channel.example.com/', ruleset: 'Channel Example', channel: 'Everything' });
  });

  it('drops the defaults only for a replacing channel not older than them', () => {
    const replacing = selectActiveChannels([record('Onion', definition.scope, true)], 1_600_000_000);
    expect(replacing.useDefaults).toBe(false);
    expect(scopedEngineFromChannels(replacing, defaults).rewrite('http://example.com/')).toBeNull();

    const stale = selectActiveChannels([record('Onion', definition.scope, true)], 1_800_000_000);
    expect(stale).toEqual({ channels: [], useDefaults: true });
    expect(scopedEngineFromChannels(stale, defaults).rewrite('http://example.com/')).toBe('https://example.com/');
  });

  it('reports invalid URLs instead of throwing', () => {
    const engine = new ScopedEngine([{ channel: null, scope: null, engine: defaults }]);
    expect(engine.rewriteWithRuleset('not a url')).toMatchObject({ rewritten: null, channel: null, error: expect.any(String) });
  });
});
